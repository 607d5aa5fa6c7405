//! The context switch, in assembly, for every Cortex-M profile.
//!
//! A task's context is its stack pointer; everything else lives on its stack. The switch
//! is a normal function call, so the caller has already saved r0–r3, r12 and the flags as
//! the AAPCS requires; the switch pushes the callee-saved registers (r4–r11, and s16–s31
//! with a hardware FPU) and the return address, stores sp in `*save`, loads `next`, and pops
//! the other task's registers, returning into it. On ARMv7-M that is five instructions.
//!
//! ARMv6-M (Cortex-M0/M0+) can push only r0–r7 and lr, so r8–r11 travel through r4–r7.
//!
//! A new task's stack is laid out as if it had called the switch from the first instruction
//! of [`task_trampoline`]: zeroed callee-saved registers, except r4 which holds the entry
//! function, and the trampoline's address as the saved return address.

use core::arch::naked_asm;

/// Saves the running context's stack pointer in `*save` and resumes the context whose
/// stack pointer is `next`.
///
/// # Safety
/// `next` must be a stack pointer produced by this function or by [`initial_frame`].
#[cfg(not(jostle_armv6m))]
#[unsafe(naked)]
pub unsafe extern "C" fn switch(save: *mut u32, next: u32) {
    #[cfg(not(jostle_fpu))]
    naked_asm!(
        "push {{r4-r11, lr}}",
        "str sp, [r0]",
        "mov sp, r1",
        "pop {{r4-r11, pc}}",
    );
    #[cfg(jostle_fpu)]
    naked_asm!(
        // The assembler needs to be told the FPU exists (any FPv4/FPv5 has s16–s31).
        ".fpu fpv4-sp-d16",
        "push {{r4-r11, lr}}",
        "vpush {{s16-s31}}",
        "str sp, [r0]",
        "mov sp, r1",
        "vpop {{s16-s31}}",
        "pop {{r4-r11, pc}}",
    );
}

/// ARMv6-M variant of the switch (see the module doc).
///
/// # Safety
/// As for the ARMv7-M variant.
#[cfg(jostle_armv6m)]
#[unsafe(naked)]
pub unsafe extern "C" fn switch(save: *mut u32, next: u32) {
    naked_asm!(
        "push {{r4-r7, lr}}",
        "mov r4, r8",
        "mov r5, r9",
        "mov r6, r10",
        "mov r7, r11",
        "push {{r4-r7}}",
        "mov r2, sp",
        "str r2, [r0]",
        "mov sp, r1",
        "pop {{r4-r7}}",
        "mov r8, r4",
        "mov r9, r5",
        "mov r10, r6",
        "mov r11, r7",
        "pop {{r4-r7, pc}}",
    );
}

/// Leaves the boot context for good: the main stack pointer goes back to `msp` (the top of
/// the boot stack, which exception handlers then have whole), thread mode switches to the
/// process stack at `sp` (a frame made by [`initial_frame`] or saved by [`switch`]), and the
/// task's registers are popped as [`switch`] pops them.
///
/// Doing this in one piece of assembly is the point: Rust code must never run across the
/// change of stack pointer, or it would find its saved registers and locals on the other
/// stack (which is what went wrong without LTO, when that change was a function of its own).
///
/// # Safety
/// Thread mode, privileged, on the main stack; `sp` as for [`switch`]'s `next`.
#[cfg(not(jostle_armv6m))]
#[unsafe(naked)]
pub unsafe extern "C" fn enter(sp: u32, msp: u32) -> ! {
    #[cfg(not(jostle_fpu))]
    naked_asm!(
        "msr psp, r0",
        "msr msp, r1",
        "movs r2, #2",
        "msr control, r2",
        "isb",
        "pop {{r4-r11, pc}}",
    );
    #[cfg(jostle_fpu)]
    naked_asm!(
        ".fpu fpv4-sp-d16",
        "msr psp, r0",
        "msr msp, r1",
        "movs r2, #2",
        "msr control, r2",
        "isb",
        "vpop {{s16-s31}}",
        "pop {{r4-r11, pc}}",
    );
}

/// ARMv6-M variant of [`enter`] (r8–r11 through r4–r7, as in its [`switch`]).
///
/// # Safety
/// As for the ARMv7-M variant.
#[cfg(jostle_armv6m)]
#[unsafe(naked)]
pub unsafe extern "C" fn enter(sp: u32, msp: u32) -> ! {
    naked_asm!(
        "msr psp, r0",
        "msr msp, r1",
        "movs r2, #2",
        "msr control, r2",
        "isb",
        "pop {{r4-r7}}",
        "mov r8, r4",
        "mov r9, r5",
        "mov r10, r6",
        "mov r11, r7",
        "pop {{r4-r7, pc}}",
    );
}

/// First code a new task runs: moves the entry function from r4 into r0 and calls
/// [`super::task_entry`], which never returns.
#[unsafe(naked)]
unsafe extern "C" fn task_trampoline() {
    naked_asm!(
        "mov r0, r4",
        "bl {entry}",
        "udf #0",
        entry = sym super::task_entry,
    );
}

/// Words the switch keeps on a stack.
#[cfg(not(jostle_fpu))]
const FRAME_WORDS: usize = 9;
#[cfg(jostle_fpu)]
const FRAME_WORDS: usize = 9 + 16;

/// Index, within a frame, of the saved r4 and of the saved return address.
#[cfg(not(jostle_armv6m))]
const R4_AT: usize = FRAME_WORDS - 9;
#[cfg(jostle_armv6m)]
const R4_AT: usize = 4;
const PC_AT: usize = FRAME_WORDS - 1;

/// Writes a new task's first frame below `top` (8-byte aligned) and returns its stack
/// pointer, ready for [`switch`].
///
/// # Safety
/// `top` must be the 8-aligned end of a writable stack with room for the frame.
pub unsafe fn initial_frame(top: *mut u32, entry: fn()) -> u32 {
    // SAFETY: the caller gives us FRAME_WORDS writable words below `top`.
    unsafe {
        let sp = top.sub(FRAME_WORDS);
        for i in 0..FRAME_WORDS {
            sp.add(i).write_volatile(0);
        }
        sp.add(R4_AT).write_volatile(entry as usize as u32);
        sp.add(PC_AT)
            .write_volatile(task_trampoline as unsafe extern "C" fn() as usize as u32 | 1);
        sp as u32
    }
}

/// Starts the program again from its reset vector without resetting the CPU (a *warm
/// restart*): the stack pointer and the entry come from the vector table at `vtor`, thread
/// mode goes back to the main stack, privileged, with interrupts enabled, as after a reset.
/// Startup code then initialises `.data` and `.bss` again. Under QEMU this spares the system
/// reset, which throws away the translated code; peripherals are not reset, which the
/// kernel does not need (it uses none between runs).
///
/// # Safety
/// Thread mode only; nothing of the current program state may be needed afterwards.
pub unsafe fn restart(vtor: u32) -> ! {
    // SAFETY: per the contract; the vector table's first two words are the initial stack
    // pointer and the reset handler's address (Thumb bit set).
    unsafe {
        let table = vtor as *const u32;
        let sp = table.read_volatile();
        let reset = table.add(1).read_volatile();
        core::arch::asm!(
            "msr control, {zero}",
            "isb",
            "msr msp, {sp}",
            "cpsie i",
            "bx {reset}",
            zero = in(reg) 0u32,
            sp = in(reg) sp,
            reset = in(reg) reset,
            options(noreturn),
        );
    }
}

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
/// [`super::unguarded`]).
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
