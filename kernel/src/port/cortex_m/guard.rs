//! Stack guards: what makes a task's stack overflow fault at once instead of running on
//! into the memory below. The lowest 32 bytes of each task's stack are its guard; one
//! implementation per kind of CPU, chosen by cfg:
//!
//! - ARMv7-M, and ARMv6-M parts with an MPU (PMSAv7): the guard is an MPU region that
//!   forbids every access (RBAR with VALID and REGION, RASR).
//! - ARMv8-M mainline (Cortex-M33 and the like): PSPLIM, the process stack pointer's limit,
//!   at the top of the guard, loaded with the task's stack pointer at every switch
//!   (`arch::switch`, [`limit`]). It faults at the instruction that would move the stack
//!   pointer below it, before anything is written, however large the frame (an MPU guard
//!   catches only a write that lands inside its 32 bytes), on every task. What it does not
//!   see is a write below the limit that moves no stack pointer: through a pointer (an index
//!   run below a local array), into the guard and on into the neighbour's memory. So the
//!   guard is also an MPU region (PMSAv8: RBAR with the base, access permission and XN, RLAR
//!   with the limit, the MAIR attribute index and ENABLE, after selecting it in RNR). PMSAv8
//!   has no "no access" permission: the region is read-only, and a write faults
//!   (MemManage, data access violation, the address in MMFAR). Reads pass, which lets QEMU's
//!   semihosting read its buffers through the MPU with the guard up. Where regions overlap,
//!   PMSAv8 faults every access (PMSAv7 lets the highest region win): a stack's region is
//!   lifted when its task ends, before the stack can be given to another task.
//!
//! Both MPUs guard the first tasks (one fewer than the CPU's regions: 7 on a Cortex-M3, 15
//! on QEMU's Cortex-M33, 7 on the RP2350's) with a region each, set when the task's stack is
//! laid out and lifted when the task ends, so a switch between them writes no MPU register
//! (under QEMU each MPU write flushes the translation cache); later tasks share the last
//! region, moved at every switch to them. Outside the regions the default memory map stays
//! in force (PRIVDEFENA).
//!
//! Without an MPU (a Cortex-M0) and without a stack limit, [`guard_init`] says so and the
//! port checks each task's canary (the same 32 bytes) whenever the task is switched out.

/// The MPU's registers (PMSAv6, PMSAv7 and PMSAv8 share these addresses).
const MPU_TYPE: *mut u32 = 0xE000_ED90 as *mut u32;
const MPU_CTRL: *mut u32 = 0xE000_ED94 as *mut u32;
const MPU_RNR: *mut u32 = 0xE000_ED98 as *mut u32;
const MPU_RBAR: *mut u32 = 0xE000_ED9C as *mut u32;
/// RASR (PMSAv7) or RLAR (PMSAv8): bit 0 enables the region in both.
const MPU_RASR_RLAR: *mut u32 = 0xE000_EDA0 as *mut u32;

/// The MPU region that guards the stack of a running task without a region of its own (the
/// CPU's last; on PMSAv7 it also wins where regions overlap). [`NO_MPU`]: the CPU has none.
static mut GUARD_REGION: u32 = NO_MPU;

/// [`GUARD_REGION`] of a CPU without an MPU (an ARMv8-M one: PSPLIM then guards alone).
const NO_MPU: u32 = u32::MAX;

/// Tasks `0..OWN_GUARDS` have a guard region of their own, region `t`, set when the task's
/// stack is laid out and cleared when the task ends: a switch between them writes no MPU
/// register. Tasks from `OWN_GUARDS` on share [`GUARD_REGION`], moved at every switch.
static mut OWN_GUARDS: u32 = 0;

/// The regions whose guard starts a 1 KiB page (bit `r`: region `r`). QEMU reads a
/// semihosting call's memory through the MPU by the first address of each page, so on
/// PMSAv7 such a guard denies the call its whole page; a guard anywhere else in a page
/// denies it nothing ([`page_guarded`], [`crate::port::unguarded`]).
static mut PAGE_GUARDS: u32 = 0;

/// Region `r` now guards the 32 bytes at `base`, or (`None`) none ([`PAGE_GUARDS`]; kept on
/// PMSAv7 only: [`page_guarded`] does not ask on PMSAv8, and a switch that moves the shared
/// guard pays nothing for it there).
///
/// # Safety
/// `r` is below 32; single core, no concurrent writer (the port's own calls).
#[inline(always)]
unsafe fn note_guard(r: u32, base: Option<usize>) {
    if cfg!(jostle_stack_limit) {
        return;
    }
    // SAFETY: per the contract.
    unsafe {
        if base.is_some_and(|b| b & 1023 == 0) {
            PAGE_GUARDS |= 1 << r;
        } else {
            PAGE_GUARDS &= !(1 << r);
        }
    }
}

