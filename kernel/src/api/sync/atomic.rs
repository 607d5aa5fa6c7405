//! Instrumented atomics with the API of `core::sync::atomic`: every operation is a scheduling
//! point and an event (load, store, read-modify-write, failed compare-and-swap, with its
//! ordering), so the scheduler can interleave lock-free code at each of its atomic steps.
//!
//! Only one task runs at a time and an operation completes before the next scheduling
//! point, so the value needs no hardware atomics: every operation works on every Cortex-M
//! profile, ARMv6-M (no compare-and-swap instruction) and 64-bit types included.
//!
//! What is and is not modelled: runs are sequentially consistent interleavings. Orderings are
//! recorded (the checker draws happens-before from release to acquire) but the reorderings
//! weaker orderings allow on real hardware are not produced. `compare_exchange_weak` never
//! fails spuriously. `fence` and `compiler_fence` are no scheduling points. A failed
//! compare-and-swap tells the strategy its task may be spinning (see `Strategy::spun`).

pub use core::sync::atomic::Ordering;

use crate::api::caller_site;
use crate::api::run_cell::RunCell;
use crate::api::shared::traced;
use crate::op::{AtomicKind, Op, ordering_code};
use crate::port;

/// A memory fence: no scheduling point (runs are sequentially consistent already).
pub fn fence(order: Ordering) {
    assert!(
        order != Ordering::Relaxed,
        "there is no such thing as a relaxed fence"
    );
}

/// A compiler fence: no scheduling point.
pub fn compiler_fence(order: Ordering) {
    assert!(
        order != Ordering::Relaxed,
        "there is no such thing as a relaxed fence"
    );
}

/// The scheduling point before an atomic operation on `a`.
#[track_caller]
#[inline]
fn point(a: *const (), kind: AtomicKind, order: Ordering) -> (u32, u32) {
    let s = caller_site();
    let a = port::addr(a);
    port::point(Op::AtomicAccess {
        s,
        a,
        kind,
        ord: ordering_code(order),
    });
    (s, a)
}

/// The orderings `core` refuses for a load (it panics on them too).
fn check_load(order: Ordering) {
    match order {
        Ordering::Release => panic!("there is no such thing as a release load"),
        Ordering::AcqRel => panic!("there is no such thing as an acquire-release load"),
        _ => {}
    }
}

/// The orderings `core` refuses for a store.
fn check_store(order: Ordering) {
    match order {
        Ordering::Acquire => panic!("there is no such thing as an acquire store"),
        Ordering::AcqRel => panic!("there is no such thing as an acquire-release store"),
        _ => {}
    }
}

/// The failure orderings `core` refuses for a compare-and-swap.
fn check_failure(order: Ordering) {
    match order {
        Ordering::Release => panic!("there is no such thing as a release failure ordering"),
        Ordering::AcqRel => panic!("there is no such thing as an acquire-release failure ordering"),
        _ => {}
    }
}

