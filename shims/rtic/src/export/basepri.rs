//! `lock` of the BASEPRI backends (ARMv7-M, ARMv8-M Mainline).

use super::cortex_logical2hw;
use super::resource::{accessed, here, section};

/// The expansion's `Mutex::lock` of a resource with priority ceiling `ceiling` (logical): the
/// system ceiling becomes the higher of the current one and the resource's, and is
/// restored afterwards; at the highest ceiling, as RTIC, a critical section.
///
/// # Safety
/// `ptr` is the resource's storage; the expansion guarantees the ceiling analysis.
#[inline(always)]
pub unsafe fn lock<T, R>(
    ptr: *mut T,
    ceiling: u8,
    nvic_prio_bits: u8,
    f: impl FnOnce(&mut T) -> R,
) -> R {
    let s = here();
    if ceiling == (1 << nvic_prio_bits) {
        critical_section::with(|_| accessed(s, ptr, f))
    } else {
        section(s, ptr, cortex_logical2hw(ceiling, nvic_prio_bits), f)
    }
}
