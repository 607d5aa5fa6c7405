//! The shape of bug that SURW's uniform walk is for (Zhao et al., ASPLOS 2025, §2): one
//! task's single access to a shared location must come before another task's first access
//! of several. The reporter makes `--arg 0` private steps (default 40), then writes `STATE`
//! once. The worker checks `STATE` first and panics if the reporter's write has already
//! happened (an order violation). It then writes `STATE` three times.
//!
//! Random must run the reporter's 42 steps before the worker's two, which practically never
//! happens. SURW profiles a run, aims at `STATE` (two tasks access it, both write it) and
//! weighs the reporter's 1 access against the worker's 4. When the worker reaches its check,
//! the reporter is the intended task one time in five, and the worker is then held until
//! the reporter has written.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static STATE: Shared<u32> = Shared::new(0);
static OWN: Shared<u32> = Shared::new(0);
static STACK1: Stack<4096> = Stack::new();
static STACK2: Stack<4096> = Stack::new();

fn reporter() {
    filler(&OWN, arg_or(0, 40));
    STATE.write(7);
}

fn worker() {
    if STATE.read() == 7 {
        panic!("ORDER");
    }
    for i in 1..=3 {
        STATE.write(i);
    }
}

fn main_task() {
    let a = spawn(&STACK1, reporter);
    let b = spawn(&STACK2, worker);
    a.join();
    b.join();
}

firmware!(main_task);
