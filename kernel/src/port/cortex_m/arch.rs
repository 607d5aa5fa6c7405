//! The context switch, in assembly, for every Cortex-M profile.
//!
//! A task's context is its stack pointer; everything else lives on its stack. The switch
//! is a normal function call, so the caller has already saved r0–r3, r12 and the flags as
//! the AAPCS requires; the switch pushes the callee-saved registers (r4–r11) and the return
//! address, stores sp in `*save`, loads `next`, and pops the other task's registers,
//! returning into it. On ARMv7-M that is five instructions.
//!
//! With a hardware FPU (`eabihf` targets: Cortex-M4F, M7, M33) a task's floating-point state
//! is its own too: the callee-saved s16–s31 (d8–d15 on a double-precision FPU) and FPSCR,
//! whose rounding mode and flush-to-zero bits a task may set for itself, as it would under a
//! preemptive RTOS whose switch stacks them. s0–s15 need no saving here (the call clobbers
//! them). An interrupt handler's float registers are the hardware's: a fired handler is a
//! real exception, which stacks s0–s15 and FPSCR lazily in the frame it pushes on the task's
//! stack (CONTROL.FPCA is set once a task ran an FP instruction, and the switch is one);
//! handlers never switch tasks, so no lazily reserved frame is ever left behind by a switch.
//!
//! ARMv6-M (Cortex-M0/M0+) can push only r0–r7 and lr, so r8–r11 travel through r4–r7.
//!
//! ARMv8-M mainline (Cortex-M33) guards a task's stack with PSPLIM, the process stack
//! pointer's limit, besides its MPU region (see `guard`): the switch loads the next task's limit between the two
//! stack pointers (its third argument), so the limit always belongs to the stack in use.
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
#[cfg(not(any(jostle_armv6m, jostle_stack_limit)))]
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
        // Naked functions are assembled without the target's FPU: name the largest (a later
        // piece of assembly in the image may use any); s16–s31 and FPSCR are in every one.
        ".fpu fpv5-d16",
        "push {{r4-r11, lr}}",
        "vmrs r3, fpscr",
        "vpush {{s16-s31}}",
        "push {{r3}}",
        "str sp, [r0]",
        "mov sp, r1",
        "pop {{r3}}",
        "vpop {{s16-s31}}",
        "vmsr fpscr, r3",
        "pop {{r4-r11, pc}}",
    );
}

/// ARMv8-M mainline variant of the switch: `limit` is the next task's PSPLIM, loaded before
/// its stack pointer (a stack pointer below the limit in force faults at once).
///
/// # Safety
/// As for the ARMv7-M variant; `limit` must be at or below `next`.
#[cfg(jostle_stack_limit)]
#[unsafe(naked)]
pub unsafe extern "C" fn switch(save: *mut u32, next: u32, limit: u32) {
    #[cfg(not(jostle_fpu))]
    naked_asm!(
        "push {{r4-r11, lr}}",
        "str sp, [r0]",
        "msr psplim, r2",
        "mov sp, r1",
        "pop {{r4-r11, pc}}",
    );
    #[cfg(jostle_fpu)]
    naked_asm!(
        // Naked functions are assembled without the target's FPU: name the largest (a later
        // piece of assembly in the image may use any); s16–s31 and FPSCR are in every one.
        ".fpu fpv5-d16",
        "push {{r4-r11, lr}}",
        "vmrs r3, fpscr",
        "vpush {{s16-s31}}",
        "push {{r3}}",
        "str sp, [r0]",
        "msr psplim, r2",
        "mov sp, r1",
        "pop {{r3}}",
        "vpop {{s16-s31}}",
        "vmsr fpscr, r3",
        "pop {{r4-r11, pc}}",
    );
}

