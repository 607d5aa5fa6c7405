//! CS/token_ring: ESBMC's `token_ring_bad.c` via SCTBench; PERIOD
//! `evaluation/CS/token_ring/token_ring_bad.c`. 5 tasks: main and t1..t4 (created in order,
//! joined t4, t3, t2, t1); ESBMC's atomic blocks are one global mutex, so each body is one
//! critical section. Bug: assertion. t1: `x1 = (x3 + 1) % 4`, t2: `x2 = x1`, t3: `x3 = x2`,
//! each then sets its flag; t4 asserts `x1 == x2 && x2 == x3` once all three flags are set.
//! It fails when t4's section comes last and t1's is not the first of the three (the orders
//! t1 t2 t3 and t1 t3 t2 leave all three equal to 2): a pure ordering bug.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static X1: Shared<i32> = Shared::new(1);
static X2: Shared<i32> = Shared::new(2);
static X3: Shared<i32> = Shared::new(1);
static FLAG1: Shared<bool> = Shared::new(false);
static FLAG2: Shared<bool> = Shared::new(false);
static FLAG3: Shared<bool> = Shared::new(false);
/// `esbmc_mutex`: `__ESBMC_atomic_begin/end` in `common.inc`.
static ESBMC_MUTEX: Mutex<()> = Mutex::new(());
static STACKS: [Stack<2048>; 4] = [const { Stack::new() }; 4];

fn t1() {
    let g = ESBMC_MUTEX.lock();
    let x3 = X3.read();
    X1.write((x3 + 1) % 4);
    FLAG1.write(true);
    g.unlock();
}

fn t2() {
    let g = ESBMC_MUTEX.lock();
    let x1 = X1.read();
    X2.write(x1);
    FLAG2.write(true);
    g.unlock();
}

fn t3() {
    let g = ESBMC_MUTEX.lock();
    let x2 = X2.read();
    X3.write(x2);
    FLAG3.write(true);
    g.unlock();
}

fn t4() {
    let g = ESBMC_MUTEX.lock();
    if FLAG1.read() && FLAG2.read() && FLAG3.read() {
        // x1 == x2 && x2 == x3, short-circuited as in C.
        let ok = X1.read() == X2.read() && X2.read() == X3.read();
        assert!(ok, "x1 == x2 && x2 == x3");
    }
    g.unlock();
}

fn main_task() {
    let h1 = spawn(&STACKS[0], t1);
    let h2 = spawn(&STACKS[1], t2);
    let h3 = spawn(&STACKS[2], t3);
    let h4 = spawn(&STACKS[3], t4);
    h4.join();
    h3.join();
    h2.join();
    h1.join();
}

firmware!(main_task);
