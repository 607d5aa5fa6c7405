#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod engine;
pub mod error;
pub mod output;
pub mod trace;
pub mod transport;

pub use error::JostleError;
pub use trace::run::{Outcome, Port, RunOutcome};
