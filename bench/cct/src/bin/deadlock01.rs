//! CS/deadlock01: ESBMC's `deadlock01_bad.c` via SCTBench; PERIOD
//! `evaluation/CS/deadlock01/deadlock01_bad.c`. 3 tasks: main and two workers (created and
//! joined in order). Bug: deadlock. t1 locks `a` then `b` (`counter++` inside), t2 locks `b`
//! then `a` (`counter--`): it deadlocks when t1 holds `a` and t2 holds `b`.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static A: Mutex<()> = Mutex::new(());
static B: Mutex<()> = Mutex::new(());
static COUNTER: Shared<i32> = Shared::new(1);
static STACK1: Stack<2048> = Stack::new();
static STACK2: Stack<2048> = Stack::new();

fn thread1() {
    let a = A.lock();
    let b = B.lock();
    let c = COUNTER.read();
    COUNTER.write(c + 1);
    b.unlock();
    a.unlock();
}

fn thread2() {
    let b = B.lock();
    let a = A.lock();
    let c = COUNTER.read();
    COUNTER.write(c - 1);
    a.unlock();
    b.unlock();
}

fn main_task() {
    let h1 = spawn(&STACK1, thread1);
    let h2 = spawn(&STACK2, thread2);
    h1.join();
    h2.join();
}

firmware!(main_task);
