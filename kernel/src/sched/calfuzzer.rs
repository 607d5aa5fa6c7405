//! CalFuzzer's loop (calfuzzer-cav09 Algorithm 1): forced tasks first, then a pick among the
//! enabled, not postponed tasks, the strategy's check (execute or postpone), the effect of
//! the operation, and the strategy's analysis; thrashing, the spin release (`spin`) and the
//! livelock bound release postponed tasks so that the loop always makes progress.

use super::{Core, MAX_LOCKS, Next, Sink};
use crate::event::{Event, Verdict};
use crate::op::{Op, Slot};
use crate::strategy::{Check, View};
use crate::task::{TaskId, TaskSet};

impl<K: Sink> Core<K> {
    /// Picks the next task and executes its pending operation: CalFuzzer's loop
    /// (calfuzzer-cav09 Algorithm 1; racefuzzer-pldi08 Algorithm 1, lines 4–5, 20–24):
    /// forced tasks first, then a task among the enabled, not postponed ones, which the
    /// strategy executes or postpones; thrashing and the livelock bound release postponed
    /// tasks so that the loop always makes progress.
    pub fn decide(&mut self) -> Next {
        loop {
            // An interrupt due now fires before any task goes (see `irq`); a replayed one
            // competes with them.
            self.ask_replayed_firing();
            if let Some(i) = self.irq_to_fire(false, false) {
                return Next::Fire(i);
            }
            let (enabled, alive) = self.enabled_tasks();
            if enabled.is_empty() {
                // Before the run ends or deadlocks, what could still fire does: a handler
                // may be what the blocked tasks wait for.
                if let Some(i) = self.irq_to_fire(true, !alive) {
                    return Next::Fire(i);
                }
                // Then time moves to the next deadline (see `time`).
                if self.advance_time(alive) {
                    continue;
                }
                let verdict = if let Some(lost) = self.lost_wake() {
                    lost
                } else if !alive {
                    Verdict::Pass
                } else if self.all_idle() {
                    // Every live task waits for an interrupt and none can come, and no
                    // sleeper was forgotten: a framework's firmware is done.
                    Verdict::Pass
                } else {
                    self.report_blocked();
                    Verdict::Deadlock
                };
                self.abort(verdict);
                return Next::End(verdict);
            }
            if self.watch.starved {
                // A timer set since the task was found alone (setting one is no scheduling
                // point) may still change what it waits for.
                if self.timer_pending() {
                    self.watch.reset();
                } else {
                    return self.starve();
                }
            }
            if self.steps >= self.step_limit {
                self.abort(Verdict::StepLimit);
                return Next::End(Verdict::StepLimit);
            }
            let forced = self.forced.and(enabled);
            if !forced.is_empty() {
                let t = forced.nth(0);
                self.forced.remove(t);
                return self.run(t, self.pending(t));
            }
            // A forced task that got disabled competes like any other once enabled again.
            self.forced = TaskSet::EMPTY;
            if !self.postponed.is_empty() && self.release_livelocked() {
                continue;
            }
            let candidates = enabled.minus(self.postponed);
            if candidates.is_empty() {
                // Thrashing (racefuzzer-pldi08 line 23, atomfuzzer-fse08 lines 30–31): every
                // enabled task is postponed; a random one is released and runs, so that a
                // strategy cannot postpone it again at once.
                let t = enabled.nth(self.rng.below(enabled.len()));
                self.postponed.remove(t);
                self.record(Event::Thrash { t });
                return self.run(t, self.pending(t));
            }
            // Line 26 again, with the tasks that can only spin counted as waiting: the
            // livelock of racefuzzer-pldi08 §4, released at once (`sched::spin`).
            if let Some(next) = self.spin_release(enabled, candidates) {
                return next;
            }
            // Tasks that only poll and wake each other: time passes (`sched::spin`).
            if self.let_time_pass(candidates) {
                continue;
            }
            let candidates = self.before_spinners(candidates);
            let view = View {
                slots: &self.slots,
                postponed: self.postponed,
                step: self.steps,
                targets: &self.targets,
                tracker: &self.tracker,
            };
            // One candidate is no choice (no random draw, on every port).
            let t = if candidates.len() == 1 {
                candidates.nth(0)
            } else {
                self.strategy.pick(candidates, &view, &mut self.rng)
            };
            if let Some(next) = self.check_picked(t) {
                return next;
            }
        }
    }

    /// The rest of the loop once `t` is picked: CalFuzzer's check, then run or postpone.
    /// `None`: `t` was postponed and the loop goes on.
    pub(super) fn check_picked(&mut self, t: TaskId) -> Option<Next> {
        let op = self.pending(t);
        if !self.strategy.checks(&op) {
            return Some(self.run(t, op));
        }
        let view = View {
            slots: &self.slots,
            postponed: self.postponed,
            step: self.steps,
            targets: &self.targets,
            tracker: &self.tracker,
        };
        match self.strategy.check(t, &op, &view, &mut self.rng) {
            Check::Execute => return Some(self.run(t, op)),
            Check::Postpone => self.postpone(t, &op),
            Check::ExecuteFirst(first) => {
                self.postpone(t, &op);
                self.postponed = self.postponed.minus(first);
                self.forced = first;
            }
            // `t` stays stopped (not postponed): the handler runs first, then the loop picks
            // again; a source that cannot fire now leaves `t` to execute.
            Check::FireFirst(i) => {
                if !self.fire_soon(i) {
                    return Some(self.run(t, op));
                }
            }
            Check::ExecuteThenFire(i) => {
                let next = self.run(t, op);
                let _ = self.fire_soon(i);
                return Some(next);
            }
        }
        None
    }

