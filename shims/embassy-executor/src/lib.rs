#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

/// Declares the application's entry: an `async fn main(spawner: Spawner)` run as the first
/// task of [`Executor::run`] (embassy-executor-macros' Cortex-M flavour: cortex-m-rt's
/// `#[entry]`).
#[cfg(target_os = "none")]
pub use embassy_executor_macros::main_cortex_m as main;
/// Declares the application's entry on the host port: `fn main` runs [`Executor::run`]
/// (embassy-executor-macros' `std` flavour, as Embassy's `platform-std` apps have it).
#[cfg(not(target_os = "none"))]
pub use embassy_executor_macros::main_std as main;
pub use embassy_executor_macros::task;

#[cfg(target_os = "none")]
#[path = "arch/cortex_m.rs"]
mod arch;
#[cfg(not(target_os = "none"))]
#[path = "arch/host.rs"]
mod arch;

// The board: exactly one of the features `mps2-an385` (the default) and `lm3s6965evb`.
#[cfg(all(
    target_os = "none",
    feature = "lm3s6965evb",
    not(feature = "mps2-an385")
))]
use jostle_board_lm3s6965evb as board;
// (Also when both are chosen, so that the refusal below is the build's one error.)
#[cfg(all(target_os = "none", feature = "mps2-an385"))]
use jostle_board_mps2_an385 as board;
#[cfg(all(
    target_os = "none",
    any(
        all(feature = "mps2-an385", feature = "lm3s6965evb"),
        not(any(feature = "mps2-an385", feature = "lm3s6965evb"))
    )
))]
compile_error!(
    "jostle's embassy-executor runs on exactly one board: the feature `mps2-an385` (the default) or, with `default-features = false`, `lm3s6965evb`"
);

// The app owns its ends (its semihosting exit, its panic handler): the host reads them as
// verdicts (see `jostle_kernel::descriptor`).
#[cfg(target_os = "none")]
jostle_kernel::board_descriptor!(framework = "embassy");
mod executor;
#[cfg(target_os = "none")]
mod interrupt;
mod metadata;
pub mod raw;
mod spawner;
mod time_driver;

#[doc(hidden)]
#[path = "export.rs"]
pub mod _export;

pub use executor::Executor;
#[cfg(target_os = "none")]
pub use interrupt::InterruptExecutor;
pub use metadata::Metadata;
pub use spawner::{SendSpawner, SpawnError, SpawnToken, Spawner};
