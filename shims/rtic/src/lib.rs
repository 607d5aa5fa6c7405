#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

pub use rtic_core::{Exclusive, Mutex, prelude as mutex_prelude};
pub use rtic_macros::app;

/// `Mutex` and its multi-lock variants (as the real crate's `rtic::mutex`).
pub mod mutex {
    pub use rtic_core::Mutex;
    pub use rtic_core::prelude;
}

#[doc(hidden)]
pub mod export;

pub use export::pend;

use core::cell::UnsafeCell;

/// Storage of a resource: a `static mut` that `#[rtic::app]`'s expansion guards (its
/// address is the resource's identity in Jostle's events, its symbol the resource's name).
#[repr(transparent)]
pub struct RacyCell<T>(UnsafeCell<T>);

impl<T> RacyCell<T> {
    /// A cell holding `value`.
    #[inline(always)]
    pub const fn new(value: T) -> Self {
        RacyCell(UnsafeCell::new(value))
    }

    /// A pointer to the value, to write through.
    ///
    /// # Safety
    /// The expansion makes every `&mut` it derives unique.
    #[inline(always)]
    pub unsafe fn get_mut(&self) -> *mut T {
        self.0.get()
    }

    /// A pointer to the value, to read through.
    ///
    /// # Safety
    /// As for [`RacyCell::get_mut`].
    #[inline(always)]
    pub unsafe fn get(&self) -> *const T {
        self.0.get()
    }
}

// SAFETY: the expansion serialises every access (priority ceilings, or one owner).
unsafe impl<T> Sync for RacyCell<T> {}
