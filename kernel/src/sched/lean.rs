//! The lean path: a plain access or yield at a site nothing aims at, decided in a few dozen
//! instructions without storing the pending operation, while the general loop has left it a
//! budget of steps ([`Core::refresh_lean`]).

use super::{Core, Next, Sink};
use crate::op::{LEAN_ACCESSES, LEAN_YIELD, Op, Slot};
use crate::task::{TaskId, TaskSet};

impl<K: Sink> Core<K> {
    /// Task `me` stops before `op`; returns what runs next.
    ///
    /// Most scheduling points are plain accesses or yields at sites nothing aims at, with
    /// nothing postponed or forced: there the loop of [`Core::decide`] reduces to "pick among
    /// the enabled tasks; if it is `me`, execute". The lean path takes exactly those
    /// decisions (same draws, same events) while `lean_budget` is not 0, without storing the
    /// pending operation unless another task is picked.
    ///
    /// Why this equals the loop: `op` is a plain access or yield, which no strategy's check,
    /// no target check (races and triples are ruled out by [`crate::targets::Targets::may_aim_at_op`])
    /// and no tracker acts on (an access closing a triple's window is the one exception:
    /// AVIO's budget is 0 once a window has opened); with nothing forced or postponed, the
    /// step limit and the strategy's next point of interest not reached (the budget),
    /// `decide` would pick among the enabled tasks exactly as
    /// [`crate::strategy::AnyStrategy::lean_pick`] does, and the enabled tasks are the stopped
    /// ones the general loop last allowed.
    ///
    /// A port may split this in three, to keep its fast path small: [`Core::lean_gate`],
    /// then [`Core::lean_alone`] (nobody else may run: `me` goes on), then
    /// [`Core::lean_point`]; or [`Core::stopped_at`] when the gate is shut.
    #[inline(always)]
    pub fn point(&mut self, me: TaskId, op: Op) -> Next {
        if let Op::Yield { .. } = op {
            return self.yield_point(me, op);
        }
        if !self.lean_gate(&op) {
            return self.stopped_at(me, op);
        }
        if self.lean_alone() {
            return Next::Run(me);
        }
        self.lean_point(me, op)
    }

    /// May `op` take the lean path: a plain access, budget left, at a site nothing aims at?
    /// (Yields have their own gate, [`Core::yield_gate`]; the accesses' mask alone is one
    /// immediate operand.)
    #[inline(always)]
    pub fn lean_gate(&self, op: &Op) -> bool {
        self.lean_budget != 0
            && op.lean_bit() & LEAN_ACCESSES != 0
            && !self.targets.may_aim_at_op(op)
    }

    /// Is `op` one the lean path may execute: a plain access or yield at a site nothing
    /// aims at?
    #[inline(always)]
    fn lean_op(&self, op: &Op) -> bool {
        op.lean_bit() & (LEAN_ACCESSES | LEAN_YIELD) != 0 && !self.targets.may_aim_at_op(op)
    }

    /// Past the lean gate: when no other task may be picked, the caller goes on (`true`, the
    /// step taken); `false`: nothing was done.
    #[inline(always)]
    pub fn lean_alone(&mut self) -> bool {
        if self.stopped.and(self.lean_allowed).is_empty() {
            self.lean_step();
            return true;
        }
        false
    }

    /// Past the lean gate, with other tasks that may be picked: the strategy's lean pick (or
    /// the general loop, if it declines).
    #[inline(always)]
    pub fn lean_point(&mut self, me: TaskId, op: Op) -> Next {
        self.lean_pick_point(me, op, false)
    }

    /// Task `me` stops before the yield `op` (an [`Op::Yield`]); returns what runs next.
    ///
    /// A yield takes the lean path under every strategy, also one that sees yields (PCT,
    /// POS): there the general loop's only extra work for an executed yield is
    /// [`crate::strategy::AnyStrategy::spun`] on the task that executed it, which
    /// [`Core::yielded`] does here (and [`Core::lean_switch`] for a picked task stopped at
    /// a yield).
    ///
    /// A port may split this as [`Core::point`]: [`Core::yield_gate`], then
    /// [`Core::lean_alone`] followed by [`Core::yielded`], then [`Core::lean_yield_point`].
    #[inline(always)]
    pub fn yield_point(&mut self, me: TaskId, op: Op) -> Next {
        if !self.yield_gate(&op) {
            return self.stopped_at(me, op);
        }
        if self.lean_alone() {
            self.yielded(me);
            return Next::Run(me);
        }
        self.lean_yield_point(me, op)
    }

    /// May the yield `op` take the lean path: budget left, at a site nothing aims at?
    #[inline(always)]
    pub fn yield_gate(&self, op: &Op) -> bool {
        self.lean_budget != 0 && !self.targets.may_aim_at_op(op)
    }

    /// Task `me` has just executed a yield: a strategy that sees yields learns that `me`
    /// may be spinning (the one place that tells it, for the lean path and `run` alike).
    #[inline(always)]
    pub fn yielded(&mut self, me: TaskId) {
        if self.sees_yields {
            self.strategy.spun(me);
        }
    }

    /// [`Core::lean_point`] for a yield, past [`Core::yield_gate`].
    #[inline(always)]
    pub fn lean_yield_point(&mut self, me: TaskId, op: Op) -> Next {
        self.lean_pick_point(me, op, true)
    }

