//! The lean path: a plain access or yield at a site nothing aims at, with nothing forced or
//! postponed, decided in a few dozen instructions without storing the pending operation.

use super::{Core, Next, Sink};
use crate::event::TraceLevel;
use crate::op::Op;
use crate::task::{TaskId, TaskSet};

impl<K: Sink> Core<K> {
    /// Task `me` stops before `op`; returns what runs next.
    ///
    /// Most scheduling points are plain accesses or yields at sites nothing aims at, with
    /// nothing postponed or forced: there the loop of [`Core::decide`] reduces to "pick among
    /// the enabled tasks; if it is `me`, execute". [`Core::lean`] takes exactly those
    /// decisions (same draws, same events) without storing the pending operation, so that the
    /// cost of instrumentation stays a few dozen instructions.
    #[inline(always)]
    pub fn point(&mut self, me: TaskId, op: Op) -> Next {
        match self.lean(me, &op) {
            Some(Next::Run(t)) if t == me => Next::Run(me),
            Some(Next::Run(t)) => {
                self.stop(me, op);
                self.after_pick(t)
            }
            _ => self.stopped_at(me, op),
        }
    }

    /// The general path: `me` is stopped before `op` and the loop decides.
    #[inline(never)]
    pub(super) fn stopped_at(&mut self, me: TaskId, op: Op) -> Next {
        self.stop(me, op);
        self.decide()
    }

    /// The lean path of [`Core::point`]. `None`: the point needs the general loop (and no
    /// random draw has been made). `Some(Run(me))`: `me` executed `op`. `Some(Run(t))`: the
    /// strategy picked another task `t`, which the caller hands to [`Core::after_pick`].
    ///
    /// Why this equals the loop: `op` is a plain access or yield, which no strategy's check,
    /// no target check (the race one is ruled out by [`Targets::may_race_at`]) and no tracker
    /// acts on; with nothing forced or postponed and the step limit not reached, `decide`
    /// would pick among the enabled tasks exactly as [`AnyStrategy::lean_pick`] does.
    #[inline(always)]
    pub(super) fn lean(&mut self, me: TaskId, op: &Op) -> Option<Next> {
        let s = match *op {
            Op::Read { s, .. } | Op::Write { s, .. } | Op::Update { s, .. } | Op::Yield { s } => s,
            _ => return None,
        };
        if (self.forced.0 | self.postponed.0) != 0
            || self.steps >= self.step_limit
            || self.targets.may_race_at(s)
        {
            return None;
        }
        let (others, _) = self.enabled_tasks();
        let enabled = TaskSet(others.0 | 1 << me);
        let t = if enabled.0 == 1 << me {
            me
        } else {
            self.strategy.lean_pick(enabled, &mut self.rng)?
        };
        if t == me {
            self.steps += 1;
            if self.trace == TraceLevel::Full {
                self.sink.emit(&op.event(me));
            }
            if self.analyzing {
                self.strategy.lean_after(me, self.steps);
            }
        }
        Some(Next::Run(t))
    }
}
