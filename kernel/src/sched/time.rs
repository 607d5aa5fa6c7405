//! Virtual time: a clock in ticks and timers (a deadline and what to wake), for firmware
//! whose tasks sleep until a deadline (embassy-time's `Timer::after`, an RTIC monotonic).
//!
//! The clock never moves during a step: every computation takes zero time. It moves only
//! when nothing else can happen — no task is enabled and no interrupt source is eligible,
//! or every task that could go on has only spun polling for the livelock bound
//! (`sched::spin`: async tasks that wake each other and change no data, while on a board
//! time passes) — and then it jumps to
//! the earliest deadline, and every timer due by then fires at once
//! (in the order they were set; which woken task runs first is then the strategy's pick,
//! as among any enabled tasks). So a timeout fires only when the event it guards really
//! could not have come first, and a run never waits wall time. A run with a timer pending
//! is not over.
//!
//! A timer is keyed by a word its owner chooses (an Embassy task's wake-up signal, an RTIC
//! monotonic's address); setting a key's timer again replaces it. Firing one either adds a
//! pending count to a signal ([`TimerAction::Wake`], as [`crate::op::Op::Signal`] does: a
//! task waiting on it becomes enabled) or requests an interrupt source
//! ([`TimerAction::Request`], as [`crate::op::Op::IrqRequest`] does: its handler fires at
//! once, the clock standing still).

use super::{Core, Sink};
use crate::event::{Event, NO_TASK};
use crate::interrupt::MAX_IRQS;
use crate::op::Op;
use crate::task::MAX_TASKS;

/// Most timers set at once: one per task and one per interrupt source.
pub const MAX_TIMERS: usize = MAX_TASKS + MAX_IRQS;

/// The `i` of a [`Event::TimerFire`] that wakes a signal rather than requesting a source.
pub const NO_SOURCE: u8 = 0xFF;

/// What a timer does when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerAction {
    /// Adds a pending count to signal `g` (a task waiting on it is woken).
    Wake(u32),
    /// Requests interrupt source `i` (its index among the declared sources).
    Request(u8),
}

/// A timer: its deadline in ticks and its action.
#[derive(Clone, Copy, Debug)]
pub(super) struct Timer {
    at: u64,
    action: TimerAction,
}

impl<K: Sink> Core<K> {
    /// The virtual clock, in ticks since the run started.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Sets timer `key` to fire at tick `at` (replacing the key's timer, if any). A deadline
    /// already reached fires at the next moment nothing else can happen, the clock standing
    /// still. Not a scheduling point.
    pub fn set_timer(&mut self, key: u32, at: u64, action: TimerAction) {
        if self.timers.insert(key, Timer { at, action }).is_err() {
            panic!("more than {} timers set at once", MAX_TIMERS);
        }
    }

    /// Moves the clock on by `ticks` (a tick source the port drives tick by tick while
    /// nothing else can happen: an application's SysTick monotonic), recorded as a
    /// `TimeAdvance`.
    pub fn tick_clock(&mut self, ticks: u64) {
        if ticks > 0 {
            self.now = self.now.saturating_add(ticks);
            self.record(Event::TimeAdvance { now: self.now });
        }
    }

    /// Removes timer `key`, if set.
    pub fn cancel_timer(&mut self, key: u32) {
        self.timers.remove(&key);
        if self.timers.is_empty() {
            // A task that now runs alone with nothing able to act must be watched
            // (`sched::spin`): the next point goes through the general loop, which looks.
            self.lean_budget = 0;
        }
    }

    /// Nothing else can happen: moves the clock to the earliest deadline and fires every
    /// timer due by then. With no task alive, only timers that request an interrupt source
    /// fire (a wake-up has nobody left to wake). Returns whether a timer fired. Out of line:
    /// it runs on a task's stack, inside `decide`.
    #[inline(never)]
    pub(super) fn advance_time(&mut self, alive: bool) -> bool {
        let fires = |t: &Timer| alive || matches!(t.action, TimerAction::Request(_));
        let Some(at) = self
            .timers
            .iter()
            .filter(|(_, t)| fires(t))
            .map(|(_, t)| t.at)
            .min()
        else {
            return false;
        };
        if at > self.now {
            self.now = at;
            self.record(Event::TimeAdvance { now: at });
        }
        // Every timer due fires, in the map's order (deterministic); the tasks they wake
        // then compete as any enabled tasks do.
        loop {
            let now = self.now;
            let due = self
                .timers
                .iter()
                .find(|(_, t)| t.at <= now && fires(t))
                .copied();
            let Some((key, timer)) = due else { break };
            self.timers.remove(&key);
            let (g, i) = match timer.action {
                TimerAction::Wake(g) => {
                    self.apply(NO_TASK, &Op::Signal { s: 0, g });
                    (g, NO_SOURCE)
                }
                TimerAction::Request(i) => {
                    self.execute_irq_op(&Op::IrqRequest { s: 0, i });
                    (0, i)
                }
            };
            self.record(Event::TimerFire { k: key, g, i });
        }
        // What the woken tasks see has changed: no task is known to spin polling.
        self.data_changed();
        true
    }
}
