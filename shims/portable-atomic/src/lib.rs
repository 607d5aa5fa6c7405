#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

pub use jostle_kernel::sync::atomic::{
    AtomicBool, AtomicI8, AtomicI16, AtomicI32, AtomicI64, AtomicIsize, AtomicPtr, AtomicU8,
    AtomicU16, AtomicU32, AtomicU64, AtomicUsize, Ordering, compiler_fence, fence,
};

/// `core::hint`, with `spin_loop` a scheduling point.
pub mod hint {
    pub use core::hint::{assert_unchecked, black_box, unreachable_unchecked};
    pub use jostle_kernel::hint::spin_loop;
}
