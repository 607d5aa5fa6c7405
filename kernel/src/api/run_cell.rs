//! The value of an instrumented primitive, which every run starts from afresh.

use core::cell::UnsafeCell;

/// The value of a shared variable, a lock's data or an atomic.
///
/// On the device every run starts from a reset, which reloads RAM from the image. The host
/// port makes many runs in one process, so there the cell also keeps a bitwise copy of its
/// initial value and goes back to it at its first use in each run (the run's epoch,
/// `port::epoch`): a run sees exactly what a fresh boot would. A value the last run left
/// behind is overwritten without being dropped, as a reset does; a `const` initial value
/// owns no heap, so the copy is one.
///
/// `repr(C)` keeps the value first: an atomic's location is its value's address, which then
/// is its static's on both ports (named `app::OWNER`, not `app::OWNER+8`).
#[repr(C)]
pub(crate) struct RunCell<T> {
    value: UnsafeCell<T>,
    #[cfg(all(feature = "host", not(feature = "cortex-m")))]
    fresh: host::Fresh<T>,
}

impl<T> RunCell<T> {
    /// A cell holding `value`, the value of every run's start.
    pub(crate) const fn new(value: T) -> Self {
        RunCell {
            #[cfg(all(feature = "host", not(feature = "cortex-m")))]
            fresh: host::Fresh::of(&value),
            value: UnsafeCell::new(value),
        }
    }

    /// The value, for this run (the caller keeps the primitive's rule: one task at a time,
    /// no reference held across a scheduling point).
    #[inline(always)]
    pub(crate) fn get(&self) -> *mut T {
        #[cfg(all(feature = "host", not(feature = "cortex-m")))]
        self.fresh.renew(self.value.get());
        self.value.get()
    }

    /// The value, through an exclusive reference.
    pub(crate) fn get_mut(&mut self) -> &mut T {
        // SAFETY: `&mut self` makes this the only reference.
        unsafe { &mut *self.get() }
    }

    /// The value, taking the cell.
    pub(crate) fn into_inner(mut self) -> T {
        let value: *mut T = self.get_mut();
        // SAFETY: `value` points into `self`, which is forgotten after the read, so the
        // value moves out exactly once (the initial copy is never dropped).
        let out = unsafe { core::ptr::read(value) };
        core::mem::forget(self);
        out
    }

    /// The value's address, for `as_ptr` (the host port renews it at its first
    /// instrumented use in a run, not here).
    pub(crate) const fn as_ptr(&self) -> *mut T {
        self.value.get()
    }
}

#[cfg(all(feature = "host", not(feature = "cortex-m")))]
mod host {
    use crate::port;
    use core::cell::Cell;
    use core::mem::ManuallyDrop;

    /// The initial value and the epoch of the run the value belongs to.
    pub(super) struct Fresh<T> {
        init: ManuallyDrop<T>,
        epoch: Cell<u32>,
    }

    impl<T> Fresh<T> {
        /// A bitwise copy of `value` (never dropped: it is only copied back).
        pub(super) const fn of(value: &T) -> Self {
            Fresh {
                // SAFETY: the copy is never dropped or used as a value of its own; it is
                // only copied bitwise into the cell at a run's start (see `renew`).
                init: ManuallyDrop::new(unsafe { core::ptr::read(value) }),
                epoch: Cell::new(0),
            }
        }

        /// Puts the initial value back into `value` if this is the first use in this run.
        #[inline(always)]
        pub(super) fn renew(&self, value: *mut T) {
            let now = port::epoch();
            if self.epoch.get() != now {
                self.epoch.set(now);
                // SAFETY: the caller's primitive runs one task at a time and holds no
                // reference to the value across runs; the old value is forgotten, as a
                // reset forgets RAM.
                unsafe { core::ptr::copy_nonoverlapping(&*self.init as *const T, value, 1) }
            }
        }
    }
}
