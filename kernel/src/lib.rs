#![doc = include_str!("../README.md")]
#![cfg_attr(not(any(test, feature = "std")), no_std)]
#![warn(missing_docs)]

// Layers, bottom up; a module imports only from the layers below it (checked by
// `tests/layers.rs`): fixed, descriptor, event, interrupt, rng, site, stack, task, test_table, op → targets → strategy → config → sched →
// api, port.
pub mod descriptor;
pub mod event;
pub mod fixed;
pub mod interrupt;
pub mod rng;
pub mod site;
pub mod stack;
pub mod task;
pub mod test_table;

pub mod op;

pub mod targets;

pub mod strategy;

pub mod config;

pub mod sched;

#[cfg(any(feature = "cortex-m", feature = "host"))]
mod api;
#[cfg(any(feature = "cortex-m", feature = "host"))]
pub use api::*;

#[cfg(any(feature = "cortex-m", feature = "host"))]
pub mod port;

// Firmware with the kernel but no board: it came in through a stand-in (portable-atomic's,
// jostle-embassy-sync) while the framework's own stand-in, which brings the board, was not
// used. Cargo leaves an unused `[patch]` at a warning and builds the real crate: this makes
// it an error.
#[cfg(all(target_os = "none", not(any(feature = "cortex-m", feature = "host"))))]
compile_error!(
    "Jostle: no board in this firmware: the framework's stand-in was not used (Jostle's shims/rtic serves rtic 2.3 and 2.4, shims/embassy-executor embassy-executor 0.10: apps asking for a version the stand-in's satisfies: see cargo's warning `patch ... was not used in the crate graph` above, and `cargo update -p rtic` or `-p embassy-executor` when Cargo.lock holds another version), or depend on the `jostle` crate"
);

pub use config::Config;
pub use event::{Event, EventKind, TraceLevel, Verdict};
pub use op::Op;
pub use task::{MAX_TASKS, TaskId, TaskSet};
