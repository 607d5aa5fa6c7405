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

pub use config::Config;
pub use event::{Event, EventKind, TraceLevel, Verdict};
pub use op::Op;
pub use task::{MAX_TASKS, TaskId, TaskSet};