/// Does a no-access guard start a 1 KiB page, so that QEMU would refuse a semihosting call
/// memory in that page ([`PAGE_GUARDS`])? Never on PMSAv8, whose guards are read-only.
#[inline(always)]
pub fn page_guarded() -> bool {
    // SAFETY: a word the port writes on this core only.
    !cfg!(jostle_stack_limit) && unsafe { PAGE_GUARDS } != 0
}

#[cfg(not(jostle_stack_limit))]
mod pmsa {
    //! PMSAv7 (and PMSAv6, which has the same layout): a region forbids every access.

    use super::{MPU_CTRL, MPU_RASR_RLAR, MPU_RBAR};

    /// A guard's RASR: XN (bit 28), AP = 000 (no access), SIZE = 4 (2^(4+1) = 32 bytes),
    /// ENABLE.
    const GUARD_RASR: u32 = (1 << 28) | (4 << 1) | 1;

    /// Nothing to set up besides the regions.
    ///
    /// # Safety
    /// As for [`super::guard_init`].
    pub unsafe fn init() {}

    /// Without a stack limit, the MPU is the only guard: no MPU, no guard.
    pub const GUARDED_WITHOUT_MPU: bool = false;

    /// Sets region `r` over the 32 bytes at `base` and enables it: RBAR with VALID (bit 4)
    /// selects the region and sets its base in one write (an enabled region keeps its size
    /// while it moves), RASR enables it.
    ///
    /// # Safety
    /// The MPU exists and has region `r`.
    #[inline(always)]
    pub unsafe fn set(r: u32, base: usize) {
        // SAFETY: per the contract.
        unsafe {
            MPU_RBAR.write_volatile(base as u32 | (1 << 4) | r);
            MPU_RASR_RLAR.write_volatile(GUARD_RASR);
        }
    }

    /// Runs `f` with the MPU off, then puts `MPU_CTRL` back as it was (see
    /// [`crate::port::unguarded`]: a no-access guard can make QEMU refuse a semihosting
    /// call's memory).
    ///
    /// # Safety
    /// The MPU exists; `f` must reach no scheduling point.
    #[inline(always)]
    pub unsafe fn unguarded<R>(f: impl FnOnce() -> R) -> R {
        // SAFETY: per the contract; restoring the saved control word restores the guard
        // exactly as it was (or leaves it off after `guard_off`).
        unsafe {
            let ctrl = MPU_CTRL.read_volatile();
            MPU_CTRL.write_volatile(0);
            core::arch::asm!("dsb", "isb", options(nostack, preserves_flags));
            let r = f();
            MPU_CTRL.write_volatile(ctrl);
            core::arch::asm!("dsb", "isb", options(nostack, preserves_flags));
            r
        }
    }
}

#[cfg(jostle_stack_limit)]
mod pmsa {
    //! PMSAv8: a region is read-only; PSPLIM (loaded by the switch) is the first guard.

    use super::{MPU_RASR_RLAR, MPU_RBAR, MPU_RNR};

    /// MAIR0: attribute 0, the guards' (RLAR's AttrIndx 0).
    const MPU_MAIR0: *mut u32 = 0xE000_EDC0 as *mut u32;

    /// Attribute 0: Normal memory, write-back, read and write allocate, inner and outer, as
    /// the default memory map makes SRAM (a region's attributes replace the map's).
    const GUARD_ATTR: u32 = 0xFF;

    /// A guard's RBAR below its base: SH = 00 (non-shareable), AP = 11 (read-only at any
    /// privilege), XN.
    const GUARD_RBAR: u32 = (0b11 << 1) | 1;

    /// A guard's RLAR below its limit: AttrIndx 0, ENABLE. The limit field is the address of
    /// the region's last 32-byte block: for a 32-byte guard, its base.
    const GUARD_RLAR: u32 = 1;

    /// Gives the guards' attribute index its memory attributes (MAIR0's other attributes
    /// are left as they are).
    ///
    /// # Safety
    /// As for [`super::guard_init`], on a CPU with an MPU.
    pub unsafe fn init() {
        // SAFETY: MAIR0 is an MPU register; attribute 0 is used only by the guards.
        unsafe {
            MPU_MAIR0.write_volatile((MPU_MAIR0.read_volatile() & !0xFF) | GUARD_ATTR);
        }
    }

