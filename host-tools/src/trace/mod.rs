//! Trace decoding: what one run says. `elf` reads the firmware image (defmt table,
//! configuration address, site resolution), `dwarf` code addresses to source lines (where a
//! sleeper waits; sites that are code addresses), `framework` the names a framework's
//! firmware gives its tasks and resources, `decode` turns defmt frames or host-port lines
//! into typed events, `space` maps `file:line:col` to an image's site ids, and `run` is one
//! decoded run (events, sites, verdict) with the queries the engine asks of it; `failure`
//! is a failing run's signature (what groups runs into one finding), `fault` a HardFault's
//! status registers in words, `symbols` the names of memory locations, and `declared` the
//! tests a firmware declares (`jostle::tests!`).
//!
//! Dependency rule: `trace` uses only `error` (and the kernel and checker crates), never
//! `transport`, `engine` or `output`: transports call into it to decode what they read, the
//! engine queries its runs, and `output` prints them.

pub mod declared;
pub mod decode;
pub mod dwarf;
pub mod elf;
pub mod failure;
pub mod fault;
pub mod framework;
pub mod run;
pub mod space;
pub mod symbols;
