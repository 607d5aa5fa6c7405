//! What `#[rtic::app]`'s expansion calls, on Jostle's kernel.
//!
//! - `main`: `interrupt::disable()` adopts the running thread as task 0 (the kernel starts
//!   there); `NVIC::unmask(irq)` registers a dispatcher or a hardware task's interrupt as a
//!   source, at the priority `set_priority` just wrote; `interrupt::enable()` ends `init`
//!   (every source is unmasked) and, when the application has no `#[idle]`, becomes task
//!   0's idle loop.
//! - handlers: [`run`] is the kernel's entry and exit around the handler's body (a hardware
//!   task, or a dispatcher polling its software tasks).
//! - [`lock`]: the Stack Resource Policy exactly, as scheduling points and events naming
//!   the resource.
//! - [`pend`]: a request of the interrupt source, which the scheduler fires when it chooses.

pub use critical_section::{self, CriticalSection};
pub use portable_atomic as atomic;

pub use cortex_m::{
    Peripherals,
    interrupt::InterruptNumber,
    peripheral::{DWT, SCB, SYST, scb::SystemHandler},
    register::msp,
};

mod dispatch;
pub mod executor;
mod hooks;
mod resource;

#[cfg(feature = "jostle-lm3s6965evb")]
use jostle_board_lm3s6965evb as board;
#[cfg(not(feature = "jostle-lm3s6965evb"))]
compile_error!("rtic (Jostle): choose one board feature: jostle-lm3s6965evb (the default)");

pub use hooks::{NVIC, interrupt, pend, run, wfi};

#[cfg(implementation = "cortex-m-basepri")]
mod basepri;
#[cfg(implementation = "cortex-m-basepri")]
pub use basepri::lock;

#[cfg(implementation = "cortex-m-source-masking")]
mod source_mask;
#[cfg(implementation = "cortex-m-source-masking")]
pub use source_mask::{Mask, compute_mask_chunks, create_mask, lock};

/// RTIC's logical priority `logical` as the NVIC's priority byte, with `nvic_prio_bits`
/// implemented bits (a higher logical priority is a lower byte).
#[inline]
#[must_use]
pub const fn cortex_logical2hw(logical: u8, nvic_prio_bits: u8) -> u8 {
    ((1 << nvic_prio_bits) - logical) << (8 - nvic_prio_bits)
}

/// Asserts (in types) that `T` is `Send`.
#[inline(always)]
pub fn assert_send<T: Send>() {}

/// Asserts (in types) that `T` is `Sync`.
#[inline(always)]
pub fn assert_sync<T: Sync>() {}
