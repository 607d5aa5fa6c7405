//! The campaign engine: Phase I traces → prediction (`predict`), candidates → breakpoints
//! (`targeting`), N seeds × one strategy × one target → tally (`confirm`), the whole loop
//! (`campaign`) on J workers (`pool`), replaying a reported bug (`replay`), and SURW's
//! estimates from a profiling run (`surw`).
//!
//! Dependency rule: the engine makes runs only through `transport::Transport` (`&dyn
//! Transport`) and never names QEMU, the host port or a probe; it reads runs through
//! `trace` and may use `output` to write reports. Nothing below `engine` imports it.

pub mod campaign;
pub mod confirm;
pub mod pool;
pub mod predict;
pub mod replay;
pub mod shrink;
pub mod surw;
pub mod targeting;
