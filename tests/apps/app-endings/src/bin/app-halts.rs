//! The same application with panic-halt as its panic handler: a panic spins in silence.
#![no_std]
#![no_main]

use panic_halt as _;

include!("../app.rs");
