//! Unserializable interleavings made real: AVIO's patterns (Lu, Tucek, Qin, Zhou, ASPLOS'06)
//! triggered actively as CTrigger does (Park, Lu, Zhou, ASPLOS'09). A triple targets a
//! context's two consecutive accesses `a1`, `a3` to one location and another context's
//! access `a2`: R-W-R, W-W-R, R-W-W or W-R-W cannot be explained by any serial order. The
//! strategy holds the context before `a3` (once it has made `a1`) until `a2` has run:
//! a task is postponed until a task stands at `a2` and goes first; a handler that holds
//! `a2` is fired at once (a task or a less urgent handler cannot wait for it otherwise).
//! The check in [`crate::targets`] reports the interleaving when `a2` lands in the window.

use super::{Check, Strategy, View};
use crate::op::Op;
use crate::rng::SchedRng;
use crate::targets::{access, role};
use crate::task::{MAX_TASKS, TaskId, TaskSet};

/// The Avio strategy; its triple is the run's [`role::FIRST`], [`role::SECOND`] and
/// [`role::REMOTE`] breakpoints, and [`role::FIRE`] when a handler holds the remote access.
#[derive(Clone, Debug, Default)]
pub struct Avio {
    /// Tasks for which the handler was fired in their current window (once per window).
    fired: TaskSet,
    /// Whether a handler's window got its firing (once per run for handlers).
    fired_for_handler: bool,
}

impl Strategy for Avio {
    const ANALYZES: bool = true;
    const TRACKS: bool = true;

    fn new(_params: [u32; 4], _rng: &mut SchedRng) -> Self {
        Avio::default()
    }

    fn checks(&self, op: &Op) -> bool {
        access(op).is_some()
    }

    fn check(&mut self, t: TaskId, op: &Op, view: &View<'_>, _rng: &mut SchedRng) -> Check {
        let targets = view.targets;
        if view.tracker.at_second(t, op, targets).is_none() {
            // `a2` by anyone runs at once: the check makes the interleaving real.
            return Check::Execute;
        }
        // `t` stands at `a3`, having made `a1`.
        if let Some(i) = targets.fire_source(0) {
            if self.fired.contains(t) {
                return Check::Execute;
            }
            self.fired.insert(t);
            return Check::FireFirst(i);
        }
        let Some((_, a, _)) = access(op) else {
            return Check::Execute;
        };
        let mut remote = TaskSet::EMPTY;
        for u in 0..MAX_TASKS as TaskId {
            if u != t
                && let Some((s2, a2, _)) = view.pending(u).and_then(access)
                && a2 == a
                && targets.has(s2, role::REMOTE)
            {
                remote.insert(u);
            }
        }
        if remote.is_empty() {
            Check::Postpone // until a task stands at `a2` (or the livelock bound)
        } else {
            Check::ExecuteFirst(remote)
        }
    }

    fn analyze(&mut self, t: TaskId, op: &Op, view: &View<'_>, _rng: &mut SchedRng) -> TaskSet {
        // A new `a1` opens a new window.
        if let Some((s, _, _)) = access(op)
            && view.targets.has(s, role::FIRST)
        {
            self.fired.remove(t);
        }
        TaskSet::EMPTY
    }

    fn handler_fire(&mut self, ctx: TaskId, op: &Op, view: &View<'_>) -> Option<u8> {
        if self.fired_for_handler || view.tracker.at_second(ctx, op, view.targets).is_none() {
            return None;
        }
        self.fired_for_handler = true;
        view.targets.fire_source(0)
    }
}
