//! Firmware whose framework owns `main` and the vector table (RTIC): the running thread
//! adopted as task 0 ([`adopt`]), interrupt sources registered as the framework sets up the
//! NVIC ([`register_irq`]), and handlers entered through the vector table, whose body the
//! framework owns, with the kernel's entry and exit around it ([`irq_enter_active`],
//! [`irq_exit_active`]).
//!
//! Task 0 stays on the stack it runs on (the main stack, which handlers share as they do on
//! the hardware the framework was written for): there is no other task to switch to, so
//! nothing needs a stack of its own, and the framework's stack use is the one it would have
//! without Jostle.

use super::{Boot, Kernel, NextBlock, finish, kernel, nvic, point};
use crate::op::Op;
use crate::sched::Next;
use crate::sched::irq::{Firing, IrqSource, MAX_IRQS};

/// The `firing` of a kernel that fired nothing.
pub(super) const NOT_FIRING: u8 = 0xFF;

/// The kernel's line table.
///
/// # Safety
/// `k` is the started kernel; the reference does not outlive the caller's use.
unsafe fn lines<'a>(k: *mut Kernel) -> &'a crate::fixed::Vec<u16, MAX_IRQS> {
    // SAFETY: per the contract.
    unsafe { &(*k).lines }
}

/// Source `i`'s NVIC line.
pub(super) fn line(i: u8) -> u16 {
    // SAFETY: read by the running context.
    unsafe { lines(kernel())[i as usize] }
}

/// The line of a source that has none (an async task, polled by its dispatcher).
const NO_LINE: u16 = u16::MAX;

/// Starts a run with the running thread as task 0 (contract R2): reads the configuration
/// block, starts the kernel and returns, now as task 0 at its first step. A second call in
/// the same run does nothing. `exit` ends the boot with an exit code, `next_block` reads a
/// served boot's next block (as for [`super::start_with_host`]).
///
/// A refused configuration block emits `ConfigRejected` and exits before anything runs.
pub fn adopt(exit: fn(u8) -> !, next_block: Option<NextBlock>) {
    if super::started() {
        return;
    }
    // SAFETY: thread mode, before anything refers to the kernel (as in `start_with_host`).
    unsafe {
        super::begin(Boot {
            exit,
            irqs: &[],
            next_block,
        });
        // Task 0 is the caller: its first step (`Start`) is the run's first decision.
        match (*kernel()).core.decide() {
            Next::Run(_) => {}
            Next::End(v) => finish(v.exit_code()),
            // No source exists yet.
            Next::Fire(_) => unreachable!(),
        }
    }
}

/// Registers NVIC line `line` as an interrupt source (contract R1): its handler is the
/// vector table's, which calls [`irq_enter_active`] and [`irq_exit_active`] around its body.
/// The line is disabled (the kernel enables it only while it fires it) and every registered
/// line gets the hardware priority of its rank, as for declared sources. Returns the
/// source's index (its context is `IRQ_CONTEXT + index`); a line registered twice keeps its
/// first index.
///
/// Panics past [`MAX_IRQS`] sources, naming the feature that raises the limit, and when the
/// NVIC implements fewer priority levels than the sources use.
pub fn register_irq(line: u16, source: IrqSource) -> u8 {
    register_line(line, source)
}

/// [`register_irq`] for any line: an NVIC line, or one of the kernel's own (SysTick's, an
/// async task's), which stays out of the NVIC.
pub(super) fn register_line(line: u16, mut source: IrqSource) -> u8 {
    // SAFETY: called by the running context; no reference outlives the call.
    unsafe {
        let k = kernel();
        if let Some(i) = lines(k).iter().position(|&l| l == line) {
            return i as u8;
        }
        // A peripheral's interrupt fires on its own as often as the run's block says for
        // its line (`--fire NAME=N`), else as often as the framework asked.
        if let Firing::Hardware { max } = &mut source.firing
            && let Some(bound) = (*k).firing_bounds.iter().find(|b| b.line == line)
        {
            *max = bound.max;
        }
        crate::interrupt::check_declared(lines(k).len() + 1);
        let Some(i) = (*k).core.add_irq(source) else {
            crate::interrupt::check_declared(MAX_IRQS + 1);
            unreachable!()
        };
        let _ = (*k).lines.push(line);
        if super::systick::not_nvic(line) {
            return i;
        }
        nvic::disable(line);
        let ranked: crate::fixed::Vec<(u16, u8), MAX_IRQS> = lines(k)
            .iter()
            .copied()
            .zip((*k).core.irq_sources().map(|s| s.priority))
            .filter(|&(l, _)| !super::systick::not_nvic(l))
            .collect();
        if !nvic::rank(&ranked) {
            panic!("no more distinct interrupt priorities than the NVIC implements");
        }
        i
    }
}

