//! An initialisation race that runs the harmless way round: T1 stores `CONFIG = 42` at once;
//! T2 does `--arg 0` filler statements (default 20), then reads `CONFIG` and asserts it is
//! set. Random nearly always runs the store first, so the trace that predicts the race shows
//! that order; the other order fails.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static CONFIG: Shared<u32> = Shared::new(0);
static OWN2: Shared<u32> = Shared::new(0);
static STACK1: Stack<4096> = Stack::new();
static STACK2: Stack<4096> = Stack::new();

fn t1() {
    CONFIG.write(42);
}

fn t2() {
    filler(&OWN2, arg(0).unwrap_or(20));
    assert_eq!(CONFIG.read(), 42, "configuration read before it was stored");
}

fn main_task() {
    let a = spawn(&STACK1, t1);
    let b = spawn(&STACK2, t2);
    a.join();
    b.join();
}

firmware!(main_task);
