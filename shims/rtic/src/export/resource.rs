//! One lock section of a resource, as both backends' `lock` make it: the Stack Resource
//! Policy's ceiling as the kernel's priority mask (a scheduling point and an event naming the
//! resource), the section reported as an access of the resource (a read, and a write when
//! its bytes changed), and the mask restored (another point).

use jostle_kernel::op::Op;
use jostle_kernel::port;

/// The code address where `lock` was inlined into the task: the site of its events, which
/// the host resolves through the ELF's line tables to the task's `.lock(..)` call (the
/// expansion's `Mutex::lock` carries no caller location).
#[inline(always)]
pub(super) fn here() -> u32 {
    let pc: u32;
    // SAFETY: reads the program counter.
    unsafe {
        core::arch::asm!("mov {}, pc", out(reg) pc, options(nomem, nostack, preserves_flags))
    };
    pc
}

/// Runs `f` on the resource at `ptr` under priority mask `level` (the ceiling, in the NVIC's
/// numbering; BASEPRI_MAX: a mask already stricter stays), reporting the section.
#[inline(always)]
pub(super) fn section<T, R>(s: u32, ptr: *mut T, level: u8, f: impl FnOnce(&mut T) -> R) -> R {
    let r = port::addr(ptr as *const ());
    let was = port::prio_mask();
    let raised = if was == 0 || level < was { level } else { was };
    port::point(Op::PrioMask {
        s,
        level: raised,
        r,
    });
    let out = accessed(s, ptr, f);
    port::point(Op::PrioMask { s, level: was, r });
    out
}

/// `f` on the resource at `ptr`, inside its lock: a read of the resource before, a write
/// after when `f` changed its bytes.
#[inline(always)]
pub(super) fn accessed<T, R>(s: u32, ptr: *mut T, f: impl FnOnce(&mut T) -> R) -> R {
    let a = port::addr(ptr as *const ());
    port::point(Op::Read { s, a });
    let before = digest(ptr);
    // SAFETY: the expansion passes its resource's pointer; the section is exclusive (the
    // ceiling masks every other context that locks it).
    let out = f(unsafe { &mut *ptr });
    if digest(ptr) != before {
        port::point(Op::Write { s, a });
    }
    out
}

/// FNV-1a of the resource's bytes, to tell whether a section wrote it. (Padding bytes are
/// read too: a change there alone reads as a write.)
fn digest<T>(ptr: *const T) -> u32 {
    let bytes = ptr as *const u8;
    let mut h: u32 = 0x811C_9DC5;
    for i in 0..size_of::<T>() {
        // SAFETY: `size_of::<T>()` bytes of the resource, read as bytes.
        h ^= u32::from(unsafe { bytes.add(i).read_volatile() });
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}
