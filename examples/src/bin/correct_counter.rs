//! A properly locked counter: three tasks each add `--arg 0` (default 5) increments under a
//! lock; the main task checks the total. Never fails, whatever the schedule.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static COUNT: Mutex<u32> = Mutex::new(0);
static STACK1: Stack<TASK_STACK_BYTES> = Stack::new();
static STACK2: Stack<TASK_STACK_BYTES> = Stack::new();
static STACK3: Stack<TASK_STACK_BYTES> = Stack::new();

fn worker() {
    for _ in 0..arg_or(0, 5) {
        let mut c = COUNT.lock();
        *c += 1;
    }
}

fn main_task() {
    let a = spawn(&STACK1, worker);
    let b = spawn(&STACK2, worker);
    let c = spawn(&STACK3, worker);
    a.join();
    b.join();
    c.join();
    let total = *COUNT.lock();
    assert_eq!(total, 3 * arg_or(0, 5), "lost an increment");
}

firmware!(main_task);
