//! `main`'s and the handlers' calls: adoption, interrupt registration, handler entry and
//! exit, pends, and the idle loop.

use jostle_kernel::op::{ALL_IRQS, Op};
use jostle_kernel::port::{self, HandlerEntry};
use jostle_kernel::sched::irq::{Firing, IrqSource};

use super::InterruptNumber;

/// Spontaneous firings per run of a hardware task's interrupt, unless the run's
/// configuration block bounds its line otherwise (`jostle campaign --fire NAME=N`).
const SPONTANEOUS_FIRINGS: u8 = 1;

/// The NVIC's priority bytes.
const IPR: *const u8 = 0xE000_E400 as *const u8;

/// The interrupt controls `main` calls (`rtic::export::interrupt::{disable, enable}`).
pub mod interrupt {
    use super::*;

    /// The first call of RTIC's `main` (`init` must run with interrupts disabled): starts
    /// Jostle's kernel with the running thread as task 0. Its sources start disabled, so
    /// nothing fires until [`enable`].
    #[inline(never)]
    pub fn disable() {
        crate::export::board::adopt();
    }

    /// `main`'s last call before `idle`: `init` is over, every registered source is
    /// unmasked. When the application has no `#[idle]`, `main` goes on with `loop {}`: this
    /// call then does not return and task 0 waits for interrupts at its scheduling points.
    ///
    /// # Safety
    /// As `cortex_m::interrupt::enable`'s (the expansion calls it from `main`).
    #[inline(never)]
    #[track_caller]
    pub unsafe fn enable() {
        // Read first: nothing has been called yet, so `lr` is the return address.
        let ret: u32;
        // SAFETY: reads a register.
        unsafe { core::arch::asm!("mov {}, lr", out(reg) ret, options(nomem, nostack)) };
        let s = port::site(core::panic::Location::caller());
        // A SysTick monotonic `init` started ticks on the kernel's virtual clock (its
        // source is unmasked with the others).
        port::adopt_systick();
        port::point(Op::IrqMask {
            s,
            i: ALL_IRQS,
            on: false,
        });
        // What `init` pended fires now, as at the real `cpsie`.
        port::settle();
        if spins_forever(ret) {
            // `loop {}`: the expansion's `main` without `#[idle]`.
            loop {
                port::idle(s);
            }
        }
        // `#[idle]` follows: should it wait for interrupts without a scheduling point
        // (`loop { wfi() }`), the watchdog makes that wait one.
        port::start_idle_watchdog();
    }
}

/// Is the Thumb code at return address `ret` a branch to itself (`b .`, what `loop {}`
/// compiles to), possibly after alignment `nop`s?
fn spins_forever(ret: u32) -> bool {
    let mut at = (ret & !1) as *const u16;
    for _ in 0..4 {
        // SAFETY: code memory, readable; `ret` is the caller's return address.
        let half = unsafe { at.read_volatile() };
        match half {
            0xE7FE => return true,
            0xBF00 => at = at.wrapping_add(1),
            _ => return false,
        }
    }
    false
}

/// The NVIC calls of `main` (`rtic::export::NVIC::unmask`).
pub struct NVIC;

impl NVIC {
    /// Registers `interrupt` (a dispatcher or a hardware task's) as an interrupt source of
    /// the kernel, at the priority `main` just wrote into the NVIC. It stays masked until
    /// `init` ends ([`interrupt::enable`]).
    ///
    /// # Safety
    /// As `cortex_m`'s: called by `main` after the line's priority was set.
    #[inline(never)]
    pub unsafe fn unmask<I: InterruptNumber>(interrupt: I) {
        let line = interrupt.number();
        // SAFETY: the NVIC's priority byte of an implemented line.
        let priority = unsafe { IPR.add(line as usize).read_volatile() };
        // A hardware task's interrupt, as far as anyone knows yet: it fires when pended and,
        // as a peripheral's would, spontaneously. A dispatcher shows itself at its first run
        // (it polls tasks) and from then on fires only when requested.
        port::register_irq(
            line,
            IrqSource {
                priority,
                firing: Firing::Hardware {
                    max: SPONTANEOUS_FIRINGS,
                },
            },
        );
    }

    /// Pends `interrupt`, as [`pend`].
    #[track_caller]
    pub fn pend<I: InterruptNumber>(interrupt: I) {
        pend(interrupt);
    }
}

/// Pends `interrupt` (`rtic::pend`, a spawn or a wake pending a dispatcher): a request of its
/// source, which fires at once when it is more urgent than the running context and
/// unmasked, else as soon as it is (the NVIC's pend). A line that is no source of the kernel
/// is pended in the NVIC as it is.
#[track_caller]
pub fn pend<I: InterruptNumber>(interrupt: I) {
    let line = interrupt.number();
    match port::source_of(line) {
        Some(j) => {
            port::point(Op::IrqRequest {
                s: port::site(core::panic::Location::caller()),
                // A spawn or a wake: the request of the task, which pends its dispatcher too.
                i: super::dispatch::take_pended(j).unwrap_or(j),
            });
            port::settle();
        }
        None => cortex_m::peripheral::NVIC::pend(interrupt),
    }
}

/// A handler's body (`rtic::export::run`, called by a hardware task's or a dispatcher's
/// handler, entered through the vector table), with the kernel's entry and exit around it.
#[inline(always)]
pub fn run<F: FnOnce()>(_priority: u8, f: F) {
    match port::irq_enter_active() {
        HandlerEntry::Source(i) => {
            name_once::<F>(i);
            super::dispatch::run(i, f);
            port::irq_exit_active(i);
        }
        HandlerEntry::Deferred => {}
        HandlerEntry::Unmanaged => f(),
    }
}

/// Names source `i`'s context after the handler's body `F` at its first run (the
/// expansion's `exec` of a hardware task, or a dispatcher's body, both inside the function
/// named after the interrupt).
fn name_once<F>(i: u8) {
    static NAMED: super::dispatch::Once = super::dispatch::Once::new();
    if NAMED.first(i) {
        port::name_context(
            jostle_kernel::event::IRQ_CONTEXT + i,
            core::any::type_name::<F>(),
        );
    }
}

/// Waits for an interrupt: task 0's idle point.
#[track_caller]
pub fn wfi() {
    port::idle(port::site(core::panic::Location::caller()));
}