    /// PSPLIM guards every task even without an MPU.
    pub const GUARDED_WITHOUT_MPU: bool = true;

    /// Sets region `r` over the 32 bytes at `base` and enables it. The region is disabled
    /// first: between the RBAR and the RLAR writes an enabled region would span from the
    /// new base to the old limit, which may cover the running stack.
    ///
    /// # Safety
    /// The MPU exists and has region `r`.
    #[inline(always)]
    pub unsafe fn set(r: u32, base: usize) {
        // SAFETY: per the contract.
        unsafe {
            MPU_RNR.write_volatile(r);
            if MPU_RASR_RLAR.read_volatile() & 1 != 0 {
                MPU_RASR_RLAR.write_volatile(0);
            }
            MPU_RBAR.write_volatile(base as u32 | GUARD_RBAR);
            MPU_RASR_RLAR.write_volatile(base as u32 | GUARD_RLAR);
        }
    }

    /// Runs `f`: a read-only guard does not stand in the way of a debugger's (or QEMU's
    /// semihosting) reads of memory, which QEMU translates as loads, as a no-access region
    /// does.
    ///
    /// # Safety
    /// None needed.
    #[inline(always)]
    pub unsafe fn unguarded<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
}

/// Sets up the stack guards: 32-byte regions, no execution and no access (PMSAv7) or
/// read-only (PMSAv8), one per task for the first tasks ([`guard_own`]) and one moved to
/// the running task's guard at every switch for the others ([`guard`]); the default memory
/// map stays in force elsewhere (PRIVDEFENA). Every guard region starts disabled. Returns
/// `false` when nothing guards the stacks (no MPU, no stack limit: the canary is then the
/// only guard).
///
/// # Safety
/// Before the first task of a run, in privileged thread mode.
pub unsafe fn guard_init() -> bool {
    // SAFETY: System Control Space registers, present on every Cortex-M (MPU_TYPE reads 0
    // without an MPU).
    unsafe {
        #[cfg(jostle_stack_limit)]
        main_stack::limit();
        let regions = (MPU_TYPE.read_volatile() >> 8) & 0xFF;
        if regions == 0 {
            GUARD_REGION = NO_MPU;
            OWN_GUARDS = u32::MAX;
            return pmsa::GUARDED_WITHOUT_MPU;
        }
        GUARD_REGION = regions - 1;
        OWN_GUARDS = regions - 1;
        PAGE_GUARDS = 0;
        pmsa::init();
        // Only the regions still enabled are written: under QEMU every RBAR, RASR/RLAR or
        // CTRL write flushes the translation cache (RNR and reads do not), and a run's tasks
        // leave theirs disabled when they end.
        for r in 0..regions {
            MPU_RNR.write_volatile(r);
            if MPU_RASR_RLAR.read_volatile() & 1 != 0 {
                MPU_RASR_RLAR.write_volatile(0);
            }
        }
        // ENABLE | PRIVDEFENA; HFNMIENA clear, so fault handlers may read the guard.
        MPU_CTRL.write_volatile(0b101);
        core::arch::asm!("dsb", "isb");
        true
    }
}

/// Does task `t` have a guard of its own (see [`OWN_GUARDS`]; without an MPU, PSPLIM is
/// every task's own)?
#[inline(always)]
pub fn owns_guard(t: u8) -> bool {
    // SAFETY: written only by `guard_init`, before the run's first task.
    u32::from(t) < unsafe { OWN_GUARDS }
}

/// Guards the stack of task `t` (one that [`owns_guard`]) whose lowest address is `base`
/// (32-byte aligned), from now until [`unguard`].
///
/// # Safety
/// After [`guard_init`] returned `true`; nothing may write `base..base + 32` afterwards.
pub unsafe fn guard_own(t: u8, base: usize) {
    // SAFETY: region `t` exists (`t < OWN_GUARDS`, one fewer than the regions); the `dsb`
    // makes it take effect before the task runs.
    unsafe {
        if GUARD_REGION == NO_MPU {
            return;
        }
        pmsa::set(u32::from(t), base);
        note_guard(u32::from(t), Some(base));
        core::arch::asm!("dsb", options(nostack, preserves_flags));
    }
}

