#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

// Everything of embassy-sync, as it is; the modules below replace three of its modules by
// instrumented ones (an item named here shadows the glob's).
pub use embassy_sync::*;

#[cfg(not(jostle_no_executor))]
pub mod channel;
#[cfg(not(jostle_no_executor))]
mod events;
#[cfg(not(jostle_no_executor))]
pub mod mutex;
#[cfg(not(jostle_no_executor))]
pub mod signal;

// No Jostle executor in the app's build (nothing would run tasks on the kernel): the one
// error of the build, rather than one per call into the kernel or a failed link.
#[cfg(jostle_no_executor)]
compile_error!(
    "jostle-embassy-sync: Jostle's embassy-executor is not in this build (its [patch.crates-io] line went unused: Jostle's stands in for embassy-executor 0.10 only)"
);
