//! CS/reorder (ESBMC's `reorder_bad.c` via SCTBench), shared by the `reorder_*` subjects,
//! which differ only in their thread counts. No locks. Setters store `a = 1` then `b = -1`; a
//! checker fails unless it sees `(a == 0 && b == 0) || (a == 1 && b == -1)`, evaluated in C
//! order (reads `a`, maybe `b`, `a` again, maybe `b`). It fails when it reads `a == 1` twice
//! and then `b == 0`: a setter was preempted between its two stores and no setter has stored
//! `b` yet.

use jostle::*;

static A: Shared<i32> = Shared::new(0);
static B: Shared<i32> = Shared::new(0);

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

/// The main thread: spawns the setters then the checkers (one per stack), joins them in that
/// order.
pub fn run<const SETTERS: usize, const CHECKERS: usize>(
    set_stacks: &'static [Stack<2048>; SETTERS],
    check_stacks: &'static [Stack<2048>; CHECKERS],
) {
    let setters: [JoinHandle; SETTERS] =
        core::array::from_fn(|i| spawn(&set_stacks[i], set_thread));
    let checkers: [JoinHandle; CHECKERS] =
        core::array::from_fn(|i| spawn(&check_stacks[i], check_thread));
    for h in setters {
        h.join();
    }
    for h in checkers {
        h.join();
    }
}
