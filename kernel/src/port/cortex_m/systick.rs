//! An application's SysTick timer on the kernel's virtual clock (contract E1): a monotonic
//! built on SysTick (rtic-monotonics' `systick_monotonic!`) advances only when nothing else
//! can happen, and never waits wall time.
//!
//! Such a monotonic counts SysTick's wraps: its `SysTick` handler (and its `now()`) add one
//! tick whenever the counter's `COUNTFLAG` says it wrapped since it was last read, and its
//! timer queue wakes the delays that are due. The kernel takes the timer over when `main`
//! is done ([`adopt_systick`]: the application enabled the counter and its interrupt), stops
//! the counter, and registers SysTick as an interrupt source of its own whose firing is a
//! *tick*: make the counter wrap once (so that `COUNTFLAG` reads 1 exactly once), then call
//! the application's handler (the vector table's) as a function. A virtual timer requests
//! that source one tick ahead while an async task waits on something it holds a waker for
//! ([`set_waiting`]): when nothing else can happen, the clock moves to it and the source
//! fires. One firing ticks on, tick after tick, until one of them wakes something (a
//! request) or [`MAX_QUIET_TICKS`] have passed: the ticks that wake nothing are no steps
//! and no events, only the clock's advance is one (`TimeAdvance`). A run whose tasks only
//! wait for what never comes thus ends after at most that many ticks.
//!
//! A real SysTick exception (the monotonic's `pend_interrupt`, when a delay becomes its
//! queue's head) must not enter the application's handler: it would run the timer queue
//! at an instruction the scheduler did not choose, its critical sections scheduling points
//! of whatever context it interrupted. So the kernel moves the vector table into RAM with
//! SysTick's entry its own ([`systick_exception`], see `vectors`): the exception is taken
//! and nothing of the application runs. (With the counter stopped, the application's
//! handler would add no tick.) The same counter times the idle watchdog (`watchdog`) while
//! it is not ticking for the monotonic.

use super::kernel;
use crate::sched::irq::{Firing, IrqSource, QUIET_CONTEXT};
use crate::sched::time::TimerAction;
use core::cell::Cell;

/// SysTick's registers.
pub(super) const CSR: *mut u32 = 0xE000_E010 as *mut u32;
pub(super) const RVR: *mut u32 = 0xE000_E014 as *mut u32;
pub(super) const CVR: *mut u32 = 0xE000_E018 as *mut u32;
/// SysTick's priority byte (SHPR3's top byte).
const SHPR_SYSTICK: *const u8 = 0xE000_ED23 as *const u8;

pub(super) const ENABLE: u32 = 1;
pub(super) const TICKINT: u32 = 1 << 1;
pub(super) const CLKSOURCE: u32 = 1 << 2;

/// The line of the SysTick source (no NVIC line: the kernel ticks it itself).
pub(super) const SYSTICK_LINE: u16 = u16::MAX - 1;

/// Most ticks one firing makes without waking anything.
pub const MAX_QUIET_TICKS: u64 = 100_000;

/// The virtual timer that requests the SysTick source.
const TIMER_KEY: u32 = 0x5359_5354; // "SYST"

/// Per-run state (in `.bss`: every run starts from the reset vector).
struct State {
    /// The SysTick source, once taken over.
    source: Cell<Option<u8>>,
    /// Its timer is set.
    armed: Cell<bool>,
    /// Some task waits on something it handed its waker to.
    waiting: Cell<bool>,
}

// SAFETY: touched only by the running context (one core).
unsafe impl Sync for State {}

static STATE: State = State {
    source: Cell::new(None),
    armed: Cell::new(false),
    waiting: Cell::new(false),
};

/// Takes the application's SysTick over if `main` started it as a timer (counter and
/// interrupt enabled): stops it and registers the SysTick source. Returns whether it did.
pub fn adopt_systick() -> bool {
    if STATE.source.get().is_some() {
        return true;
    }
    // SAFETY: the System Control Space's SysTick and priority registers.
    let (csr, priority) = unsafe { (CSR.read_volatile(), SHPR_SYSTICK.read_volatile()) };
    if csr & (ENABLE | TICKINT) != (ENABLE | TICKINT) {
        return false;
    }
    // SAFETY: as above; stopping the counter only.
    unsafe { CSR.write_volatile(csr & !(ENABLE | TICKINT)) };
    super::vectors::redirect();
    let i = super::framework::register_line(
        SYSTICK_LINE,
        IrqSource {
            priority,
            firing: Firing::Requested,
        },
    );
    STATE.source.set(Some(i));
    super::framework::name_context(crate::event::IRQ_CONTEXT + i, "SysTick");
    if STATE.waiting.get() {
        arm(i);
    }
    true
}

