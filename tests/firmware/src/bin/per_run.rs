//! A test's own bookkeeping in `PerRun` cells: every run must find them at their initial
//! values, on the host port too, where many runs share one process. Two tasks draw objects
//! from a bump allocator (a `PerRun` index) and count what they drew; a value left over
//! from an earlier run fails the run.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

/// The next free object of a four-object pool; a run draws two.
static NEXT: PerRun<usize> = PerRun::new(0);
/// Which objects this run drew.
static DRAWN: [PerRun<bool>; 4] = [const { PerRun::new(false) }; 4];
/// A shared variable the tasks race on, so that runs interleave differently.
static TURN: Shared<u32> = Shared::new(0);
static STACK1: Stack<4096> = Stack::new();
static STACK2: Stack<4096> = Stack::new();

fn worker() {
    let v = TURN.read();
    TURN.write(v + 1);
    let i = NEXT.replace(NEXT.get() + 1);
    assert!(
        i < 2,
        "object {i} drawn: the pool kept an earlier run's allocations"
    );
    assert!(!DRAWN[i].replace(true), "object {i} drawn twice");
}

fn main_task() {
    assert_eq!(NEXT.get(), 0, "the run started with an earlier run's pool");
    let a = spawn(&STACK1, worker);
    let b = spawn(&STACK2, worker);
    a.join();
    b.join();
    assert_eq!(NEXT.get(), 2);
    assert!(DRAWN[0].get() && DRAWN[1].get() && !DRAWN[2].get());
}

firmware!(main_task);
