//! Faults: what the CPU says when a run ends in a HardFault, and whether the evidence says
//! stack overflow.
//!
//! The board's vector table enters [`crate::hard_fault_handler!`]'s assembly, which passes
//! the exception's `EXC_RETURN` and both stack pointers here before any Rust code can touch
//! a stack. The exception frame (r0–r3, r12, lr, pc, xPSR) is read only when it lies inside
//! the faulting task's stack. The fault status registers (CFSR, HFSR, MMFAR, BFAR) are read
//! as they are; the host decodes them into words. ARMv6-M has none of them (they read as 0).
//!
//! A stack overflow is reported only on evidence: the task's canary is overwritten, the
//! stack pointer or the faulting address lies in the task's guard (its lowest 32 bytes, which
//! the MPU forbids, or on ARMv8-M makes read-only: see `guard`) or just below its stack (the failed exception stacking of an
//! overflowing task), or the CPU says its stack limit was hit (ARMv8-M's STKOF: on the
//! process stack, the task's; on the main stack, MSPLIM's, the running handler's).

use super::{CANARY, CANARY_WORDS, end_unstarted, ending, finish, kernel, started};
use crate::event::{Event, NO_TASK, Verdict};

/// How far below a stack's base an access still counts as that stack overflowing (the
/// exception frame, with an FPU, is 26 words; a function frame rarely more).
const BELOW_BASE: usize = 1024;

/// The processor state at a HardFault, as the handler's assembly found it.
#[repr(C)]
pub struct FaultContext {
    /// The exception's `EXC_RETURN` (bit 2: the frame is on the process stack; bit 3: the
    /// fault came from thread mode).
    pub exc_return: u32,
    /// The main stack pointer at entry.
    pub msp: u32,
    /// The process stack pointer at entry.
    pub psp: u32,
}

/// The fault status registers (zero where the architecture has none).
struct Status {
    cfsr: u32,
    hfsr: u32,
    mmfar: u32,
    bfar: u32,
}

impl Status {
    fn read() -> Status {
        #[cfg(not(jostle_armv6m))]
        // SAFETY: the System Control Block's fault registers, always readable on ARMv7-M.
        unsafe {
            let reg = |a: usize| (a as *const u32).read_volatile();
            Status {
                cfsr: reg(0xE000_ED28),
                hfsr: reg(0xE000_ED2C),
                mmfar: reg(0xE000_ED34),
                bfar: reg(0xE000_ED38),
            }
        }
        #[cfg(jostle_armv6m)]
        Status {
            cfsr: 0,
            hfsr: 0,
            mmfar: 0,
            bfar: 0,
        }
    }

    /// Did an instruction or an exception entry move a stack pointer below its limit (UFSR's
    /// STKOF, ARMv8-M mainline; never set elsewhere)?
    fn stack_limit_hit(&self) -> bool {
        self.cfsr & (1 << 20) != 0
    }

    /// The faulting data address, when the CPU recorded one (MMARVALID or BFARVALID).
    fn address(&self) -> Option<usize> {
        if self.cfsr & (1 << 7) != 0 {
            Some(self.mmfar as usize)
        } else if self.cfsr & (1 << 15) != 0 {
            Some(self.bfar as usize)
        } else {
            None
        }
    }
}