/// Resumes task stack `next` (whose stack's lowest address is `base`), saving the running
/// one's stack pointer in `*save`: [`switch`], with the next stack's limit where the CPU has
/// one. Inlined, so that where it has none the base costs nothing.
///
/// # Safety
/// As for [`switch`]; `base` is the lowest address of the stack `next` points into.
#[inline(always)]
pub unsafe fn switch_stack(save: *mut u32, next: u32, base: usize) {
    // SAFETY: per the contract.
    unsafe {
        #[cfg(jostle_stack_limit)]
        switch(save, next, super::guard::limit(base));
        #[cfg(not(jostle_stack_limit))]
        {
            let _ = base;
            switch(save, next);
        }
    }
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
/// Thread mode, privileged, on the main stack; `sp` as for [`switch`]'s `next`; `limit` (the
/// stack's PSPLIM, ARMv8-M mainline only; ignored elsewhere) at or below it.
#[cfg(not(jostle_armv6m))]
#[unsafe(naked)]
pub unsafe extern "C" fn enter(sp: u32, msp: u32, limit: u32) -> ! {
    #[cfg(not(any(jostle_fpu, jostle_stack_limit)))]
    naked_asm!(
        "msr psp, r0",
        "msr msp, r1",
        "movs r2, #2",
        "msr control, r2",
        "isb",
        "pop {{r4-r11, pc}}",
    );
    #[cfg(all(jostle_fpu, not(jostle_stack_limit)))]
    naked_asm!(
        ".fpu fpv5-d16",
        "msr psp, r0",
        "msr msp, r1",
        "movs r2, #2",
        "msr control, r2",
        "isb",
        "pop {{r3}}",
        "vpop {{s16-s31}}",
        "vmsr fpscr, r3",
        "pop {{r4-r11, pc}}",
    );
    // The limit is cleared first: the last run of this boot (a warm restart) may have left
    // one above the new stack pointer.
    #[cfg(all(jostle_fpu, jostle_stack_limit))]
    naked_asm!(
        ".fpu fpv5-d16",
        "movs r3, #0",
        "msr psplim, r3",
        "msr psp, r0",
        "msr psplim, r2",
        "msr msp, r1",
        "movs r2, #2",
        "msr control, r2",
        "isb",
        "pop {{r3}}",
        "vpop {{s16-s31}}",
        "vmsr fpscr, r3",
        "pop {{r4-r11, pc}}",
    );
    #[cfg(all(not(jostle_fpu), jostle_stack_limit))]
    naked_asm!(
        "movs r3, #0",
        "msr psplim, r3",
        "msr psp, r0",
        "msr psplim, r2",
        "msr msp, r1",
        "movs r2, #2",
        "msr control, r2",
        "isb",
        "pop {{r4-r11, pc}}",
    );
}

/// ARMv6-M variant of [`enter`] (r8–r11 through r4–r7, as in its [`switch`]).
///
/// # Safety
/// As for the ARMv7-M variant.
#[cfg(jostle_armv6m)]
#[unsafe(naked)]
pub unsafe extern "C" fn enter(sp: u32, msp: u32, _limit: u32) -> ! {
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

/// Words the switch keeps on a stack: r4–r11 and the return address; with an FPU, FPSCR
/// (lowest) and s16–s31 below them.
#[cfg(not(jostle_fpu))]
const FRAME_WORDS: usize = 9;
#[cfg(jostle_fpu)]
const FRAME_WORDS: usize = 9 + 16 + 1;

/// Index, within a frame, of the saved r4 and of the saved return address.
#[cfg(not(jostle_armv6m))]
const R4_AT: usize = FRAME_WORDS - 9;
#[cfg(jostle_armv6m)]
const R4_AT: usize = 4;
const PC_AT: usize = FRAME_WORDS - 1;

/// Writes a new task's first frame below `top` (8-byte aligned) and returns its stack
/// pointer, ready for [`switch`]. With an FPU the task's FPSCR starts as FPDSCR says, the
/// default the architecture gives every new floating-point context.
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
        #[cfg(jostle_fpu)]
        {
            const FPDSCR: *const u32 = 0xE000_EF3C as *const u32;
            sp.write_volatile(FPDSCR.read_volatile());
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
