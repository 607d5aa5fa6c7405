#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

/// Declares the application's entry: an `async fn main(spawner: Spawner)` run as the first
/// task of [`Executor::run`] (embassy-executor-macros' Cortex-M flavour: cortex-m-rt's
/// `#[entry]`).
#[cfg(target_os = "none")]
pub use embassy_executor_macros::main_cortex_m as main;
pub use embassy_executor_macros::task;

#[cfg(not(target_os = "none"))]
compile_error!(
    "jostle's embassy-executor runs on Cortex-M targets (build with --target thumbv7m-none-eabi); the host port is not supported yet"
);

#[cfg(target_os = "none")]
#[path = "arch/cortex_m.rs"]
mod arch;
mod executor;
mod metadata;
pub mod raw;
mod spawner;
mod time_driver;

#[doc(hidden)]
#[path = "export.rs"]
pub mod _export;

pub use executor::Executor;
pub use metadata::Metadata;
pub use spawner::{SendSpawner, SpawnError, SpawnToken, Spawner};