/// Reports a HardFault (called by [`crate::hard_fault_handler!`]'s assembly, on the main
/// stack) and ends the run: `stack_overflow` on evidence, else `hard_fault` with the
/// registers.
pub fn report_hard_fault(ctx: &FaultContext, exit: fn(u8) -> !) -> ! {
    ending();
    let status = Status::read();
    let on_psp = ctx.exc_return & 4 != 0;
    let frame_at = if on_psp { ctx.psp } else { ctx.msp } as usize;
    if !started() {
        emit_fault(NO_TASK, read_frame(frame_at, 0, usize::MAX), &status);
        end_unstarted(Verdict::HardFault, exit)
    }
    // SAFETY: the run ends here; the stack regions were recorded by `prepare`.
    unsafe {
        let k = kernel();
        let t = (*k).current;
        #[cfg(jostle_stack_limit)]
        if !on_psp && status.stack_limit_hit() {
            // MSPLIM: the main stack overflowed, in a handler (or a framework's task 0).
            let (bottom, top) = super::guard::main_stack::bounds();
            Event::StackOverflow {
                t,
                depth: top.wrapping_sub(frame_at) as u32,
                size: (top - bottom) as u32,
            }
            .emit_defmt();
            (*k).core.abort(Verdict::StackOverflow);
            finish(Verdict::StackOverflow.exit_code());
        }
        if t as usize >= crate::task::MAX_TASKS {
            // A handler's fault: its frame is on the main stack.
            emit_fault(t, read_frame(frame_at, 0, usize::MAX), &status);
            (*k).core.abort(Verdict::HardFault);
            finish(Verdict::HardFault.exit_code());
        }
        let (base, size) = (*k).stacks[t as usize];
        let top = base + size;
        let guard = base + CANARY_WORDS * 4;
        let in_guard = |a: usize| a < guard && a + BELOW_BASE >= base;
        let canary_broken =
            (0..CANARY_WORDS).any(|i| (base as *const u32).add(i).read_volatile() != CANARY);
        if on_psp
            && (canary_broken
                || status.stack_limit_hit()
                || in_guard(frame_at)
                || status.address().is_some_and(in_guard))
        {
            Event::StackOverflow {
                t,
                depth: top.wrapping_sub(frame_at) as u32,
                size: size as u32,
            }
            .emit_defmt();
            (*k).core.abort(Verdict::StackOverflow);
            finish(Verdict::StackOverflow.exit_code());
        }
        let frame = if on_psp {
            read_frame(frame_at, guard, top)
        } else {
            read_frame(frame_at, 0, usize::MAX)
        };
        emit_fault(t, frame, &status);
        (*k).core.abort(Verdict::HardFault);
        finish(Verdict::HardFault.exit_code());
    }
}

/// The exception frame's lr, pc and xPSR, when the frame lies within `low..high` (else 0).
fn read_frame(at: usize, low: usize, high: usize) -> [u32; 3] {
    if at < low || !at.is_multiple_of(4) || at.saturating_add(32) > high {
        return [0; 3];
    }
    let frame = at as *const u32;
    // SAFETY: eight words inside the stack the frame was pushed on.
    unsafe {
        [
            frame.add(5).read_volatile(),
            frame.add(6).read_volatile(),
            frame.add(7).read_volatile(),
        ]
    }
}

fn emit_fault(t: u8, [lr, pc, xpsr]: [u32; 3], s: &Status) {
    Event::HardFault {
        t,
        pc,
        lr,
        xpsr,
        cfsr: s.cfsr,
        hfsr: s.hfsr,
        mmfar: s.mmfar,
        bfar: s.bfar,
    }
    .emit_defmt();
}

/// Defines a board's exception handlers: `HardFault`, a few instructions of assembly that
/// capture `EXC_RETURN` and both stack pointers, then
/// [`report_hard_fault`](crate::port::report_hard_fault) with the board's `exit`; and
/// `DefaultHandler`, which runs the declared interrupt handler of the active IRQ line
/// ([`dispatch_irq`](crate::port::dispatch_irq)). Use it instead of `cortex-m-rt`'s
/// `#[exception] fn HardFault` and `fn DefaultHandler`.
#[macro_export]
macro_rules! exception_handlers {
    ($exit:path) => {
        // cortex-m-rt's vector table names `DefaultHandler` for every IRQ line.
        #[doc(hidden)]
        #[unsafe(no_mangle)]
        extern "C" fn DefaultHandler() {
            // SAFETY: ICSR's VECTACTIVE field: the exception number being handled.
            let active = unsafe { (0xE000_ED04 as *const u32).read_volatile() } & 0x1FF;
            $crate::port::dispatch_irq(active as i16 - 16);
        }

        #[doc(hidden)]
        #[unsafe(no_mangle)]
        extern "C" fn __jostle_hard_fault(exc_return: u32, msp: u32, psp: u32) -> ! {
            $crate::port::report_hard_fault(
                &$crate::port::FaultContext {
                    exc_return,
                    msp,
                    psp,
                },
                $exit,
            )
        }
        // `HardFault` is the symbol cortex-m-rt's vector table names.
        ::core::arch::global_asm!(
            ".section .HardFault.user, \"ax\"",
            ".global HardFault",
            ".type HardFault, %function",
            ".thumb_func",
            "HardFault:",
            // ARMv8-M mainline: the main stack's limit lifted before anything is pushed (a
            // handler that overflowed it left the stack pointer at the limit).
            ".if {main_stack_limit}",
            "movs r3, #0",
            "msr msplim, r3",
            ".endif",
            "mov r0, lr",
            "mrs r1, msp",
            "mrs r2, psp",
            // A register branch: `b` reaches only 2 KiB on ARMv6-M.
            "ldr r3, 1f",
            "bx r3",
            ".align 2",
            "1: .word {report}",
            report = sym __jostle_hard_fault,
            main_stack_limit = const $crate::port::MAIN_STACK_LIMIT as u32,
        );
    };
}
