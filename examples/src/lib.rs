//! Firmware under test for Jostle: the seed papers' figures and a few classics (see README.md).
//!
//! Every binary builds for QEMU (`--target thumbv7m-none-eabi`, board `mps2-an385`) and for
//! the host port (plain `cargo build`), from the same source, through [`firmware!`].
//! Filler sizes and other knobs come from the configuration block's arguments
//! (`jostle run --arg N`), so one build serves every size.
#![cfg_attr(target_os = "none", no_std)]

pub use jostle_kernel::*;

#[cfg(target_os = "none")]
#[doc(hidden)]
pub use jostle_board_mps2_an385 as __board;

/// Defines the program's entry: `firmware!(main_task)` runs `main_task` as task 0, on the
/// board under `target_os = "none"` and on the host port otherwise.
#[macro_export]
macro_rules! firmware {
    ($main:path) => {
        #[cfg(target_os = "none")]
        $crate::__board::entry!($main);

        #[cfg(not(target_os = "none"))]
        fn main() {
            $crate::port::run($main)
        }
    };
}

/// `n` scheduling points on a variable no other task touches (the papers' `f1(); f2(); …`).
#[track_caller]
pub fn filler(own: &Shared<u32>, n: u32) {
    for _ in 0..n {
        own.update(|v| v.wrapping_add(1));
    }
}
