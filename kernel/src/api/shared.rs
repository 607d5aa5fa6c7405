use super::caller_site;
use super::run_cell::RunCell;
use crate::op::Op;
use crate::port;

/// A shared variable whose every access is a scheduling point and an event
/// (`MEM(σ, m, a, t, L)` of racefuzzer-pldi08 §2.1).
///
/// Only one task runs at a time and each access completes before the next scheduling
/// point, so the value itself needs no atomics; the interesting interleavings are the ones
/// the scheduler chooses between accesses.
pub struct Shared<T: Copy> {
    value: RunCell<T>,
}

// SAFETY: the kernel runs exactly one task at a time (cooperative on the device, coroutines on
// one thread on the host port), and an access never spans a scheduling point.
unsafe impl<T: Copy + Send> Sync for Shared<T> {}

impl<T: Copy> Shared<T> {
    /// A shared variable holding `value`.
    pub const fn new(value: T) -> Self {
        Shared {
            value: RunCell::new(value),
        }
    }

    fn addr(&self) -> u32 {
        port::addr(self as *const Self as *const ())
    }

    /// Reads the value (a READ statement).
    #[track_caller]
    pub fn read(&self) -> T {
        port::point(Op::Read {
            s: caller_site(),
            a: self.addr(),
        });
        // SAFETY: see the `Sync` impl: no other task runs until our next scheduling point.
        unsafe { *self.value.get() }
    }

    /// Writes the value (a WRITE statement).
    #[track_caller]
    pub fn write(&self, value: T) {
        port::point(Op::Write {
            s: caller_site(),
            a: self.addr(),
        });
        // SAFETY: as in `read`.
        unsafe { *self.value.get() = value }
    }

    /// Reads, transforms and writes the value as one statement (e.g. `x += 1`).
    #[track_caller]
    pub fn update(&self, f: impl FnOnce(T) -> T) -> T {
        port::point(Op::Update {
            s: caller_site(),
            a: self.addr(),
        });
        // SAFETY: as in `read`; `f` must not reach a scheduling point (it gets a copy).
        unsafe {
            let new = f(*self.value.get());
            *self.value.get() = new;
            new
        }
    }
}
