//! CS/wronglock_3: ESBMC's `wronglock_bad.c` via SCTBench; PERIOD
//! `evaluation/CS/wronglock_3/wronglock_3_bad.c` (a preprocessed copy with 3
//! B-threads). 5 tasks: main, 1 A-thread and 3 B-threads
//! (created in that order, joined in that order). Bug: assertion. Both kinds update the
//! volatile `data` but under different mutexes (A: `dataLock`, B: `thisLock`, the "wrong
//! lock"). A reads `x = data`, does `data++` (a load and a store) and asserts
//! `data == x + 1` (a third load); it fails when some B's store lands between A's first load
//! and its last one without being overwritten by A's own store.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

/// A-threads (`iNum1`).
const NUM1: usize = 1;
/// B-threads (`iNum2`).
const NUM2: usize = 3;

static DATA: Shared<i32> = Shared::new(0);
static DATA_LOCK: Mutex<()> = Mutex::new(());
static THIS_LOCK: Mutex<()> = Mutex::new(());
static NUM1_STACKS: [Stack<2048>; NUM1] = [const { Stack::new() }; NUM1];
static NUM2_STACKS: [Stack<2048>; NUM2] = [const { Stack::new() }; NUM2];

fn func_a() {
    let g = DATA_LOCK.lock();
    let x = DATA.read();
    let d = DATA.read();
    DATA.write(d + 1);
    if DATA.read() != x + 1 {
        panic!("Bug Found!");
    }
    g.unlock();
}

fn func_b() {
    let g = THIS_LOCK.lock();
    let d = DATA.read();
    DATA.write(d + 1);
    g.unlock();
}

fn main_task() {
    let num1: [JoinHandle; NUM1] = core::array::from_fn(|i| spawn(&NUM1_STACKS[i], func_a));
    let num2: [JoinHandle; NUM2] = core::array::from_fn(|i| spawn(&NUM2_STACKS[i], func_b));
    for h in num1 {
        h.join();
    }
    for h in num2 {
        h.join();
    }
}

firmware!(main_task);
