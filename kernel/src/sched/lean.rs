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
    /// no target check (races and triples are ruled out by [`crate::targets::Targets::may_aim_at`])
    /// and no tracker acts on (an access closing a triple's window is the one exception:
    /// AVIO's budget is 0 once a window has opened); with nothing forced or postponed, the
    /// step limit and the strategy's next point of interest not reached (the budget),
    /// `decide` would pick among the enabled tasks exactly as
    /// [`crate::strategy::AnyStrategy::lean_pick`] does, and the enabled tasks are the stopped
    /// ones the general loop last allowed.
    #[inline(always)]
    pub fn point(&mut self, me: TaskId, op: Op) -> Next {
        if let Some(s) = op.lean_site()
            && self.lean_budget != 0
            && !self.targets.may_aim_at(s)
            && (self.lean_yields || !matches!(op, Op::Yield { .. }))
        {
            let others = self.stopped.and(self.lean_allowed);
            if others.is_empty() {
                self.lean_step();
                return Next::Run(me);
            }
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
        }
        self.stopped_at(me, op)
    }

    /// The general path: `me` is stopped before `op` and the loop decides.
    #[inline(never)]
    pub(super) fn stopped_at(&mut self, me: TaskId, op: Op) -> Next {
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
        if let Slot::Alive(Some(op)) = self.slots[t as usize]
            && let Some(s) = op.lean_site()
            && !self.targets.may_aim_at(s)
            && (self.lean_yields || !matches!(op, Op::Yield { .. }))
        {
            self.slots[t as usize] = Slot::Alive(None);
            self.stopped.remove(t);
            self.lean_step();
            return Next::Run(t);
        }
        self.after_pick(t)
    }
}
