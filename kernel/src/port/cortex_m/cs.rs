//! The kernel's `critical-section` implementation.
//!
//! From a task, entering a critical section is a scheduling point (`CsEnter`) and so is
//! leaving it (`CsExit`); in between, as with interrupts masked on one core, no other task
//! runs. So crates built on `critical-section` are serialised with the tasks, and their
//! sections show in the trace (the checker treats the section as a global lock). Nested sections of the same task are no scheduling points. Outside tasks
//! (before the kernel starts, in fault handlers) it masks interrupts, as the usual
//! single-core implementation does; so does a section taken while the kernel writes its own
//! defmt frames (loggers such as `defmt-rtt` take one per frame).

use crate::op::Op;

struct KernelCs;
critical_section::set_impl!(KernelCs);

/// Token bits.
const MASKED: u8 = 0x80;
const WAS_ENABLED: u8 = 0x01;
const NESTED: u8 = 0x40;

// SAFETY: acquire/release pair up as `critical-section` requires; task sections are
// exclusive because the scheduler never runs a task whose `CsEnter` conflicts.
unsafe impl critical_section::Impl for KernelCs {
    unsafe fn acquire() -> u8 {
        if !super::started() || super::kernel_logging() {
            let was_enabled = cortex_m::register::primask::read().is_active();
            cortex_m::interrupt::disable();
            return MASKED | if was_enabled { WAS_ENABLED } else { 0 };
        }
        // SAFETY: read by the running task.
        let held = unsafe { (*super::kernel()).core.holds_cs(super::current()) };
        if held {
            return NESTED;
        }
        super::point(Op::CsEnter);
        0
    }

    unsafe fn release(token: u8) {
        if token & MASKED != 0 {
            if token & WAS_ENABLED != 0 {
                // SAFETY: restores the state `acquire` found.
                unsafe { cortex_m::interrupt::enable() };
            }
            return;
        }
        if token & NESTED != 0 {
            return;
        }
        super::point(Op::CsExit);
        // What was pended inside the section fires now, as it would at the unmask.
        super::settle();
    }
}
