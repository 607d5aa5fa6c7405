#![doc = include_str!("../README.md")]
#![cfg_attr(not(any(test, feature = "std")), no_std)]
#![warn(missing_docs)]

pub mod config;
pub mod event;
pub mod rng;
pub mod sched;
pub mod site;
pub mod strategy;
pub mod targets;

#[cfg(any(feature = "cortex-m", feature = "host"))]
mod api;
#[cfg(any(feature = "cortex-m", feature = "host"))]
pub use api::*;

#[cfg(any(feature = "cortex-m", feature = "host"))]
pub mod port;

pub use config::Config;
pub use event::{Event, EventKind, TraceLevel, Verdict};
pub use sched::{MAX_TASKS, TaskId};
