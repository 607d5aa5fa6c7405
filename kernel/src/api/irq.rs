//! Interrupt operations firmware performs: requesting a source, masking one or all, and a
//! priority mask. Each is a scheduling point and an event. The sources themselves are
//! declared with [`Interrupt`] and passed to `firmware!`.

use super::caller_site;
use crate::interrupt::Interrupt;
use crate::op::{ALL_IRQS, Op};
use crate::port;

impl Interrupt {
    /// Pends this source (a requested firing: its handler runs later, at a point the
    /// scheduler chooses; a request while one is pending merges with it).
    #[track_caller]
    pub fn request(&'static self) {
        port::point(Op::IrqRequest {
            s: caller_site(),
            i: port::irq_index(self),
        });
    }

    /// Enables this source (NVIC): sources start disabled, as after a reset.
    #[track_caller]
    pub fn enable(&'static self) {
        port::point(Op::IrqMask {
            s: caller_site(),
            i: port::irq_index(self),
            on: false,
        });
    }

    /// Disables this source (NVIC): its handler cannot run until it is enabled again.
    #[track_caller]
    pub fn disable(&'static self) {
        port::point(Op::IrqMask {
            s: caller_site(),
            i: port::irq_index(self),
            on: true,
        });
    }
}

/// Disables every interrupt source (NVIC).
#[track_caller]
pub fn disable_interrupts() {
    port::point(Op::IrqMask {
        s: caller_site(),
        i: ALL_IRQS,
        on: true,
    });
}

/// Enables every interrupt source (NVIC).
#[track_caller]
pub fn enable_interrupts() {
    port::point(Op::IrqMask {
        s: caller_site(),
        i: ALL_IRQS,
        on: false,
    });
}

/// Runs `f` with the priority mask at `level` (BASEPRI): sources of priority value `level`
/// or more cannot fire meanwhile; the mask is 0 (none) again afterwards.
#[track_caller]
pub fn with_priority_mask<R>(level: u8, f: impl FnOnce() -> R) -> R {
    let s = caller_site();
    port::point(Op::PrioMask { s, level, r: 0 });
    let r = f();
    port::point(Op::PrioMask { s, level: 0, r: 0 });
    r
}
