//! Ports: the only code that touches a CPU or OS. Each provides the same small interface
//! to the primitives (`point`, `execute_now`, `spawn`, `site`, `addr`, `current`, `arg`) and
//! a way to start a run; the scheduling decisions themselves live in [`crate::sched`].

#[cfg(all(feature = "cortex-m", feature = "host"))]
compile_error!("choose one port: feature `cortex-m` or feature `host`");

#[cfg(feature = "cortex-m")]
mod cortex_m;
#[cfg(feature = "cortex-m")]
pub use cortex_m::*;

#[cfg(all(feature = "host", not(feature = "cortex-m")))]
mod host;
#[cfg(all(feature = "host", not(feature = "cortex-m")))]
pub use host::*;

/// Words at the low end of each task stack that must keep [`CANARY`].
pub const CANARY_WORDS: usize = 8;
/// The stack canary pattern.
pub const CANARY: u32 = 0xC0DE_57AC;
