//! The instrumented primitives firmware under test uses. Every operation is a scheduling
//! point: the task stops before it, and the strategy decides who goes next.

mod atomic;
mod mutex;
mod shared;
mod signal;
mod task;

pub use atomic::{AtomicBlock, atomic};
pub use mutex::{Mutex, MutexGuard};
pub use shared::Shared;
pub use signal::Signal;
pub use task::{JoinHandle, Stack, arg, arg_or, current_task, frame, spawn, yield_now};

use crate::port;
use core::panic::Location;

/// The site id of a `#[track_caller]` location on this port.
#[inline(always)]
fn site(loc: &'static Location<'static>) -> u32 {
    port::site(loc)
}
