//! CS/reorder_100: ESBMC's `reorder_bad.c` via SCTBench; PERIOD
//! `evaluation/CS/reorder_100/reorder_100_bad.c` (a preprocessed copy with 99 setters, 1 checker).
//! 101 tasks: main, 99 setters, 1 checker (created in that order, joined in that order); no
//! locks. Bug: assertion. Setters store `a = 1` then `b = -1`; a checker fails unless it sees
//! `(a == 0 && b == 0) || (a == 1 && b == -1)`, evaluated in C order (reads `a`, maybe `b`, `a`
//! again, maybe `b`). It fails when it reads `a == 1` twice and then `b == 0`: a setter was
//! preempted between its two stores and no setter has stored `b` yet.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

/// Setter threads (`iSet`).
const SETTERS: usize = 99;
/// Checker threads (`iCheck`).
const CHECKERS: usize = 1;

static A: Shared<i32> = Shared::new(0);
static B: Shared<i32> = Shared::new(0);
static SET_STACKS: [Stack<2048>; SETTERS] = [const { Stack::new() }; SETTERS];
static CHECK_STACKS: [Stack<2048>; CHECKERS] = [const { Stack::new() }; CHECKERS];

fn set_thread() {
    A.write(1);
    B.write(-1);
}

fn check_thread() {
    // !((a == 0 && b == 0) || (a == 1 && b == -1)), short-circuited as in C.
    if A.read() == 0 && B.read() == 0 {
        return;
    }
    if A.read() == 1 && B.read() == -1 {
        return;
    }
    panic!("Bug found!");
}

fn main_task() {
    let setters: [JoinHandle; SETTERS] =
        core::array::from_fn(|i| spawn(&SET_STACKS[i], set_thread));
    let checkers: [JoinHandle; CHECKERS] =
        core::array::from_fn(|i| spawn(&CHECK_STACKS[i], check_thread));
    for h in setters {
        h.join();
    }
    for h in checkers {
        h.join();
    }
}

firmware!(main_task);