/// How a handler entered through the vector table goes on ([`irq_enter_active`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandlerEntry {
    /// The kernel fired source `i`: its entry is recorded and the running context is the
    /// handler's. Run the body, then call [`irq_exit_active`]`(i)`.
    Source(u8),
    /// The hardware took a registered line that the kernel did not fire (firmware pended it
    /// through the NVIC itself): the pend became a request, which the scheduler fires at a
    /// point of its choosing. Run nothing now.
    Deferred,
    /// Not the kernel's: it has not started, or the exception is no registered source (a
    /// system exception). Run the body as it is.
    Unmanaged,
}

/// The handler of the active exception begins (contract R1): see [`HandlerEntry`].
pub fn irq_enter_active() -> HandlerEntry {
    if !super::started() {
        return HandlerEntry::Unmanaged;
    }
    // SAFETY: ICSR's VECTACTIVE field; handler mode, the running context; no reference
    // outlives the call.
    unsafe {
        let active = (0xE000_ED04 as *const u32).read_volatile() & 0x1FF;
        let Some(line) = active.checked_sub(16) else {
            return HandlerEntry::Unmanaged;
        };
        let line = line as u16;
        let k = kernel();
        let Some(i) = lines(k).iter().position(|&l| l == line) else {
            return HandlerEntry::Unmanaged;
        };
        let i = i as u8;
        nvic::disable(line);
        if (*k).firing != i {
            (*k).core.request_from_hardware((*k).current, i);
            return HandlerEntry::Deferred;
        }
        (*k).firing = NOT_FIRING;
        let by = (*k).current;
        (*k).current = (*k).core.irq_enter(i, by);
        PREEMPTED[i as usize].set(by);
        HandlerEntry::Source(i)
    }
}

/// Registers an async task that the handler of source `dispatcher` polls, as a source of
/// its own with the dispatcher's priority ([`Firing::Polled`]): its polls are that source's
/// firings, nested in the dispatcher's ([`poll_enter`]), so that each async task is a
/// context of its own in events. Returns its index.
pub fn register_polled(dispatcher: u8) -> u8 {
    // SAFETY: called by the running context; no reference outlives the call.
    unsafe {
        let k = kernel();
        let priority = (*k)
            .core
            .irq_sources()
            .nth(dispatcher as usize)
            .map_or(0, |s| s.priority);
        // Every async task has the same (no) line: registered by index, not by line.
        crate::interrupt::check_declared(lines(k).len() + 1);
        let source = IrqSource {
            priority,
            firing: Firing::Polled { by: dispatcher },
        };
        let Some(i) = (*k).core.add_irq(source) else {
            crate::interrupt::check_declared(MAX_IRQS + 1);
            unreachable!()
        };
        let _ = (*k).lines.push(NO_LINE);
        i
    }
}

/// The dispatcher running now picks the async task to poll next among `ready` (a bit per
/// source index), as the seed draws ([`crate::sched::Core::next_poll`]).
pub fn next_poll(ready: u32) -> Option<u8> {
    // SAFETY: called by the running context.
    unsafe { (*kernel()).core.next_poll(ready) }
}

/// The running dispatcher begins a poll of async task `i` (a source of
/// [`register_polled`]): its entry, nested in the dispatcher's; [`poll_exit`] after.
pub fn poll_enter(i: u8) {
    // SAFETY: as in `irq_enter_active`.
    unsafe {
        let k = kernel();
        let by = (*k).current;
        (*k).current = (*k).core.irq_enter(i, by);
        PREEMPTED[i as usize].set(by);
    }
}

/// The poll of async task `i` returned.
pub fn poll_exit(i: u8) {
    irq_exit_active(i);
}

/// Source `i` fires from now on as `firing` ([`crate::sched::Core::set_firing`]).
pub fn set_firing(i: u8, firing: Firing) {
    // SAFETY: called by the running context.
    unsafe { (*kernel()).core.set_firing(i, firing) }
}

/// Names context `t` (a task, or `IRQ_CONTEXT + i`) for the host: the text `name`, which
/// lives in the image (a `type_name`, a literal).
pub fn name_context(t: u8, name: &'static str) {
    // SAFETY: called by the running context.
    unsafe {
        (*kernel())
            .core
            .record_name(t, name.as_ptr() as usize as u32, name.len() as u32);
    }
}

/// The least urgent hardware priority among the registered NVIC lines (0 without any).
pub(super) fn least_urgent_line() -> u8 {
    const IPR: *const u8 = 0xE000_E400 as *const u8;
    // SAFETY: read by the running context; the NVIC's priority bytes of registered lines.
    unsafe {
        lines(kernel())
            .iter()
            .filter(|&&l| !super::systick::not_nvic(l))
            .map(|&l| IPR.add(l as usize).read_volatile())
            .max()
            .unwrap_or(0)
    }
}