/// Lifts task `t`'s guard region (it ended: its stack may be laid out again for another
/// task). For a task that does not [`owns_guard`], lifts the shared guard.
///
/// # Safety
/// After [`guard_init`] returned `true`.
pub unsafe fn unguard(t: u8) {
    // SAFETY: selecting a region and disabling it.
    unsafe {
        if GUARD_REGION == NO_MPU {
            return;
        }
        let region = if owns_guard(t) {
            u32::from(t)
        } else {
            GUARD_REGION
        };
        MPU_RNR.write_volatile(region);
        MPU_RASR_RLAR.write_volatile(0);
        note_guard(region, None);
        core::arch::asm!("dsb", options(nostack, preserves_flags));
    }
}

/// Moves the shared guard to the stack whose lowest address is `base` (32-byte aligned),
/// for a task that does not [`owns_guard`] (so the CPU has an MPU).
///
/// # Safety
/// After [`guard_init`] returned `true`.
#[inline(always)]
pub unsafe fn guard(base: usize) {
    // SAFETY: the shared region exists; the `dsb` makes it take effect before the task runs
    // (the exception return or the switch's `pop` is the synchronising point for
    // instruction fetches).
    unsafe {
        pmsa::set(GUARD_REGION, base);
        note_guard(GUARD_REGION, Some(base));
        core::arch::asm!("dsb", options(nostack, preserves_flags));
    }
}

/// Runs `f` with the guards out of the way of QEMU's semihosting (see
/// [`crate::port::unguarded`]).
///
/// # Safety
/// After [`guard_init`] returned `true`; `f` must reach no scheduling point.
#[inline(always)]
pub unsafe fn unguarded<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: per the contract (on PMSAv7 `guard_init` returns `true` only with an MPU).
    unsafe { pmsa::unguarded(f) }
}

/// Turns the MPU off (before a restart, whose startup code writes every stack). ARMv8-M's
/// stack limit needs nothing: startup runs on the main stack, and `arch::enter` clears the
/// limit before it loads the first task's stack pointer.
#[inline(always)]
pub fn guard_off() {
    // SAFETY: clearing MPU_CTRL only restores the default memory map (without an MPU the
    // register reads as zero and ignores writes).
    unsafe {
        MPU_CTRL.write_volatile(0);
        core::arch::asm!("dsb", "isb", options(nostack, preserves_flags));
    }
}

#[cfg(jostle_stack_limit)]
pub mod main_stack {
    //! The main stack (MSP: every handler's, and a framework's task 0 adopted on it), on
    //! ARMv8-M mainline: MSPLIM at its bottom, so a handler that overflows it faults at the
    //! instruction that would move the stack pointer below (STKOF) instead of writing the
    //! statics under it, and the run ends as that handler's `stack_overflow`. The limit sits
    //! [`FAULT_RESERVE`] bytes above the bottom: the HardFault handler clears MSPLIM first
    //! thing (`crate::exception_handlers!`) and reports from the reserve.

    unsafe extern "C" {
        /// The main stack's lowest address: the end of the statics (`.uninit` included),
        /// from cortex-m-rt's linker script (0.7.5 and later, which every board requires).
        static _stack_end: u32;
    }

    /// Bytes below the limit for the HardFault handler's own frames, which report the
    /// overflow and end the run: its report of `handler_overflow` on the mps2-an505 wrote
    /// 196 of them (the lowest word written below the limit, read before the run's end).
    pub const FAULT_RESERVE: usize = 1024;

    /// The main stack: its lowest address and its top (the vector table's first word, the
    /// stack pointer a reset and the kernel's `enter` give it).
    pub fn bounds() -> (usize, usize) {
        // SAFETY: VTOR and the vector table's first word are always readable; only the
        // address of `_stack_end` is taken.
        unsafe {
            let vtor = (*cortex_m::peripheral::SCB::PTR).vtor.read();
            let top = (vtor as *const u32).read_volatile() as usize;
            (&raw const _stack_end as usize, top)
        }
    }

    /// Sets MSPLIM [`FAULT_RESERVE`] bytes above the main stack's bottom.
    ///
    /// # Safety
    /// Privileged; the main stack pointer above that limit (at a run's start it is near the
    /// top).
    pub unsafe fn limit() {
        let limit = (bounds().0 + FAULT_RESERVE) as u32;
        // SAFETY: per the contract.
        unsafe { core::arch::asm!("msr msplim, {}", in(reg) limit, options(nomem, nostack)) };
    }
}

/// The lowest address the stack whose lowest address is `base` may hold: above its 32-byte
/// guard (ARMv8-M's PSPLIM).
#[inline(always)]
pub fn limit(base: usize) -> u32 {
    (base + super::super::CANARY_WORDS * 4) as u32
}
