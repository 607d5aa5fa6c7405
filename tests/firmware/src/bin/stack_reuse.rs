//! One stack given to two tasks in turn: the second is spawned on it once the first has
//! ended. Laying the stack out again must not trip the first task's guard, and the second
//! task's overflow must still be caught. `--arg 0`: how deep the second task recurses (0:
//! not at all; 1000 overflows); `--arg 1`: how many tasks run before, one after the other on
//! a stack of their own (8 puts both past the tasks with an MPU region of their own, onto
//! the shared guard, on a CPU with 8 regions; 16 on one with 16, as QEMU's Cortex-M33).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static REUSED: Stack<1024> = Stack::new();
static EARLIER: Stack<1024> = Stack::new();

fn short() {
    yield_now();
}

fn second() {
    core::hint::black_box(jostle_test_firmware::recurse(arg_or(0, 0), || {}));
}

fn main_task() {
    for _ in 0..arg_or(1, 0) {
        spawn(&EARLIER, short).join();
    }
    spawn(&REUSED, short).join();
    spawn(&REUSED, second).join();
}

firmware!(main_task);
