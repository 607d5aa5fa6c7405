//! Trace decoding: what one run says. `elf` reads the firmware image (defmt table,
//! configuration address, site resolution), `decode` turns defmt frames or host-port lines
//! into typed events, `space` maps `file:line:col` to an image's site ids, and `run` is one
//! decoded run (events, sites, verdict) with the queries the engine asks of it.
//!
//! Dependency rule: `trace` uses only `error` (and the kernel and checker crates), never
//! `transport`, `engine` or `output`: transports call into it to decode what they read, the
//! engine queries its runs, and `output` prints them.

pub mod decode;
pub mod elf;
pub mod run;
pub mod space;