    /// The lean pick at `me`'s point before `op` (a yield when `yielding`: known at each
    /// call, so accesses pay nothing for the yield's case).
    #[inline(always)]
    fn lean_pick_point(&mut self, me: TaskId, op: Op, yielding: bool) -> Next {
        let others = self.stopped.and(self.lean_allowed);
        if let Some(t) = self
            .strategy
            .lean_pick(others.or(TaskSet::one(me)), &mut self.rng)
        {
            if t == me {
                self.lean_step();
                if yielding {
                    self.yielded(me);
                }
                return Next::Run(me);
            }
            self.stop(me, op);
            return self.lean_switch(t);
        }
        self.stopped_at(me, op)
    }

    /// Task `me` executes the release or signal `op` at once, with no decision before it;
    /// returns what runs next (`me`, unless the run ends here).
    ///
    /// A release is a left mover (Lipton's reduction, atomfuzzer-fse08 §3 and ref. 32: "any
    /// lock release as a left-mover"), and so is a signal (a semaphore's V): it commutes
    /// with every operation of every other context, the acquires of its lock (the waits on
    /// its signal) included, which it can only enable. A run in which the scheduler lets
    /// another context go at the point before it has the same events, in another order of
    /// independent ones, as the run that executes it first and lets that context go at the
    /// task's next point; so the decision here is no decision, and skipping it loses no
    /// behaviour. The execution itself is the loop's ([`Core::run`]): the targets'
    /// check, the event, the trackers, the strategy's analysis, the spin marks and the
    /// lean path's refresh; a firing due now fires at the next decision. Two cases go
    /// through the loop, so that how a run ends does not change: a lone task found
    /// starving, and the step limit.
    pub fn execute_now(&mut self, me: TaskId, op: Op) -> Next {
        assert!(
            matches!(op, Op::Release { .. } | Op::Signal { .. }),
            "only a release or a signal executes without a decision"
        );
        if self.watch.starved || self.steps >= self.step_limit {
            return self.stopped_at(me, op);
        }
        self.run(me, op)
    }

    /// The general path: `me` is stopped before `op` and the loop decides, unless `me` runs
    /// alone ([`Core::alone_at`]): then the loop's decision is known and `op` executes.
    #[inline(never)]
    pub fn stopped_at(&mut self, me: TaskId, op: Op) -> Next {
        if self.solo && op.observes().is_some() {
            return self.alone_at(me, op);
        }
        self.stop(me, op);
        self.decide()
    }

    /// [`Core::stopped_at`] while a task runs alone. Out of line: inlined, its registers
    /// and frame cost every other general step some 30 instructions (an Embassy poll step
    /// takes two).
    #[inline(never)]
    fn alone_at(&mut self, me: TaskId, op: Op) -> Next {
        if self.goes_on_alone() {
            if self.strategy.checks(&op) {
                // The loop's pick is `me`: what follows it is the strategy's check.
                self.stop(me, op);
                return self.after_pick(me);
            }
            // What the lean path may do was worked out from what an operation that only
            // observes leaves as it was: only a task the analysis released changes it.
            if self.perform(me, op) {
                self.refresh_lean();
            }
            return Next::Run(me);
        }
        self.stop(me, op);
        self.decide()
    }

    /// Is the general loop's pick at the running task's point before `op` the task itself,
    /// with nothing done before it? So it is when the task runs alone with nothing else
    /// able to act (`solo`, as the last step left it) and `op` only observes (a read or a
    /// yield, which changes nothing another context waits for; both tested by
    /// [`Core::stopped_at`] before [`Core::alone_at`] asks this): then [`Core::decide`] finds
    /// no firing (no source is eligible: a replayed one anchored here is for a source that
    /// cannot fire, and its anchor, the task's count, is not met again), the task the only
    /// one enabled and no other task postponed or forced, nothing to release or to let time
    /// pass for (no timer pending, no poll marked), and one candidate, picked without a
    /// draw. The starving verdict and the step limit are the loop's to give. What follows
    /// the pick is the loop's: the strategy's check when it checks `op`; else `op` runs,
    /// and the lean path's refresh is skipped (nothing it reads changed). A lone spinning
    /// task (a starvation's run, `spin`) takes this step some 256 times.
    #[inline(always)]
    fn goes_on_alone(&self) -> bool {
        self.irq_running.is_empty()
            && !self.watch.starved
            && self.steps < self.step_limit
            && self.fire_next.is_none()
            && !self.timer_pending()
            && !self.polls_marked()
    }

    /// One step of the lean path.
    #[inline(always)]
    fn lean_step(&mut self) {
        self.steps += 1;
        self.lean_budget -= 1;
    }

    /// The lean path picked `t`, another task than the caller: when `t` is stopped at a
    /// plain access or yield that nothing aims at, it executes here (what `run` would do for
    /// it: the step, and for a yield what a strategy that sees yields learns); otherwise the
    /// general loop takes over after the pick.
    #[inline(always)]
    fn lean_switch(&mut self, t: TaskId) -> Next {
        // The budget the caller's gate saw is untouched: a pick takes no step.
        if let Slot::Alive(Some(op)) = self.slots[t as usize]
            && self.lean_op(&op)
        {
            self.slots[t as usize] = Slot::Alive(None);
            self.stopped.remove(t);
            self.lean_step();
            if let Op::Yield { .. } = op {
                self.yielded(t);
            }
            return Next::Run(t);
        }
        self.after_pick(t)
    }
}
