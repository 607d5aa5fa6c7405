#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

// Everything of embassy-sync, as it is; the modules below replace three of its modules by
// instrumented ones (an item named here shadows the glob's).
pub use embassy_sync::*;

#[cfg(not(jostle_no_port))]
pub mod channel;
#[cfg(not(jostle_no_port))]
mod events;
#[cfg(not(jostle_no_port))]
pub mod mutex;
#[cfg(not(jostle_no_port))]
pub mod signal;

// Jostle's kernel without a port: no Jostle executor (or other framework shim) is in the
// app's build. The one error of the build, rather than one per call into the kernel.
#[cfg(jostle_no_port)]
compile_error!(
    "jostle-embassy-sync: Jostle's embassy-executor is not in this build (its [patch.crates-io] line went unused: Jostle's stands in for embassy-executor 0.10 only)"
);
