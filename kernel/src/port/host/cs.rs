//! The host port's `critical-section` implementation, as the Cortex-M port's: from a task or
//! a handler, entering is a scheduling point (`CsEnter`) and so is leaving (`CsExit`), and
//! in between no other task runs and no interrupt fires; nested sections of one context are
//! no scheduling points. Outside a run it serialises with a plain lock.

use crate::op::Op;
use std::sync::atomic::{AtomicBool, Ordering};

struct KernelCs;
critical_section::set_impl!(KernelCs);

/// Serialises sections taken outside a run (no kernel to schedule them).
static OUTSIDE: AtomicBool = AtomicBool::new(false);

const OUTSIDE_TOKEN: u8 = 0x80;
const NESTED: u8 = 0x40;

// SAFETY: acquire/release pair up as `critical-section` requires; task sections are
// exclusive because the scheduler never runs another context while one holds the section.
unsafe impl critical_section::Impl for KernelCs {
    unsafe fn acquire() -> u8 {
        if !super::running() {
            while OUTSIDE.swap(true, Ordering::Acquire) {
                std::thread::yield_now();
            }
            return OUTSIDE_TOKEN;
        }
        if super::holds_cs() {
            return NESTED;
        }
        super::point(Op::CsEnter);
        0
    }

    unsafe fn release(token: u8) {
        if token & OUTSIDE_TOKEN != 0 {
            OUTSIDE.store(false, Ordering::Release);
            return;
        }
        if token & NESTED != 0 {
            return;
        }
        super::point(Op::CsExit);
    }
}
