//! `lock` of the source-masking backends (ARMv6-M, ARMv8-M Baseline: no BASEPRI). RTIC masks
//! the NVIC lines of every priority up to the ceiling; under Jostle that is the kernel's
//! priority mask at the most urgent of those lines' priorities, which masks the same
//! sources.

use super::resource::{accessed, here, section};

/// The lines of one logical priority, as bits (32 lines per word).
#[derive(Clone, Copy)]
pub struct Mask<const M: usize>([u32; M]);

/// The mask of the lines `list_of_shifts`.
pub const fn create_mask<const N: usize, const M: usize>(list_of_shifts: [u32; N]) -> Mask<M> {
    let mut mask = [0u32; M];
    let mut i = 0;
    while i < N {
        let line = list_of_shifts[i];
        if line as usize / 32 >= M {
            panic!("an interrupt line beyond the mask: is the backend the core's?");
        }
        mask[line as usize / 32] |= 1 << (line % 32);
        i += 1;
    }
    Mask(mask)
}

/// The words a mask needs for lines up to the highest of `ids`.
pub const fn compute_mask_chunks<const L: usize>(ids: [u32; L]) -> usize {
    let mut max = 0;
    let mut i = 0;
    while i < L {
        if ids[i] as usize > max {
            max = ids[i] as usize;
        }
        i += 1;
    }
    (max + 32) / 32
}

/// The expansion's `Mutex::lock` of a resource with priority ceiling `ceiling` (logical);
/// `masks[p - 1]` holds the lines of logical priority `p`. From ceiling 4 on, as RTIC, a
/// critical section.
///
/// # Safety
/// `ptr` is the resource's storage; the expansion guarantees the ceiling analysis.
#[inline(always)]
pub unsafe fn lock<T, R, const M: usize>(
    ptr: *mut T,
    ceiling: u8,
    masks: &[Mask<M>; 3],
    f: impl FnOnce(&mut T) -> R,
) -> R {
    let s = here();
    if ceiling >= 4 {
        return critical_section::with(|_| accessed(s, ptr, f));
    }
    // The most urgent registered priority among the masked lines: every source at it or
    // less urgent is masked, which is exactly the lines of logical priority up to the
    // ceiling.
    let mut level = 0u8;
    for mask in &masks[..ceiling as usize] {
        for (w, bits) in mask.0.iter().enumerate() {
            for b in 0..32 {
                if bits & (1 << b) != 0
                    && let Some(p) = jostle_kernel::port::source_priority((w * 32 + b) as u16)
                    && (level == 0 || p < level)
                {
                    level = p;
                }
            }
        }
    }
    if level == 0 {
        // No line at or below the ceiling is a source: nothing to mask.
        return accessed(s, ptr, f);
    }
    section(s, ptr, level, f)
}
