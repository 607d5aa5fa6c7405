use super::caller_site;
use super::run_cell::RunCell;
use crate::op::Op;
use crate::port;
use core::ops::{Deref, DerefMut};

/// A mutual-exclusion lock. `lock` is a scheduling point that may block (the task is
/// disabled while another holds the lock); the guard's drop is the release point.
///
/// A lock has an identity (its address) and a class (for DrFinder and iGoodlock
/// abstractions): by default the class is the identity; [`Mutex::with_class`] sets it.
pub struct Mutex<T> {
    class: u32,
    data: RunCell<T>,
}

// SAFETY: the kernel hands the data to one guard at a time and runs one task at a time.
unsafe impl<T: Send> Sync for Mutex<T> {}

impl<T> Mutex<T> {
    /// A lock protecting `data`, whose class is its own identity.
    pub const fn new(data: T) -> Self {
        Self::with_class(data, 0)
    }

    /// A lock protecting `data`, in lock class `class` (non-zero, and not
    /// [`crate::event::EXECUTOR_CLASS`], an executor's).
    pub const fn with_class(data: T, class: u32) -> Self {
        Mutex {
            class,
            data: RunCell::new(data),
        }
    }

    fn id(&self) -> u32 {
        port::addr(self as *const Self as *const ())
    }

    /// Acquires the lock (an ACQUIRE statement); blocks while another task holds it.
    /// Acquiring a lock the task already holds is a deadlock, as with any non-reentrant lock.
    #[track_caller]
    pub fn lock(&self) -> MutexGuard<'_, T> {
        let s = caller_site();
        let l = self.id();
        let c = if self.class == 0 { l } else { self.class };
        port::point(Op::Acquire { s, l, c });
        MutexGuard {
            mutex: self,
            site: s,
        }
    }
}

/// Access to a [`Mutex`]'s data; dropping it releases the lock.
pub struct MutexGuard<'a, T> {
    mutex: &'a Mutex<T>,
    /// The acquire site, used as the release site when the guard is dropped.
    site: u32,
}

impl<T> MutexGuard<'_, T> {
    /// Releases the lock here, recording this call's site as the release site.
    #[track_caller]
    pub fn unlock(mut self) {
        self.site = caller_site();
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while this task holds the lock.
        unsafe { &*self.mutex.data.get() }
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this the only reference.
        unsafe { &mut *self.mutex.data.get() }
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        port::point(Op::Release {
            s: self.site,
            l: self.mutex.id(),
        });
    }
}
