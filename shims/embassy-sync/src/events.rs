//! What the wrappers tell the kernel: the scheduling points of the kernel's own primitives
//! (a lock's acquire and release, a shared variable's read and write, a signal's send and
//! receive), at the application's call sites. The wrappers call these only after (or, for
//! a send, before) the real embassy-sync operation, so that no point the kernel would
//! disable (a held lock, a signal with nothing pending) is ever reached: the real
//! primitive has already decided.

use core::panic::Location;
use jostle_kernel::{Op, port};

/// The kernel's site id of a caller location.
pub(crate) fn site(at: &'static Location<'static>) -> u32 {
    port::site(at)
}

/// The kernel's identity of the object at `p` (a lock, a signal, a location).
pub(crate) fn id<T: ?Sized>(p: *const T) -> u32 {
    port::addr(p.cast::<()>())
}

/// The lock at `lock` was taken at site `s` (its class is its identity).
pub(crate) fn acquired<T: ?Sized>(s: u32, lock: *const T) {
    let l = id(lock);
    port::point(Op::Acquire { s, l, c: l });
}

/// The lock at `lock`, taken at site `s`, is about to be released.
pub(crate) fn releasing<T: ?Sized>(s: u32, lock: *const T) {
    port::point(Op::Release { s, l: id(lock) });
}

/// The data at `data` is read at `at`.
pub(crate) fn read<T: ?Sized>(at: &'static Location<'static>, data: *const T) {
    port::point(Op::Read {
        s: site(at),
        a: id(data),
    });
}

/// The data at `data` is written at `at` (or may be: a mutable borrow).
pub(crate) fn write<T: ?Sized>(at: &'static Location<'static>, data: *const T) {
    port::point(Op::Write {
        s: site(at),
        a: id(data),
    });
}

/// A value is about to be handed over through the primitive at `g` (a release: what the
/// sender did before happens before what the receiver does after).
pub(crate) fn sending(s: u32, g: usize) {
    port::point(Op::Signal {
        s,
        g: id(g as *const ()),
    });
}

/// A value was taken from the primitive at `g` (an acquire).
pub(crate) fn received(s: u32, g: usize) {
    port::point(Op::Wait {
        s,
        g: id(g as *const ()),
    });
}
