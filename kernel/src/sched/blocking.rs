//! Blocking: which stopped tasks are enabled (locks, joins, signals, the critical section),
//! and, when none is while some are alive, the deadlock report with its lock cycle.

use super::{Core, Sink};
use crate::event::{Event, NO_TASK, TraceLevel, WaitKind};
use crate::op::{Op, Slot};
use crate::task::{MAX_TASKS, TaskId, TaskSet};

impl<K: Sink> Core<K> {
    pub(super) fn enabled(&self, op: &Op) -> bool {
        match *op {
            Op::Acquire { l, .. } => !self.locks.contains_key(&l),
            Op::Join { child, .. } => matches!(self.slots[child as usize], Slot::Done),
            Op::Wait { g, .. } => self.signals.get(&g).is_some_and(|n| *n > 0),
            // Nested sections never reach the core (the port keeps them local).
            Op::CsEnter => self.cs_holder.is_none(),
            // A wait for an interrupt ends once a handler has run since it began.
            Op::Idle { since, .. } => self.irq_entered != since,
            _ => true,
        }
    }

    /// Enabled tasks, and whether any task is alive and stopped.
    #[inline(always)]
    pub(super) fn enabled_tasks(&self) -> (TaskSet, bool) {
        if self.blocking.is_empty() && self.cs_holder.is_none() {
            // Nothing stopped can be disabled: the common case, without a scan.
            return (self.stopped, !self.stopped.is_empty());
        }
        self.enabled_scan()
    }

    /// [`Core::enabled_tasks`] when some stopped task may be disabled.
    #[inline(never)]
    pub(super) fn enabled_scan(&self) -> (TaskSet, bool) {
        let mut enabled = self.stopped.minus(self.blocking);
        for t in self.blocking.iter() {
            if let Some(op) = self.slots[t as usize].pending()
                && self.enabled(op)
            {
                enabled.insert(t);
            }
        }
        // A critical section masks interrupts on a single core: nothing else runs until the
        // holder leaves it (if the holder blocks inside, that is a deadlock).
        if let Some(h) = self.cs_holder {
            enabled = enabled.and(TaskSet(1 << h));
        }
        (enabled, !self.stopped.is_empty())
    }

    /// Is every live task waiting for an interrupt ([`Op::Idle`])?
    pub(super) fn all_idle(&self) -> bool {
        self.stopped
            .iter()
            .all(|t| matches!(self.slots[t as usize].pending(), Some(Op::Idle { .. })))
            && !self.stopped.is_empty()
    }

    /// The deadlock report: every stopped task, what it waits for, and who holds that.
    pub(super) fn report_blocked(&mut self) {
        for i in 0..MAX_TASKS {
            let Some(op) = self.slots[i].pending().copied() else {
                continue;
            };
            let t = i as TaskId;
            let (kind, on, holder) = match op {
                Op::Acquire { l, .. } => (
                    WaitKind::Lock,
                    l,
                    self.locks.get(&l).copied().unwrap_or(NO_TASK),
                ),
                Op::Join { child, .. } => (WaitKind::Join, child as u32, child),
                Op::Wait { g, .. } => (WaitKind::Signal, g, NO_TASK),
                Op::CsEnter => (
                    WaitKind::CriticalSection,
                    0,
                    self.cs_holder.unwrap_or(NO_TASK),
                ),
                _ => continue,
            };
            self.sink.emit(&Event::Blocked {
                t,
                s: op.site().unwrap_or(0),
                kind: kind as u8,
                on,
                holder,
            });
        }
        self.report_cycle();
    }

    /// What `t` waits for, when it is a lock or the critical section that a task holds:
    /// (site, lock, holder); the critical section is lock `u32::MAX`.
    pub(super) fn waits_for(&self, t: TaskId) -> Option<(u32, u32, TaskId)> {
        match *self.slots[t as usize].pending()? {
            Op::Acquire { s, l, .. } => Some((s, l, *self.locks.get(&l)?)),
            Op::CsEnter => Some((0, u32::MAX, self.cs_holder?)),
            _ => None,
        }
    }

    /// The lowest task id on a lock cycle among the blocked tasks, if there is one.
    pub(super) fn lock_cycle(&self) -> Option<TaskId> {
        (0..MAX_TASKS as TaskId).find(|&start| {
            let mut t = start;
            for _ in 0..MAX_TASKS {
                match self.waits_for(t) {
                    Some((_, _, h)) if h == start => return true,
                    Some((_, _, h)) if h > start => t = h,
                    _ => return false,
                }
            }
            false
        })
    }

    /// Emits the first lock cycle among the blocked tasks as `DeadlockConfirmed` edges,
    /// starting at its lowest task id.
    pub(super) fn report_cycle(&mut self) {
        let Some(start) = self.lock_cycle() else {
            return;
        };
        let mut t = start;
        while let Some((s, l, holder)) = self.waits_for(t) {
            self.sink
                .emit(&Event::DeadlockConfirmed { t, s, l, holder });
            t = holder;
            if t == start {
                break;
            }
        }
    }

    /// Recomputes what the lean path may do on its own, after a step of the general loop:
    /// its budget (0 while a task is forced or postponed, at full trace, while a task runs
    /// alone with nothing else able to act, or when the strategy must see the next step;
    /// else up to the step limit or the strategy's next point of interest) and the tasks it may pick (enabledness of blocking operations and the
    /// critical section change only in the general loop).
    pub(super) fn refresh_lean(&mut self) {
        let mut allowed = TaskSet(!0);
        for t in self.blocking.iter() {
            if let Some(op) = self.slots[t as usize].pending()
                && !self.enabled(op)
            {
                allowed.remove(t);
            }
        }
        if let Some(h) = self.cs_holder {
            allowed = TaskSet::one(h);
        }
        // A task alone with nothing else able to act goes through the general loop, which
        // watches whether it starves (`spin`).
        let alone = self.runs_alone(allowed);
        let solo = alone && !self.irq_may_fire();
        // Alone but for a firing the strategy holds in reserve: the spin release's case.
        let holding = alone && !solo && self.reserved_firing().is_some();
        if !solo {
            self.watch.reset();
        }
        // Spins matter only while something is held back or a task runs alone (`spin`).
        self.keeps_spins = !self.postponed.is_empty() || solo || holding;
        if !self.keeps_spins {
            self.forget_spins();
        }
        self.solo = solo;
        if (self.forced.0 | self.postponed.0) != 0
            || self.trace == TraceLevel::Full
            || solo
            || holding
            || self.polls_marked()
        {
            self.lean_budget = 0;
            return;
        }
        let to_limit = self.step_limit.saturating_sub(self.steps);
        self.lean_budget = to_limit
            .min(self.strategy.lean_budget(self.steps))
            .min(self.steps_to_irq());
        self.lean_allowed = allowed;
    }
}
