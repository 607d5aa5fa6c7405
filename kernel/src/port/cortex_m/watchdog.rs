//! The idle watchdog: task 0 of a framework's firmware (RTIC's `#[idle]`) that spins or
//! sleeps without a scheduling point (`loop { wfi() }`, `loop {}`) would keep the kernel
//! from ever deciding again. SysTick counts a period of some 100,000 instructions while
//! task 0 runs ([`start`]); at each period's end ([`period`]) the watchdog looks at the
//! run's steps: when task 0, interrupted in thread mode, made none for a whole period, it is
//! waiting for an interrupt, and PendSV (the least urgent exception, taken as soon as
//! SysTick returns) makes that wait task 0's scheduling point ([`pendsv`]: `Op::Idle`): the
//! scheduler fires what can fire, moves time on, or ends the run when nothing can come.
//!
//! So a task 0 that computes for more than a period without a scheduling point is taken
//! for waiting there: handlers may fire at that instruction, and the run may end there when
//! nothing can fire. The watchdog never acts while a handler runs (SysTick then interrupts
//! handler mode) or while the kernel ticks a monotonic.

use super::systick::{CLKSOURCE, CSR, CVR, ENABLE, RVR, TICKINT};
use super::{current, kernel};
use core::cell::Cell;

/// The watchdog's period in SysTick ticks of the core clock (some 100,000 instructions
/// under QEMU's `-icount`, whose clock is the instruction count).
const PERIOD: u32 = 2_500;

/// ICSR: PendSV's set-pending bit, and RETTOBASE (the running exception returns to thread
/// mode).
const ICSR: *mut u32 = 0xE000_ED04 as *mut u32;
const PENDSVSET: u32 = 1 << 28;
const RETTOBASE: u32 = 1 << 11;
/// SHPR3's bytes: PendSV's and SysTick's priorities.
const SHPR_PENDSV: *mut u8 = 0xE000_ED22 as *mut u8;
const SHPR_SYSTICK: *mut u8 = 0xE000_ED23 as *mut u8;

struct State {
    /// Watching task 0.
    on: Cell<bool>,
    /// The run's steps at the last period's end.
    steps: Cell<u32>,
}

// SAFETY: touched only by the running context (one core; the exceptions run to completion).
unsafe impl Sync for State {}

static STATE: State = State {
    on: Cell::new(false),
    steps: Cell::new(u32::MAX),
};

/// Starts watching task 0 (RTIC: `main` goes on into its `#[idle]`). Not when the
/// application binds a task to PendSV (the watchdog's scheduling point).
pub fn start() {
    if STATE.on.get() || !super::vectors::pendsv_free() {
        return;
    }
    // SAFETY: SHPR3's priority bytes and SysTick's registers; the kernel owns SysTick
    // (an application's monotonic was taken over and stopped).
    unsafe {
        // PendSV below every handler, so that the handlers the scheduler fires from it
        // preempt it: not when the NVIC has no level left below the firmware's lines.
        SHPR_PENDSV.write_volatile(0xFF);
        if super::framework::least_urgent_line() >= SHPR_PENDSV.read_volatile() {
            return;
        }
        super::vectors::redirect();
        STATE.on.set(true);
        // SysTick above everything, so that it sees task 0 wherever it spins.
        SHPR_SYSTICK.write_volatile(0);
        run();
    }
}

/// SysTick counts the watchdog's period, its interrupt on.
///
/// # Safety
/// The kernel owns SysTick.
unsafe fn run() {
    // SAFETY: per the contract.
    unsafe {
        RVR.write_volatile(PERIOD);
        CVR.write_volatile(0);
        CSR.write_volatile(CLKSOURCE | TICKINT | ENABLE);
    }
}

/// Stops the watchdog's counter (the kernel ticks an application's monotonic with it);
/// returns whether it was running, for [`resume`].
pub(super) fn pause() -> bool {
    // SAFETY: stopping SysTick, which the kernel owns.
    unsafe { CSR.write_volatile(CLKSOURCE) };
    STATE.on.get()
}

/// Restarts the watchdog's counter after [`pause`].
pub(super) fn resume(was_on: bool) {
    if was_on {
        // SAFETY: as in `pause`.
        unsafe { run() }
    }
}

/// A period ended (SysTick's exception): when task 0 was interrupted in thread mode and
/// made no step since the last period, PendSV makes its wait a scheduling point.
pub(super) fn period() {
    if !STATE.on.get() || current() != 0 {
        return;
    }
    // SAFETY: ICSR; the kernel's step count, read.
    unsafe {
        if ICSR.read_volatile() & RETTOBASE == 0 {
            return;
        }
        let steps = (*kernel()).core.steps();
        if steps != STATE.steps.get() {
            STATE.steps.set(steps);
            return;
        }
        ICSR.write_volatile(PENDSVSET);
    }
}

/// PendSV (the RAM vector table's entry): task 0's wait for an interrupt, as its scheduling
/// point.
pub(super) extern "C" fn pendsv() {
    if !STATE.on.get() || current() != 0 {
        return;
    }
    super::idle(0);
    // The next period starts afresh.
    // SAFETY: the kernel's step count, read.
    STATE.steps.set(unsafe { (*kernel()).core.steps() });
}
