//! Strategies: who runs next. A strategy sees the tasks' pending operations, the postponed
//! set and the lock/block facts, never the CPU, so it decides the same way on every port.
//!
//! The loop that calls them is CalFuzzer's (calfuzzer-cav09 Algorithm 1, in
//! [`crate::sched::Core::decide`]): pick a task among the enabled, not postponed ones
//! ([`Strategy::pick`]); ask the strategy whether it executes now or is postponed
//! ([`Strategy::check`]); after it executes, let the strategy learn from it
//! ([`Strategy::analyze`]). Thrashing and the livelock bound are the loop's, not the
//! strategies'.

mod atomfuzzer;
mod deadlockfuzzer;
mod drfinder;
mod pct;
mod racefuzzer;

pub use atomfuzzer::{AtomFuzzer, Q_ONE};
pub use deadlockfuzzer::DeadlockFuzzer;
pub use drfinder::DrFinder;
pub use pct::Pct;
pub use racefuzzer::RaceFuzzer;

use crate::config::{Config, StrategyId};
use crate::rng::SchedRng;
use crate::sched::{MAX_TASKS, Op, Slot, TaskId, TaskSet};
use crate::targets::{Targets, Tracker};

/// What a strategy sees at one decision.
pub struct View<'a> {
    /// The task table.
    pub slots: &'a [Slot; MAX_TASKS],
    /// Tasks the strategy has postponed.
    pub postponed: TaskSet,
    /// Scheduling steps executed so far.
    pub step: u32,
    /// The run's targets.
    pub targets: &'a Targets,
    /// Lock and atomic-block facts per task.
    pub tracker: &'a Tracker,
}

impl View<'_> {
    /// The pending operation of task `t` (`None`: not stopped at a scheduling point).
    pub fn pending(&self, t: TaskId) -> Option<&Op> {
        self.slots.get(t as usize)?.pending()
    }
}

/// What happens to the picked task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// It executes its pending operation now.
    Execute,
    /// It joins the postponed set.
    Postpone,
    /// It joins the postponed set, and these postponed tasks leave it and execute first,
    /// in task-id order (RaceFuzzer's resolution of a real race, Algorithm 2 lines 11–13).
    ExecuteFirst(TaskSet),
}

/// A task of `candidates` chosen uniformly (atomfuzzer-fse08 Algorithm 1, line 4).
pub fn uniform(candidates: TaskSet, rng: &mut SchedRng) -> TaskId {
    candidates.nth(rng.below(candidates.len()))
}

/// A scheduling strategy.
pub trait Strategy {
    /// Picks one of `candidates` (enabled, not postponed; at least two). Default:
    /// [`uniform`].
    fn pick(&mut self, candidates: TaskSet, _view: &View<'_>, rng: &mut SchedRng) -> TaskId {
        uniform(candidates, rng)
    }

    /// Can [`Strategy::check`] do anything but execute `op`? The loop skips the check
    /// otherwise: that is the path of every operation that is not a breakpoint.
    fn checks(&self, _op: &Op) -> bool {
        false
    }

    /// Decides whether the picked task `t` executes its pending `op` now. Default: it does.
    fn check(&mut self, _t: TaskId, _op: &Op, _view: &View<'_>, _rng: &mut SchedRng) -> Check {
        Check::Execute
    }

    /// Learns from `t` having executed `op` (after the tracker has recorded it); returns
    /// postponed tasks to release, which run next.
    fn analyze(&mut self, _t: TaskId, _op: &Op, _view: &View<'_>, _rng: &mut SchedRng) -> TaskSet {
        TaskSet::EMPTY
    }
}

/// SimpleFuzzer (atomfuzzer-fse08 Algorithm 1): at each state, a task chosen uniformly at
/// random among the enabled ones executes its next statement.
#[derive(Clone, Debug, Default)]
pub struct Random;

impl Strategy for Random {}

/// Is `op` a lock acquire (where AtomFuzzer, DeadlockFuzzer and DrFinder act)?
pub(crate) fn is_acquire(op: &Op) -> bool {
    matches!(op, Op::Acquire { .. })
}

