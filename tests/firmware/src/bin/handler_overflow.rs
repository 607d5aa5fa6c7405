//! An interrupt handler recursing deeper than the main stack, which every handler shares,
//! holds. On ARMv8-M mainline MSPLIM stops it at the stack's bottom (above a reserve for
//! the fault handler): the run must end as `stack_overflow` of the handler, not run on
//! through the statics below the main stack. `--arg 0`: how deep (default 100,000 frames of
//! some 140 bytes: more than the 4 MiB of the mps2-an505's RAM).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

/// Fires once, after the main task asks.
static DEEP: Interrupt = Interrupt::requested(10, 1, deep);

fn deep() {
    core::hint::black_box(jostle_test_firmware::recurse(arg_or(0, 100_000), || {}));
}

fn main_task() {
    DEEP.enable();
    // A requested source fires before the run ends, at the latest.
    DEEP.request();
}

firmware!(main_task, interrupts: [DEEP]);
