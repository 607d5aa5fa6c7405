//! Stack guards: what makes a task's stack overflow fault at once instead of running on
//! into the memory below. One implementation per kind of CPU, chosen by cfg:
//!
//! - [`mpu`] (ARMv7-M, and ARMv6-M parts with an MPU): the lowest 32 bytes of each task's
//!   stack are an MPU region (PMSAv7: RBAR with VALID and REGION, RASR) that forbids every
//!   access.
//! - [`stack_limit`] (ARMv8-M mainline: Cortex-M33 and the like): PSPLIM, the process stack
//!   pointer's limit, at the top of those 32 bytes. It faults at the instruction that would
//!   move the stack pointer below it, before anything is written, however large the frame
//!   (an MPU guard catches only a write that lands inside its 32 bytes), on every task (no
//!   region count to run out of), and costs one `msr` per switch and no MPU write (under
//!   QEMU each MPU write flushes the translation cache). ARMv8-M's MPU (PMSAv8: RBAR/RLAR,
//!   which has no "no access" permission at all) is left off: behind PSPLIM a guard region
//!   could never be the first to catch an overflow.
//!
//! Without either (a Cortex-M0 has no MPU), [`guard_init`] says so and the port checks each
//! task's canary (the same 32 bytes) whenever the task is switched out.

#[cfg(not(jostle_stack_limit))]
mod mpu {
    //! PMSAv7 regions (PMSAv6 has the same layout): the first tasks each have a region of
    //! their own, later tasks share one moved at every switch to them.

    /// The MPU's registers (PMSAv6/PMSAv7 share this layout).
    const MPU_TYPE: *mut u32 = 0xE000_ED90 as *mut u32;
    const MPU_CTRL: *mut u32 = 0xE000_ED94 as *mut u32;
    const MPU_RNR: *mut u32 = 0xE000_ED98 as *mut u32;
    const MPU_RBAR: *mut u32 = 0xE000_ED9C as *mut u32;
    const MPU_RASR: *mut u32 = 0xE000_EDA0 as *mut u32;

    /// The MPU region that guards the stack of a running task without a region of its own
    /// (the highest-numbered region wins where regions overlap, so it is the CPU's last).
    static mut GUARD_REGION: u32 = 0;

    /// Tasks `0..OWN_GUARDS` have a guard region of their own, region `t`, set when the task's
    /// stack is laid out and cleared when the task ends: a switch between them writes no MPU
    /// register. Tasks from `OWN_GUARDS` on share [`GUARD_REGION`], moved at every switch.
    static mut OWN_GUARDS: u32 = 0;

    /// A guard's attributes: XN (bit 28), AP = 000 (no access), SIZE = 4 (2^(4+1) = 32 bytes),
    /// ENABLE.
    const GUARD_RASR: u32 = (1 << 28) | (4 << 1) | 1;

    /// Sets up the stack guards: 32-byte regions, no access, no execution, one per task for
    /// the first tasks ([`guard_own`]) and one moved to the running task's guard at every
    /// switch for the others ([`guard`]); the default memory map stays in force elsewhere
    /// (PRIVDEFENA). Every guard region starts disabled. Returns `false`, leaving the MPU
    /// alone, when the CPU has none (the canary is then the only guard).
    ///
    /// # Safety
    /// Before the first task of a run, in privileged thread mode.
    pub unsafe fn guard_init() -> bool {
        // SAFETY: System Control Space registers, present on every Cortex-M (MPU_TYPE reads 0
        // without an MPU).
        unsafe {
            let regions = (MPU_TYPE.read_volatile() >> 8) & 0xFF;
            if regions == 0 {
                return false;
            }
            GUARD_REGION = regions - 1;
            OWN_GUARDS = regions - 1;
            // Only the regions still enabled are written: under QEMU every RBAR, RASR or CTRL
            // write flushes the translation cache (RNR and reads do not), and a run's tasks
            // leave theirs disabled when they end.
            for r in 0..regions {
                MPU_RNR.write_volatile(r);
                if MPU_RASR.read_volatile() & 1 != 0 {
                    MPU_RASR.write_volatile(0);
                }
            }
            // ENABLE | PRIVDEFENA; HFNMIENA clear, so fault handlers may read the guard.
            MPU_CTRL.write_volatile(0b101);
            core::arch::asm!("dsb", "isb");
            true
        }
    }

