//! The end-to-end tests, one module per file of this directory, in one test binary.
//!
//! One binary rather than one per file: each binary linked the host tools and probe-rs, and
//! compiled `common` again; and `cargo test` runs binaries one after the other, so a file
//! whose last test ran alone (a firmware build, a long campaign) left a core idle. Here
//! libtest keeps both busy across files, and `common`'s builds (`built`) happen once.
//! Run one file's tests with its module path as the filter:
//! `cargo test -p jostle-tests --test e2e rtic::`.

mod common;

mod app_endings;
mod bench;
mod boards;
mod browser;
mod campaign;
mod cct_bench;
mod cli;
mod confirm;
mod cores;
mod crates;
mod embassy;
mod embassy_host;
mod exit_codes;
mod faults;
mod fuzz;
mod harness;
mod host_port;
mod predict;
mod profiles;
mod racebench;
mod reliability;
mod report_dir;
mod rtic;
mod shrink;
mod signals;
mod spine;
mod surw;
mod template;
