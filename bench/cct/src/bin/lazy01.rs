//! CS/lazy01: ESBMC's `lazy01_bad.c` via SCTBench; PERIOD `evaluation/CS/lazy01/lazy01_bad.c`.
//! 4 tasks: main and three workers, created in the order t3, t2, t1 and joined t1, t2, t3; one
//! mutex. Bug: assertion. t1 does `data += 1`, t2 `data += 2`, t3 asserts `data < 3`, each in
//! one critical section: it fails when t3's section runs after both t1's and t2's.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static DATA: Shared<i32> = Shared::new(0);
static MUTEX: Mutex<()> = Mutex::new(());
static STACKS: [Stack<2048>; 3] = [const { Stack::new() }; 3];

fn thread1() {
    let g = MUTEX.lock();
    let d = DATA.read();
    DATA.write(d + 1);
    g.unlock();
}

fn thread2() {
    let g = MUTEX.lock();
    let d = DATA.read();
    DATA.write(d + 2);
    g.unlock();
}

fn thread3() {
    let g = MUTEX.lock();
    if DATA.read() >= 3 {
        panic!("data >= 3");
    }
    g.unlock();
}

fn main_task() {
    let h3 = spawn(&STACKS[0], thread3);
    let h2 = spawn(&STACKS[1], thread2);
    let h1 = spawn(&STACKS[2], thread1);
    h1.join();
    h2.join();
    h3.join();
}

firmware!(main_task);