    /// Does task `t` have a guard region of its own (see [`OWN_GUARDS`])?
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
        // SAFETY: RBAR with VALID (bit 4) selects region `t` and sets its base; RASR then
        // enables it; the `dsb` makes it take effect before the task runs.
        unsafe {
            MPU_RBAR.write_volatile(base as u32 | (1 << 4) | u32::from(t));
            MPU_RASR.write_volatile(GUARD_RASR);
            core::arch::asm!("dsb", options(nostack, preserves_flags));
        }
    }

    /// Lifts task `t`'s guard (it ended: its stack may be laid out again for another task).
    /// For a task that does not [`owns_guard`], lifts the shared guard.
    ///
    /// # Safety
    /// After [`guard_init`] returned `true`.
    pub unsafe fn unguard(t: u8) {
        // SAFETY: selecting a region and disabling it.
        unsafe {
            let region = if owns_guard(t) {
                u32::from(t)
            } else {
                GUARD_REGION
            };
            MPU_RNR.write_volatile(region);
            MPU_RASR.write_volatile(0);
            core::arch::asm!("dsb", options(nostack, preserves_flags));
        }
    }

    /// Moves the shared guard to the stack whose lowest address is `base` (32-byte aligned),
    /// for a task that does not [`owns_guard`].
    ///
    /// # Safety
    /// After [`guard_init`] returned `true`.
    #[inline(always)]
    pub unsafe fn guard(base: usize) {
        // SAFETY: RBAR with VALID (bit 4) selects the shared region and sets its base in one
        // write, RASR enables it (it starts disabled); the `dsb` makes it take effect before
        // the task runs (the exception return or the switch's `pop` is the synchronising point
        // for instruction fetches).
        unsafe {
            MPU_RBAR.write_volatile(base as u32 | (1 << 4) | GUARD_REGION);
            MPU_RASR.write_volatile(GUARD_RASR);
            core::arch::asm!("dsb", options(nostack, preserves_flags));
        }
    }

    /// Runs `f` with the MPU off, then puts `MPU_CTRL` back as it was (see
    /// [`crate::port::unguarded`]).
    ///
    /// # Safety
    /// After [`guard_init`] returned `true`; `f` must reach no scheduling point.
    #[inline(always)]
    pub unsafe fn unguarded<R>(f: impl FnOnce() -> R) -> R {
        // SAFETY: per the contract, the MPU exists; restoring the saved control word restores
        // the guard exactly as it was (or leaves it off after `guard_off`).
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

    /// Turns the MPU off (before a restart, whose startup code writes every stack).
    #[inline(always)]
    pub fn guard_off() {
        // SAFETY: clearing MPU_CTRL only restores the default memory map.
        unsafe {
            MPU_CTRL.write_volatile(0);
            core::arch::asm!("dsb", "isb", options(nostack, preserves_flags));
        }
    }
}

#[cfg(jostle_stack_limit)]
mod stack_limit {
    //! PSPLIM: the switch loads each task's limit with its stack pointer (`arch::switch`,
    //! [`super::limit`]); nothing else is written when tasks start, switch or end.

    /// The CPU always has the stack limit registers: every task is guarded.
    ///
    /// # Safety
    /// As for the MPU's `guard_init`.
    pub unsafe fn guard_init() -> bool {
        true
    }

    /// Every task's guard is its own: the limit goes with the task's stack pointer.
    #[inline(always)]
    pub fn owns_guard(_t: u8) -> bool {
        true
    }

    /// Nothing to set up: the task's limit is loaded whenever it is switched in.
    ///
    /// # Safety
    /// None needed.
    pub unsafe fn guard_own(_t: u8, _base: usize) {}

    /// Nothing to lift: the limit leaves with the task's stack pointer.
    ///
    /// # Safety
    /// None needed.
    pub unsafe fn unguard(_t: u8) {}

    /// Unused ([`owns_guard`] is always true).
    ///
    /// # Safety
    /// None needed.
    #[inline(always)]
    pub unsafe fn guard(_base: usize) {}

    /// Runs `f`: a stack limit does not stand in the way of a debugger's (or QEMU's
    /// semihosting) reads of memory, as an MPU region does.
    ///
    /// # Safety
    /// None needed.
    #[inline(always)]
    pub unsafe fn unguarded<R>(f: impl FnOnce() -> R) -> R {
        f()
    }

    /// Nothing to turn off: startup runs on the main stack, and `arch::enter` clears the
    /// limit before it loads the first task's stack pointer.
    #[inline(always)]
    pub fn guard_off() {}
}

/// The lowest address the stack whose lowest address is `base` may hold: above its 32-byte
/// guard.
#[inline(always)]
pub fn limit(base: usize) -> u32 {
    (base + super::super::CANARY_WORDS * 4) as u32
}

#[cfg(not(jostle_stack_limit))]
pub use mpu::*;
#[cfg(jostle_stack_limit)]
pub use stack_limit::*;
