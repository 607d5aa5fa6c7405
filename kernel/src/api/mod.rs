//! The instrumented primitives firmware under test uses. Every operation is a scheduling
//! point: the task stops before it, and the strategy decides who goes next. [`PerRun`] is
//! the exception: a test's own bookkeeping, reset every run and never an event.

mod atomic;
pub mod clock;
pub mod hint;
mod irq;
mod mutex;
mod per_run;
mod run_cell;
mod shared;
mod signal;
pub mod sync;
mod task;

pub use crate::interrupt::{Firing, Interrupt};
pub use crate::stack::Stack;
pub use atomic::{AtomicBlock, atomic};
pub use irq::{disable_interrupts, enable_interrupts, with_priority_mask};
pub use mutex::{Mutex, MutexGuard};
pub use per_run::PerRun;
pub use shared::Shared;
pub use signal::Signal;
pub use task::{
    JoinHandle, arg, arg_or, current_task, frame, input, selected_test, spawn, yield_now,
};

use crate::port;

/// The site id of the instrumented call (the `#[track_caller]` chain's origin) on this port.
#[track_caller]
#[inline(always)]
fn caller_site() -> u32 {
    port::site(core::panic::Location::caller())
}
