//! A task writes one word through a pointer below the lowest address its stack may hold
//! (into the stack's 32-byte guard, on the way to the memory below), its stack pointer far
//! above: no stack pointer moves there, so ARMv8-M's PSPLIM alone lets it through. The
//! guard must end the run as `stack_overflow` of that task: the MPU region (no access on
//! ARMv7-M, read-only on ARMv8-M), or the canary when the task ends (the M0). `--arg 0`:
//! how many bytes below the limit (default 4: the guard's highest word); `--arg 1`: how many
//! tasks run on the same stack before, one after the other (past the CPU's regions, the
//! writer is guarded by the region shared by the later tasks).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static SMALL: Stack<1024> = Stack::new();
static DONE: Shared<bool> = Shared::new(false);

fn writer() {
    yield_now();
    let (base, _) = SMALL.region();
    let limit = base as usize + jostle_kernel::port::CANARY_WORDS * 4;
    let below = (limit - arg_or(0, 4) as usize) as *mut u32;
    // SAFETY: none: this is the bug under test (the host port, whose tasks run on stacks of
    // their own, leaves this memory unused).
    unsafe { below.write_volatile(0xBAD0_BAD0) };
    yield_now();
    DONE.write(true);
}

fn earlier() {
    yield_now();
}

fn main_task() {
    for _ in 0..arg_or(1, 0) {
        spawn(&SMALL, earlier).join();
    }
    spawn(&SMALL, writer).join();
    assert!(DONE.read());
}

firmware!(main_task);