/// The strategy named by the configuration block (static dispatch, no heap).
pub enum AnyStrategy {
    /// See [`Random`].
    Random(Random),
    /// See [`RaceFuzzer`].
    Race(RaceFuzzer),
    /// See [`AtomFuzzer`].
    Atom(AtomFuzzer),
    /// See [`DeadlockFuzzer`].
    Deadlock(DeadlockFuzzer),
    /// See [`DrFinder`].
    DrFinder(DrFinder),
    /// See [`Pct`].
    Pct(Pct),
}

impl AnyStrategy {
    /// The strategy the configuration asks for.
    pub fn from_config(config: &Config, rng: &mut SchedRng) -> Self {
        match config.strategy {
            StrategyId::Random => AnyStrategy::Random(Random),
            StrategyId::Race => AnyStrategy::Race(RaceFuzzer),
            StrategyId::Atom => AnyStrategy::Atom(AtomFuzzer::new(config.params[0])),
            StrategyId::Deadlock => AnyStrategy::Deadlock(DeadlockFuzzer),
            StrategyId::DrFinder => AnyStrategy::DrFinder(DrFinder::default()),
            StrategyId::Pct => AnyStrategy::Pct(Pct::new(config.params[0], config.params[1], rng)),
        }
    }
}

impl AnyStrategy {
    /// The pick at a point where the strategy needs no [`View`] (the kernel's lean path):
    /// uniform for the strategies whose pick is uniform, priority for PCT; `None` (before
    /// any draw) when the pick depends on more, as DrFinder's during an escort.
    #[inline(always)]
    pub fn lean_pick(&mut self, enabled: TaskSet, rng: &mut SchedRng) -> Option<TaskId> {
        match self {
            AnyStrategy::Pct(s) => Some(s.highest(enabled)),
            AnyStrategy::DrFinder(s) if s.escorting() => None,
            _ => Some(uniform(enabled, rng)),
        }
    }

    /// What [`Strategy::analyze`] does after a plain access or yield by `t` (`step`: steps
    /// executed so far): only PCT's change points depend on it.
    #[inline(always)]
    pub fn lean_after(&mut self, t: TaskId, step: u32) {
        if let AnyStrategy::Pct(s) = self {
            s.passed_step(t, step);
        }
    }
}

impl Strategy for AnyStrategy {
    fn pick(&mut self, candidates: TaskSet, view: &View<'_>, rng: &mut SchedRng) -> TaskId {
        match self {
            AnyStrategy::Pct(s) => s.pick(candidates, view, rng),
            AnyStrategy::DrFinder(s) => s.pick(candidates, view, rng),
            // The others pick uniformly; only their checks differ.
            _ => uniform(candidates, rng),
        }
    }

    fn checks(&self, op: &Op) -> bool {
        match self {
            AnyStrategy::Random(_) | AnyStrategy::Pct(_) => false,
            AnyStrategy::Race(s) => s.checks(op),
            AnyStrategy::Atom(s) => s.checks(op),
            AnyStrategy::Deadlock(s) => s.checks(op),
            AnyStrategy::DrFinder(s) => s.checks(op),
        }
    }

    fn check(&mut self, t: TaskId, op: &Op, view: &View<'_>, rng: &mut SchedRng) -> Check {
        match self {
            AnyStrategy::Random(_) | AnyStrategy::Pct(_) => Check::Execute,
            AnyStrategy::Race(s) => s.check(t, op, view, rng),
            AnyStrategy::Atom(s) => s.check(t, op, view, rng),
            AnyStrategy::Deadlock(s) => s.check(t, op, view, rng),
            AnyStrategy::DrFinder(s) => s.check(t, op, view, rng),
        }
    }

    fn analyze(&mut self, t: TaskId, op: &Op, view: &View<'_>, rng: &mut SchedRng) -> TaskSet {
        match self {
            AnyStrategy::Pct(s) => s.analyze(t, op, view, rng),
            AnyStrategy::DrFinder(s) => s.analyze(t, op, view, rng),
            _ => TaskSet::EMPTY,
        }
    }
}
