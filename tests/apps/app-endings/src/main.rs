//! Two tasks add to a counter; then the application ends the run its own way, by `--arg 0`:
//! 0 returns (the kernel ends the run), 1 exits through semihosting reporting success,
//! 2 reporting failure, 3 panics (panic-semihosting prints the message and exits; the
//! binary app-halts spins in panic-halt).
//! Whatever it does, it first prints a line of its own on QEMU's standard output.
#![no_std]
#![no_main]

use panic_semihosting as _;

include!("app.rs");