/// Whether some task now waits on something it handed its waker to (which time may be):
/// while one does, SysTick ticks when nothing else can happen; once none does, its timer
/// is withdrawn (a tick would wake nobody, and a firing ticks [`MAX_QUIET_TICKS`] times
/// before it gives up).
pub fn set_waiting(waiting: bool) {
    STATE.waiting.set(waiting);
    match STATE.source.get() {
        Some(i) if waiting && !STATE.armed.get() => arm(i),
        Some(_) if !waiting && STATE.armed.get() => disarm(),
        _ => {}
    }
}

/// Sets the timer that requests source `i` one tick from now.
fn arm(i: u8) {
    // SAFETY: the running context; no reference outlives the call.
    unsafe {
        let k = kernel();
        let at = (*k).core.now().saturating_add(1);
        (*k).core.set_timer(TIMER_KEY, at, TimerAction::Request(i));
    }
    STATE.armed.set(true);
}

/// Withdraws the timer [`arm`] set.
fn disarm() {
    // SAFETY: as in `arm`.
    unsafe { (*kernel()).core.cancel_timer(TIMER_KEY) };
    STATE.armed.set(false);
}

/// Fires SysTick source `i` (the port's `fire`): ticks until something is woken (module
/// doc), as the handler context of `i`.
pub(super) fn tick(i: u8) {
    STATE.armed.set(false);
    // SAFETY: the running context; no reference into the kernel outlives a call.
    unsafe {
        let k = kernel();
        let by = (*k).current;
        let ctx = (*k).core.irq_enter(i, by);
        (*k).core.quiet_as(ctx);
        let handler = super::vectors::application_systick();
        let before = (*k).core.pending_sources();
        let mut ticks = 0u64;
        let watchdog = super::watchdog::pause();
        (*k).current = QUIET_CONTEXT;
        loop {
            wrap_once();
            handler();
            ticks += 1;
            if (*k).core.pending_sources() & !before != 0 || ticks >= MAX_QUIET_TICKS {
                break;
            }
        }
        (*k).current = ctx;
        super::watchdog::resume(watchdog);
        // The clock moved to this firing's first tick already (its timer).
        (*k).core.tick_clock(ticks - 1);
        let woke = (*k).core.pending_sources() & !before != 0;
        (*k).core.irq_exit(i);
        (*k).current = by;
        if woke && STATE.waiting.get() {
            arm(i);
        }
    }
}

/// SysTick's exception while the kernel owns the timer (the RAM vector table's entry: the
/// monotonic's `pend_interrupt`, or the idle watchdog's period): `COUNTFLAG` is read (so
/// that the application's `now()` never counts the watchdog's wraps), and the watchdog
/// looks at task 0.
pub(super) extern "C" fn systick_exception() {
    // SAFETY: reading SysTick's control register only clears its COUNTFLAG.
    let _ = unsafe { CSR.read_volatile() };
    super::watchdog::period();
}

/// Makes the stopped counter wrap once, with its interrupt off: `COUNTFLAG` then reads 1
/// once (the application's handler or `now()` reads it), and the counter is stopped again.
fn wrap_once() {
    // SAFETY: SysTick's registers; the counter counts the core clock from a reload of 1,
    // so it wraps within two of its ticks; the loop is bounded all the same.
    unsafe {
        RVR.write_volatile(1);
        CVR.write_volatile(0);
        CSR.write_volatile(CLKSOURCE | ENABLE);
        let mut seen_one = false;
        for _ in 0..10_000 {
            match CVR.read_volatile() {
                0 if seen_one => break,
                0 => {}
                _ => seen_one = true,
            }
        }
        CSR.write_volatile(CLKSOURCE);
    }
}

/// The SysTick source's firing, when `line` is its line (the port's `fire`).
pub(super) fn is_systick(line: u16) -> bool {
    line == SYSTICK_LINE
}

/// Lines that are not the NVIC's (SysTick's, the async tasks'), which the NVIC's ranks skip.
pub(super) fn not_nvic(line: u16) -> bool {
    line >= SYSTICK_LINE
}
