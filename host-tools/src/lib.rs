#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod build;
pub mod campaign;
pub mod confirm;
pub mod decode;
pub mod elf;
pub mod error;
pub mod hostport;
pub mod html;
pub mod pool;
pub mod predict;
pub mod probe;
pub mod process;
pub mod qemu;
pub mod replay;
pub mod report;
pub mod run;
pub mod runner;
pub mod targeting;

pub use error::JostleError;
pub use run::{Outcome, Port, RunOutcome};