/// The source registered for NVIC line `line`, if any.
pub fn source_of(line: u16) -> Option<u8> {
    // SAFETY: read by the running context.
    unsafe {
        lines(kernel())
            .iter()
            .position(|&l| l == line)
            .map(|i| i as u8)
    }
}

/// The priority of the source registered for NVIC line `line`, if any.
pub fn source_priority(line: u16) -> Option<u8> {
    let i = source_of(line)?;
    // SAFETY: read by the running context.
    unsafe {
        (*kernel())
            .core
            .irq_sources()
            .nth(i as usize)
            .map(|s| s.priority)
    }
}

/// The priority mask now in force (BASEPRI's model; 0: none).
pub fn prio_mask() -> u8 {
    // SAFETY: read by the running context.
    unsafe { (*kernel()).core.prio_mask() }
}

/// The handler of source `i`, entered with [`irq_enter_active`], returns.
pub fn irq_exit_active(i: u8) {
    // SAFETY: as in `irq_enter_active`.
    unsafe {
        let k = kernel();
        (*k).core.irq_exit(i);
        (*k).current = PREEMPTED[i as usize].get();
    }
}

/// The context each running handler preempted (restored at its exit), per source: a
/// handler is never re-entered, so one slot per source suffices.
static PREEMPTED: Preempted = Preempted([const { core::cell::Cell::new(0) }; MAX_IRQS]);

struct Preempted([core::cell::Cell<u8>; MAX_IRQS]);

impl core::ops::Index<usize> for Preempted {
    type Output = core::cell::Cell<u8>;
    fn index(&self, i: usize) -> &Self::Output {
        &self.0[i]
    }
}

// SAFETY: touched only by the running context (one core; a handler's slot by that handler).
unsafe impl Sync for Preempted {}

/// Fires, one after the other, the sources due now that can fire above the running
/// context: after a pend, a mask's release or the end of a critical section, as the NVIC
/// takes a pended line at once (not at the running context's next scheduling point). No
/// step of its own.
pub fn settle() {
    // SAFETY: the running context; no reference outlives a call.
    unsafe {
        while let Some(i) = (*kernel()).core.due_firing() {
            super::fire(i);
        }
    }
}

/// Task 0 waits at site `s` for an interrupt (a framework's idle loop, `wfi`): returns once
/// a handler has run, or never when none can come (the run ends).
pub fn idle(s: u32) {
    // SAFETY: read by the running task.
    let since = unsafe { (*kernel()).core.irq_entries() };
    point(Op::Idle { s, since });
}

/// Does the code at `at` follow a call (`bl`, or `blx Rm`), as a return address does? A
/// word on the stack that points into the code may also be a function pointer the code
/// keeps there (a waker's data is one), which points at a function's first instruction.
fn follows_call(at: u32) -> bool {
    // SAFETY: `at - 4 .. at` lies in the code (the caller checked `at` against `__stext`
    // + 4), which is readable.
    let (first, second) = unsafe {
        let h = at as *const u16;
        (h.sub(2).read_volatile(), h.sub(1).read_volatile())
    };
    let blx = second & 0xFF87 == 0x4780;
    let bl = first & 0xF800 == 0xF000 && second & 0xD000 == 0xD000;
    blx || bl
}

unsafe extern "C" {
    static __stext: u32;
    static __etext: u32;
}

/// Up to four words just above the stack pointer that look like return addresses (odd, in
/// the code), innermost first: where the running code was called from, for the host to
/// resolve through the ELF's line tables (where an async task hands out its waker: its
/// `.await`). A bounded scan of the main stack, which task 0 and the handlers share.
#[inline(never)]
pub fn return_addresses() -> crate::sched::wake::WaitAddrs {
    let mut out = [0u32; 4];
    let sp: usize;
    // SAFETY: reads the stack pointer; the vector table's first word is the main stack's
    // top; the linker symbols' addresses only are taken.
    let (top, lo, hi) = unsafe {
        core::arch::asm!("mov {}, sp", out(reg) sp);
        let vtor = (*cortex_m::peripheral::SCB::PTR).vtor.read();
        (
            (vtor as *const u32).read_volatile() as usize,
            &raw const __stext as usize as u32,
            &raw const __etext as usize as u32,
        )
    };
    let own = return_addresses as *const () as usize as u32 & !1;
    let mut n = 0;
    let mut at = sp & !3;
    let end = top.min(at + 1024);
    while at < end && n < out.len() {
        // SAFETY: `at` lies between the stack pointer and the top of the main stack.
        let word = unsafe { (at as *const u32).read_volatile() };
        if word & 1 == 1
            && (lo.saturating_add(4)..hi).contains(&(word & !1))
            && (word & !1) != own
            && !out[..n].contains(&word)
            && follows_call(word & !1)
        {
            out[n] = word;
            n += 1;
        }
        at += 4;
    }
    out
}
