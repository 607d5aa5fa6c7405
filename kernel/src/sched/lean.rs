//! The lean path: a plain access or yield at a site nothing aims at, decided in a few dozen
//! instructions without storing the pending operation, while the general loop has left it a
//! budget of steps ([`Core::refresh_lean`]).

use super::{Core, Next, Sink};
use crate::op::{Op, Slot};
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
        if !self.lean_gate(&op) {
            return self.stopped_at(me, op);
        }
        if self.lean_alone() {
            return Next::Run(me);
        }
        self.lean_point(me, op)
    }

    /// May `op` take the lean path: a plain access or yield (a yield only when the strategy
    /// does not see them), budget left, at a site nothing aims at?
    #[inline(always)]
    pub fn lean_gate(&self, op: &Op) -> bool {
        self.lean_budget != 0 && self.lean_op(op)
    }

    /// Is `op` one the lean path may execute: a plain access or yield (a yield only when
    /// the strategy does not see them) at a site nothing aims at?
    #[inline(always)]
    fn lean_op(&self, op: &Op) -> bool {
        self.lean_ops & op.lean_bit() != 0 && !self.targets.may_aim_at_op(op)
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
        let others = self.stopped.and(self.lean_allowed);
        if let Some(t) = self
            .strategy
            .lean_pick(others.or(TaskSet::one(me)), &mut self.rng)
        {
            if t == me {
                self.lean_step();
                return Next::Run(me);
            }
            self.stop(me, op);
            return self.lean_switch(t);
        }
        self.stopped_at(me, op)
    }

    /// The general path: `me` is stopped before `op` and the loop decides.
    #[inline(never)]
    pub fn stopped_at(&mut self, me: TaskId, op: Op) -> Next {
        self.stop(me, op);
        self.decide()
    }

    /// One step of the lean path.
    #[inline(always)]
    fn lean_step(&mut self) {
        self.steps += 1;
        self.lean_budget -= 1;
    }

    /// The lean path picked `t`, another task than the caller: when `t` is stopped at a
    /// plain access or yield that nothing aims at, it executes here (what `run` would do for
    /// it: nothing but the step); otherwise the general loop takes over after the pick.
    #[inline(never)]
    fn lean_switch(&mut self, t: TaskId) -> Next {
        // The budget the caller's gate saw is untouched: a pick takes no step.
        if let Slot::Alive(Some(op)) = self.slots[t as usize]
            && self.lean_op(&op)
        {
            self.slots[t as usize] = Slot::Alive(None);
            self.stopped.remove(t);
            self.lean_step();
            return Next::Run(t);
        }
        self.after_pick(t)
    }
}
