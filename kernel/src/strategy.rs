//! Strategies: who runs next. A strategy sees the enabled tasks and their pending
//! operations, never the CPU, so it decides the same way on every port.

use crate::config::{Config, StrategyId};
use crate::rng::SchedRng;
use crate::sched::{MAX_TASKS, Op, Slot, TaskId};

/// What a strategy sees at one decision.
pub struct Choice<'a> {
    /// Enabled tasks, in task-id order (never empty).
    pub enabled: &'a [TaskId],
    /// The task table.
    pub slots: &'a [Slot; MAX_TASKS],
    /// Scheduling steps executed so far.
    pub step: u32,
}

impl Choice<'_> {
    /// The pending operation of task `t` (`None`: not stopped at a scheduling point).
    pub fn pending(&self, t: TaskId) -> Option<&Op> {
        self.slots.get(t as usize)?.pending()
    }
}

/// A scheduling strategy.
pub trait Strategy {
    /// Picks one of `choice.enabled`.
    fn pick(&mut self, choice: &Choice<'_>, rng: &mut SchedRng) -> TaskId;
}

/// SimpleFuzzer (atomfuzzer-fse08 Algorithm 1): at each state, a task chosen uniformly at
/// random among the enabled ones executes its next statement.
#[derive(Clone, Debug, Default)]
pub struct Random;

impl Strategy for Random {
    fn pick(&mut self, choice: &Choice<'_>, rng: &mut SchedRng) -> TaskId {
        // Algorithm 1, line 4: t := a random thread in Enabled(s).
        choice.enabled[rng.below(choice.enabled.len() as u32) as usize]
    }
}

/// The strategy named by the configuration block (static dispatch, no heap).
pub enum AnyStrategy {
    /// See [`Random`].
    Random(Random),
}

impl AnyStrategy {
    /// The strategy the configuration asks for.
    pub fn from_config(config: &Config) -> Self {
        match config.strategy {
            StrategyId::Random => AnyStrategy::Random(Random),
        }
    }
}

impl Strategy for AnyStrategy {
    fn pick(&mut self, choice: &Choice<'_>, rng: &mut SchedRng) -> TaskId {
        match self {
            AnyStrategy::Random(s) => s.pick(choice, rng),
        }
    }
}