    /// Continues the loop after the lean path picked `t` (another task than the caller).
    #[inline(never)]
    pub(super) fn after_pick(&mut self, t: TaskId) -> Next {
        match self.check_picked(t) {
            Some(next) => next,
            None => self.decide(),
        }
    }

    pub(super) fn postpone(&mut self, t: TaskId, op: &Op) {
        self.postponed.insert(t);
        self.postponed_at[t as usize] = self.steps;
        self.record(Event::Postpone {
            t,
            s: op.site().unwrap_or(0),
        });
    }

    /// Releases every task postponed for the livelock bound (counted in scheduling steps);
    /// they run next. Returns whether any was released.
    pub(super) fn release_livelocked(&mut self) -> bool {
        let mut released = false;
        for t in self.postponed.iter() {
            let waited = self.steps - self.postponed_at[t as usize];
            if waited >= self.livelock_bound {
                self.postponed.remove(t);
                self.forced.insert(t);
                self.record(Event::LivelockRelease { t, steps: waited });
                released = true;
            }
        }
        released
    }

    /// The targets' check of context `ctx` about to execute `op` (a race made real, a block
    /// violated, a triple's window entered), its findings emitted; a task whose pattern
    /// completed is no longer held back (atomfuzzer-fse08 Algorithm 2, line 26).
    pub(super) fn check_targets(&mut self, ctx: TaskId, op: &Op) {
        let mut handlers = crate::fixed::Vec::new();
        self.preempted_handlers(&mut handlers);
        let (sink, trace) = (&mut self.sink, self.trace);
        let done = self.targets.before(
            ctx,
            op,
            &self.slots,
            &handlers,
            &self.tracker,
            &mut |e: Event| {
                if e.level() <= trace {
                    sink.emit(&e);
                }
            },
        );
        self.postponed = self.postponed.minus(done);
    }

    /// Executes `t`'s pending operation `op`: the targets' check first (it sees the other
    /// tasks still stopped before theirs), then the effect, then the analyses.
    pub(super) fn run(&mut self, t: TaskId, op: Op) -> Next {
        self.perform(t, op);
        self.refresh_lean();
        Next::Run(t)
    }

    /// [`Core::run`] but for the lean path's refresh; returns whether the strategy's analysis
    /// released or forced a task.
    #[inline(always)]
    pub(super) fn perform(&mut self, t: TaskId, op: Op) -> bool {
        if self.checking {
            self.check_targets(t, &op);
        }
        self.execute(t, op);
        if let Op::Yield { .. } = op {
            self.yielded(t);
        }
        let mut released = false;
        if self.tracking {
            self.tracker.after(t, &op, &self.targets);
            self.tracker.after_access(t, &op, &self.targets);
        }
        if self.analyzing {
            let view = View {
                slots: &self.slots,
                postponed: self.postponed,
                step: self.steps,
                targets: &self.targets,
                tracker: &self.tracker,
            };
            let release = self.strategy.analyze(t, &op, &view, &mut self.rng);
            self.postponed = self.postponed.minus(release);
            self.forced.0 |= release.0;
            released = !release.is_empty();
        }
        self.note_spin(t, &op);
        released
    }

    /// Applies the effect of `op` by task `t` on the scheduler state and records it.
    /// (Inlined: called from [`Core::perform`] alone, which two paths inline.)
    #[inline(always)]
    pub(super) fn execute(&mut self, t: TaskId, op: Op) {
        self.apply(t, &op);
        self.slots[t as usize] = Slot::Alive(None);
        self.stopped.remove(t);
        self.blocking.remove(t);
        self.steps += 1;
        if op.level() <= self.trace
            && let Some(event) = op.event(t)
        {
            self.sink.emit(&event);
        }
    }

    /// The effect of `op` by context `t` (a task or a handler) on locks, signals, the
    /// critical section, spawned tasks and interrupt state.
    pub(super) fn apply(&mut self, t: TaskId, op: &Op) {
        match *op {
            Op::Spawn { child, .. } => self.stop(child, Op::Start),
            Op::Acquire { l, .. } if self.locks.insert(l, t).is_err() => {
                panic!("more than {} locks held at once", MAX_LOCKS);
            }
            Op::Release { l, .. } => {
                self.locks.remove(&l);
            }
            Op::Signal { g, .. } => {
                let n = self.signals.get(&g).copied().unwrap_or(0);
                if self.signals.insert(g, n.saturating_add(1)).is_err() {
                    panic!("more than {} signals pending at once", MAX_LOCKS);
                }
                self.wake_effect(t, g, false);
            }
            Op::Wait { g, .. } => {
                match self.signals.get(&g).copied() {
                    Some(n) if n > 1 => {
                        let _ = self.signals.insert(g, n - 1);
                    }
                    _ => {
                        self.signals.remove(&g);
                    }
                }
                self.wake_effect(t, g, true);
            }
            Op::CsEnter => self.cs_holder = Some(t),
            Op::CsExit => self.cs_holder = None,
            Op::IrqRequest { .. } | Op::IrqMask { .. } | Op::PrioMask { .. } => {
                self.execute_irq_op(op)
            }
            _ => {}
        }
    }
}
