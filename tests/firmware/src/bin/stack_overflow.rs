//! A task recursing on a 1 KiB stack: the canary check must end the run with the
//! `stack_overflow` verdict before anything else is corrupted for long. `--arg 0` sets the
//! depth (default 1000; the host port, whose task stacks are 1 MiB, needs some 100,000).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static SMALL: Stack<1024> = Stack::new();

fn overflow() {
    // A scheduling point in every frame.
    core::hint::black_box(jostle_test_firmware::recurse(arg_or(0, 1000), yield_now));
}

fn main_task() {
    spawn(&SMALL, overflow).join();
}

firmware!(main_task);