/// The operations every atomic type has, over its value type `$v`.
macro_rules! common {
    ($v:ty) => {
        /// Loads the value.
        #[track_caller]
        pub fn load(&self, order: Ordering) -> $v {
            check_load(order);
            point(self.addr(), AtomicKind::Load, order);
            // SAFETY: one task runs at a time and no scheduling point lies inside.
            let v = unsafe { *self.v.get() };
            traced(&v);
            v
        }

        /// Stores `val`.
        #[track_caller]
        pub fn store(&self, val: $v, order: Ordering) {
            check_store(order);
            point(self.addr(), AtomicKind::Store, order);
            // SAFETY: as in `load`.
            unsafe { *self.v.get() = val }
            traced(&val);
        }

        /// Stores `val`, returning the previous value.
        #[track_caller]
        pub fn swap(&self, val: $v, order: Ordering) -> $v {
            self.rmw(order, |_| val)
        }

        /// Stores `new` if the value is `current`; returns the previous value, `Ok` when it
        /// was `current`.
        #[track_caller]
        pub fn compare_exchange(
            &self,
            current: $v,
            new: $v,
            success: Ordering,
            failure: Ordering,
        ) -> Result<$v, $v> {
            check_failure(failure);
            let (s, a) = point(self.addr(), AtomicKind::Cas, success);
            // SAFETY: as in `load`.
            let old = unsafe { *self.v.get() };
            let ok = old == current;
            if ok {
                // SAFETY: as in `load`.
                unsafe { *self.v.get() = new };
            }
            port::cas_done(s, a, ordering_code(success), ordering_code(failure), ok);
            traced(if ok { &new } else { &old });
            if ok { Ok(old) } else { Err(old) }
        }

        /// As [`Self::compare_exchange`] (it never fails spuriously here).
        #[track_caller]
        pub fn compare_exchange_weak(
            &self,
            current: $v,
            new: $v,
            success: Ordering,
            failure: Ordering,
        ) -> Result<$v, $v> {
            self.compare_exchange(current, new, success, failure)
        }

        /// Applies `f` until a compare-and-swap installs its result (each load and each
        /// attempt a scheduling point), as `core`'s `fetch_update`.
        #[track_caller]
        pub fn fetch_update(
            &self,
            set_order: Ordering,
            fetch_order: Ordering,
            mut f: impl FnMut($v) -> Option<$v>,
        ) -> Result<$v, $v> {
            let mut prev = self.load(fetch_order);
            while let Some(next) = f(prev) {
                match self.compare_exchange_weak(prev, next, set_order, fetch_order) {
                    Ok(x) => return Ok(x),
                    Err(now) => prev = now,
                }
            }
            Err(prev)
        }

        /// The value, from an exclusive reference (no scheduling point).
        pub fn get_mut(&mut self) -> &mut $v {
            self.v.get_mut()
        }

        /// The value, consuming the atomic (no scheduling point).
        pub fn into_inner(self) -> $v {
            self.v.into_inner()
        }

        /// Whether operations are lock-free: always (the kernel's scheduling makes them
        /// atomic without a lock), as portable-atomic answers on single-core targets.
        pub fn is_lock_free() -> bool {
            true
        }

        /// As [`Self::is_lock_free`], at compile time.
        pub const fn is_always_lock_free() -> bool {
            true
        }

        /// A raw pointer to the value (accesses through it are not instrumented).
        pub const fn as_ptr(&self) -> *mut $v {
            self.v.as_ptr()
        }

        fn addr(&self) -> *const () {
            self.v.as_ptr() as *const ()
        }

        /// One read-modify-write step: the new value is `f(old)`; returns `old`.
        #[track_caller]
        fn rmw(&self, order: Ordering, f: impl FnOnce($v) -> $v) -> $v {
            point(self.addr(), AtomicKind::Rmw, order);
            // SAFETY: as in `load`.
            let (old, new) = unsafe {
                let old = *self.v.get();
                let new = f(old);
                *self.v.get() = new;
                (old, new)
            };
            traced(&new);
            old
        }
    };
}

macro_rules! atomic_int {
    ($($(#[$doc:meta])* $name:ident($int:ty);)*) => {$(
        $(#[$doc])*
        #[repr(C)]
        pub struct $name {
            v: RunCell<$int>,
        }

        // SAFETY: the kernel runs one task at a time and every access completes before the
        // next scheduling point.
        unsafe impl Sync for $name {}

        impl $name {
            /// An atomic holding `v`.
            pub const fn new(v: $int) -> Self {
                $name { v: RunCell::new(v) }
            }

            common!($int);

            /// Adds (wrapping), returning the previous value.
            #[track_caller]
            pub fn fetch_add(&self, val: $int, order: Ordering) -> $int {
                self.rmw(order, |v| v.wrapping_add(val))
            }

            /// Subtracts (wrapping), returning the previous value.
            #[track_caller]
            pub fn fetch_sub(&self, val: $int, order: Ordering) -> $int {
                self.rmw(order, |v| v.wrapping_sub(val))
            }

            /// Bitwise and, returning the previous value.
            #[track_caller]
            pub fn fetch_and(&self, val: $int, order: Ordering) -> $int {
                self.rmw(order, |v| v & val)
            }

            /// Bitwise nand, returning the previous value.
            #[track_caller]
            pub fn fetch_nand(&self, val: $int, order: Ordering) -> $int {
                self.rmw(order, |v| !(v & val))
            }

            /// Bitwise or, returning the previous value.
            #[track_caller]
            pub fn fetch_or(&self, val: $int, order: Ordering) -> $int {
                self.rmw(order, |v| v | val)
            }

            /// Bitwise xor, returning the previous value.
            #[track_caller]
            pub fn fetch_xor(&self, val: $int, order: Ordering) -> $int {
                self.rmw(order, |v| v ^ val)
            }

            /// Maximum, returning the previous value.
            #[track_caller]
            pub fn fetch_max(&self, val: $int, order: Ordering) -> $int {
                self.rmw(order, |v| v.max(val))
            }

            /// Minimum, returning the previous value.
            #[track_caller]
            pub fn fetch_min(&self, val: $int, order: Ordering) -> $int {
                self.rmw(order, |v| v.min(val))
            }

            // portable-atomic's additions (the `portable-atomic` shim re-exports these
            // types): each is one read-modify-write step, as there.

            /// Bitwise not, returning the previous value (portable-atomic).
            #[track_caller]
            pub fn fetch_not(&self, order: Ordering) -> $int {
                self.rmw(order, |v| !v)
            }

            /// Negation (wrapping), returning the previous value (portable-atomic).
            #[track_caller]
            pub fn fetch_neg(&self, order: Ordering) -> $int {
                self.rmw(order, |v| v.wrapping_neg())
            }

            /// Adds (wrapping) (portable-atomic).
            #[track_caller]
            pub fn add(&self, val: $int, order: Ordering) {
                self.fetch_add(val, order);
            }

            /// Subtracts (wrapping) (portable-atomic).
            #[track_caller]
            pub fn sub(&self, val: $int, order: Ordering) {
                self.fetch_sub(val, order);
            }

            /// Bitwise and (portable-atomic).
            #[track_caller]
            pub fn and(&self, val: $int, order: Ordering) {
                self.fetch_and(val, order);
            }

            /// Bitwise or (portable-atomic).
            #[track_caller]
            pub fn or(&self, val: $int, order: Ordering) {
                self.fetch_or(val, order);
            }

            /// Bitwise xor (portable-atomic).
            #[track_caller]
            pub fn xor(&self, val: $int, order: Ordering) {
                self.fetch_xor(val, order);
            }

            /// Bitwise not (portable-atomic).
            #[track_caller]
            pub fn not(&self, order: Ordering) {
                self.fetch_not(order);
            }

            /// Negation (wrapping) (portable-atomic).
            #[track_caller]
            pub fn neg(&self, order: Ordering) {
                self.fetch_neg(order);
            }

            /// Sets bit `bit` (modulo the width), returning whether it was set before
            /// (portable-atomic).
            #[track_caller]
            pub fn bit_set(&self, bit: u32, order: Ordering) -> bool {
                let mask = (1 as $int).wrapping_shl(bit);
                self.fetch_or(mask, order) & mask != 0
            }

            /// Clears bit `bit` (modulo the width), returning whether it was set before
            /// (portable-atomic).
            #[track_caller]
            pub fn bit_clear(&self, bit: u32, order: Ordering) -> bool {
                let mask = (1 as $int).wrapping_shl(bit);
                self.fetch_and(!mask, order) & mask != 0
            }

            /// Toggles bit `bit` (modulo the width), returning whether it was set before
            /// (portable-atomic).
            #[track_caller]
            pub fn bit_toggle(&self, bit: u32, order: Ordering) -> bool {
                let mask = (1 as $int).wrapping_shl(bit);
                self.fetch_xor(mask, order) & mask != 0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new(0)
            }
        }

        impl From<$int> for $name {
            fn from(v: $int) -> Self {
                Self::new(v)
            }
        }

        impl core::fmt::Debug for $name {
            /// Shows the value without a scheduling point.
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                // SAFETY: a plain read by the running task.
                core::fmt::Debug::fmt(unsafe { &*self.v.get() }, f)
            }
        }
    )*};
}

atomic_int! {
    /// An instrumented `AtomicU8`.
    AtomicU8(u8);
    /// An instrumented `AtomicU16`.
    AtomicU16(u16);
    /// An instrumented `AtomicU32`.
    AtomicU32(u32);
    /// An instrumented `AtomicU64` (available on every profile: see the module doc).
    AtomicU64(u64);
    /// An instrumented `AtomicUsize`.
    AtomicUsize(usize);
    /// An instrumented `AtomicI8`.
    AtomicI8(i8);
    /// An instrumented `AtomicI16`.
    AtomicI16(i16);
    /// An instrumented `AtomicI32`.
    AtomicI32(i32);
    /// An instrumented `AtomicI64`.
    AtomicI64(i64);
    /// An instrumented `AtomicIsize`.
    AtomicIsize(isize);
}

/// An instrumented `AtomicBool`.
#[repr(C)]
pub struct AtomicBool {
    v: RunCell<bool>,
}

// SAFETY: as for the integer atomics.
unsafe impl Sync for AtomicBool {}

impl AtomicBool {
    /// An atomic holding `v`.
    pub const fn new(v: bool) -> Self {
        AtomicBool { v: RunCell::new(v) }
    }

    common!(bool);

    /// Logical and, returning the previous value.
    #[track_caller]
    pub fn fetch_and(&self, val: bool, order: Ordering) -> bool {
        self.rmw(order, |v| v & val)
    }

    /// Logical nand, returning the previous value.
    #[track_caller]
    pub fn fetch_nand(&self, val: bool, order: Ordering) -> bool {
        self.rmw(order, |v| !(v & val))
    }

    /// Logical or, returning the previous value.
    #[track_caller]
    pub fn fetch_or(&self, val: bool, order: Ordering) -> bool {
        self.rmw(order, |v| v | val)
    }

    /// Logical xor, returning the previous value.
    #[track_caller]
    pub fn fetch_xor(&self, val: bool, order: Ordering) -> bool {
        self.rmw(order, |v| v ^ val)
    }

    /// Logical not, returning the previous value.
    #[track_caller]
    pub fn fetch_not(&self, order: Ordering) -> bool {
        self.rmw(order, |v| !v)
    }
}

impl Default for AtomicBool {
    fn default() -> Self {
        Self::new(false)
    }
}

impl From<bool> for AtomicBool {
    fn from(v: bool) -> Self {
        Self::new(v)
    }
}

impl core::fmt::Debug for AtomicBool {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // SAFETY: a plain read by the running task.
        core::fmt::Debug::fmt(unsafe { &*self.v.get() }, f)
    }
}

/// An instrumented `AtomicPtr`.
#[repr(C)]
pub struct AtomicPtr<T> {
    v: RunCell<*mut T>,
}

// SAFETY: as for the integer atomics (the pointer is only moved, never dereferenced here).
unsafe impl<T> Sync for AtomicPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Send for AtomicPtr<T> {}

impl<T> AtomicPtr<T> {
    /// An atomic holding `p`.
    pub const fn new(p: *mut T) -> Self {
        AtomicPtr { v: RunCell::new(p) }
    }

    common!(*mut T);
}

impl<T> Default for AtomicPtr<T> {
    fn default() -> Self {
        Self::new(core::ptr::null_mut())
    }
}

impl<T> core::fmt::Debug for AtomicPtr<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // SAFETY: a plain read by the running task.
        core::fmt::Debug::fmt(unsafe { &*self.v.get() }, f)
    }
}
