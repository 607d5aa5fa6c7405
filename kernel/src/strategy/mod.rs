//! Strategies: who runs next. A strategy sees the tasks' pending operations, the postponed
//! set and the lock/block facts, never the CPU, so it decides the same way on every port.
//!
//! The loop that calls them is CalFuzzer's (calfuzzer-cav09 Algorithm 1, in
//! [`crate::sched`]): pick a task among the enabled, not postponed ones
//! ([`Strategy::pick`]); ask the strategy whether it executes now or is postponed
//! ([`Strategy::check`]); after it executes, let the strategy learn from it
//! ([`Strategy::analyze`]). Thrashing and the livelock bound are the loop's, not the
//! strategies'.
//!
//! A new strategy is one file implementing [`Strategy`] plus one line in the registry at
//! the bottom of this file (`9 Name "name" => file::Type,`), which declares its module and
//! gives it its configuration-block id and its name.

// The strategies' modules are declared by the registry below (one line each).
pub use atomfuzzer::Q_ONE;
pub use racefuzzer::side_first;

/// The deepest PCT a configuration may ask for: depth `d` takes `d − 1` change points, and
/// PCT keeps at most 8 (a deeper block is clamped; the host refuses a deeper `--pct-depth`).
pub const PCT_MAX_DEPTH: u32 = pct::MAX_DEPTH as u32 + 1;

use crate::op::{Op, Slot};
use crate::rng::SchedRng;
use crate::targets::{Targets, Tracker};
use crate::task::{MAX_TASKS, TaskId, TaskSet};

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
    /// Interrupt source `i` fires first (if it is eligible; else the task executes); the task
    /// stays stopped and the loop picks again once the handler has returned.
    FireFirst(u8),
    /// The task executes, then interrupt source `i` fires at the next decision (if it is
    /// eligible then).
    ExecuteThenFire(u8),
}

/// A task of `candidates` chosen uniformly (atomfuzzer-fse08 Algorithm 1, line 4).
#[inline(always)]
pub fn uniform(candidates: TaskSet, rng: &mut SchedRng) -> TaskId {
    candidates.nth(rng.below(candidates.len()))
}

/// A scheduling strategy.
pub trait Strategy {
    /// Does [`Strategy::analyze`] do anything? (The loop skips it otherwise.)
    const ANALYZES: bool = false;
    /// Does the strategy read the lock and block facts of [`View::tracker`]? (The kernel
    /// keeps them up to date only then, or when a target needs them.)
    const TRACKS: bool = false;
    /// With no atomic block named by the breakpoints, does the strategy aim at every
    /// block (AtomFuzzer)?
    const AIMS_AT_EVERY_BLOCK: bool = false;
    /// Must every yield reach [`Strategy::spun`]? (The lean path tells it, as the general
    /// loop does.)
    const SEES_YIELDS: bool = false;
    /// Does the seed draw interrupt firings (`sched::irq`)? Not under a strategy that
    /// replays recorded firings (Schedule): only its requests, and firings when no task can
    /// run, fire then.
    const DRAWS_FIRINGS: bool = true;

    /// The strategy with the configuration block's `params` (their meaning is the
    /// strategy's), drawing any initial randomness from `rng`.
    fn new(params: [u32; 4], rng: &mut SchedRng) -> Self
    where
        Self: Sized;

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

    /// A handler (context `ctx`) is about to execute `op`: `Some(i)` fires the more urgent
    /// source `i` first (the handler cannot be postponed, only preempted). Default: none.
    fn handler_fire(&mut self, _ctx: TaskId, _op: &Op, _view: &View<'_>) -> Option<u8> {
        None
    }

    /// Handler context `ctx` executed `op` (the handlers' [`Strategy::analyze`], for a
    /// strategy that counts every context's operations: Schedule). Default: nothing.
    fn handler_executed(&mut self, _ctx: TaskId, _op: &Op) {}

    /// Under a strategy that does not draw firings ([`Strategy::DRAWS_FIRINGS`] false), a
    /// moment where a drawn firing could come: a decision of the tasks' context (`running`
    /// is `None`), or handler `running` settling its pends. `Some(i)` fires source `i` as
    /// soon as it can, competing by urgency with the firings due (a recorded firing,
    /// replayed). Default: none.
    fn replayed_fire(&mut self, _running: Option<TaskId>, _view: &View<'_>) -> Option<u8> {
        None
    }

    /// A dispatcher polls next one of the async tasks `ready` (a bit per source index):
    /// `Some(i)` polls `i` (a recorded pick, replayed); `None` leaves the pick to the seed.
    /// Default: none.
    fn poll_pick(&mut self, _ready: u32, _view: &View<'_>) -> Option<u8> {
        None
    }

    /// Task `t` may be spinning: it yielded (when [`Strategy::SEES_YIELDS`]) or a
    /// compare-and-swap of its failed. A strategy that would otherwise keep running a
    /// spinning task (PCT) lets the others go. Default: nothing.
    fn spun(&mut self, _t: TaskId) {}

    /// The pick at a point where the strategy needs no [`View`] (the kernel's lean path:
    /// a plain access or yield, nothing postponed or forced). Must equal what
    /// [`Strategy::pick`] would choose there; `None` (before any draw) sends the point to the
    /// general loop. Default: [`uniform`].
    #[inline(always)]
    fn lean_pick(&mut self, enabled: TaskSet, rng: &mut SchedRng) -> Option<TaskId> {
        Some(uniform(enabled, rng))
    }

    /// How many more steps (`steps`: executed so far) the kernel's lean path may take
    /// without showing them to the strategy: its plain accesses and yields are then executed
    /// without [`Strategy::check`] or [`Strategy::analyze`], which must make no difference
    /// until that many steps have passed. Default: no bound.
    #[inline(always)]
    fn lean_budget(&self, _steps: u32) -> u32 {
        u32::MAX
    }
}

/// Is `op` a lock acquire (where AtomFuzzer, DeadlockFuzzer and DrFinder act)?
pub(crate) fn is_acquire(op: &Op) -> bool {
    matches!(op, Op::Acquire { .. })
}

/// The registry: one line per strategy gives its configuration-block id, its variant and
/// its name (the CLI's `--strategy` value and the reports' `strategy` field).
macro_rules! registry {
    ($( $(#[doc = $doc:literal])* $id:literal $variant:ident $name:literal => $module:ident :: $ty:ident, )*) => {
        $(
            mod $module;
            pub use $module::$ty;
        )*

        /// The strategy a configuration block names (its byte is the id).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
        #[repr(u8)]
        pub enum StrategyId {
            $( $(#[doc = $doc])* $variant = $id, )*
        }

        impl StrategyId {
            /// Every strategy, in id order.
            pub const ALL: &'static [StrategyId] = &[$(StrategyId::$variant),*];

            /// Decodes the block's strategy byte.
            pub fn from_u8(v: u8) -> Option<Self> {
                match v {
                    $( $id => Some(StrategyId::$variant), )*
                    _ => None,
                }
            }

            /// The strategy's name (CLI and reports).
            pub fn name(self) -> &'static str {
                match self {
                    $( StrategyId::$variant => $name, )*
                }
            }

            /// One line of help (the registry line's doc).
            pub fn help(self) -> &'static str {
                match self {
                    $( StrategyId::$variant => concat!($($doc),*), )*
                }
            }

            /// The strategy called `name`.
            pub fn from_name(name: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|s| s.name() == name)
            }

            /// See [`Strategy::ANALYZES`].
            pub fn analyzes(self) -> bool {
                match self {
                    $( StrategyId::$variant => <$ty as Strategy>::ANALYZES, )*
                }
            }

            /// See [`Strategy::TRACKS`].
            pub fn tracks(self) -> bool {
                match self {
                    $( StrategyId::$variant => <$ty as Strategy>::TRACKS, )*
                }
            }

            /// See [`Strategy::SEES_YIELDS`].
            pub fn sees_yields(self) -> bool {
                match self {
                    $( StrategyId::$variant => <$ty as Strategy>::SEES_YIELDS, )*
                }
            }

            /// See [`Strategy::DRAWS_FIRINGS`].
            pub fn draws_firings(self) -> bool {
                match self {
                    $( StrategyId::$variant => <$ty as Strategy>::DRAWS_FIRINGS, )*
                }
            }

            /// See [`Strategy::AIMS_AT_EVERY_BLOCK`].
            pub fn aims_at_every_block(self) -> bool {
                match self {
                    $( StrategyId::$variant => <$ty as Strategy>::AIMS_AT_EVERY_BLOCK, )*
                }
            }
        }

        /// The strategy named by the configuration block (static dispatch, no heap).
        // One lives in the kernel's static state for the whole run and is never moved, so
        // the size of its largest variant (SURW's and POS's per-task tables, 832 bytes at
        // 128 tasks) is paid once either way; there is no heap to box it on.
        #[allow(missing_docs, clippy::large_enum_variant)]
        pub enum AnyStrategy {
            $( $variant($ty), )*
        }

        impl AnyStrategy {
            /// The strategy `id` with `params`.
            pub fn new(id: StrategyId, params: [u32; 4], rng: &mut SchedRng) -> Self {
                match id {
                    $( StrategyId::$variant => AnyStrategy::$variant(<$ty>::new(params, rng)), )*
                }
            }

            /// Becomes the strategy `id` with `params`, in place: each variant is written
            /// where it lives, not built whole and copied over (a warm restart's cost).
            pub fn restart(&mut self, id: StrategyId, params: [u32; 4], rng: &mut SchedRng) {
                match id {
                    $( StrategyId::$variant => *self = AnyStrategy::$variant(<$ty>::new(params, rng)), )*
                }
            }

            /// See [`Strategy::lean_pick`].
            #[inline(always)]
            pub fn lean_pick(&mut self, enabled: TaskSet, rng: &mut SchedRng) -> Option<TaskId> {
                match self {
                    $( AnyStrategy::$variant(s) => s.lean_pick(enabled, rng), )*
                }
            }

            /// See [`Strategy::handler_fire`].
            pub fn handler_fire(&mut self, ctx: TaskId, op: &Op, view: &View<'_>) -> Option<u8> {
                match self {
                    $( AnyStrategy::$variant(s) => s.handler_fire(ctx, op, view), )*
                }
            }

            /// See [`Strategy::handler_executed`].
            pub fn handler_executed(&mut self, ctx: TaskId, op: &Op) {
                match self {
                    $( AnyStrategy::$variant(s) => s.handler_executed(ctx, op), )*
                }
            }

            /// See [`Strategy::replayed_fire`].
            pub fn replayed_fire(&mut self, running: Option<TaskId>, view: &View<'_>) -> Option<u8> {
                match self {
                    $( AnyStrategy::$variant(s) => s.replayed_fire(running, view), )*
                }
            }

            /// See [`Strategy::poll_pick`].
            pub fn poll_pick(&mut self, ready: u32, view: &View<'_>) -> Option<u8> {
                match self {
                    $( AnyStrategy::$variant(s) => s.poll_pick(ready, view), )*
                }
            }

            /// See [`Strategy::spun`]. Inlined: PCT's lean yields pay for it.
            #[inline(always)]
            pub fn spun(&mut self, t: TaskId) {
                match self {
                    $( AnyStrategy::$variant(s) => s.spun(t), )*
                }
            }

            /// See [`Strategy::lean_budget`].
            pub fn lean_budget(&self, steps: u32) -> u32 {
                match self {
                    $( AnyStrategy::$variant(s) => s.lean_budget(steps), )*
                }
            }

            /// See [`Strategy::pick`].
            pub fn pick(&mut self, candidates: TaskSet, view: &View<'_>, rng: &mut SchedRng) -> TaskId {
                match self {
                    $( AnyStrategy::$variant(s) => s.pick(candidates, view, rng), )*
                }
            }

            /// See [`Strategy::checks`]. (Inlined: a dispatch on the strategy, at every
            /// step the loop picks.)
            #[inline(always)]
            pub fn checks(&self, op: &Op) -> bool {
                match self {
                    $( AnyStrategy::$variant(s) => s.checks(op), )*
                }
            }

            /// See [`Strategy::check`].
            pub fn check(&mut self, t: TaskId, op: &Op, view: &View<'_>, rng: &mut SchedRng) -> Check {
                match self {
                    $( AnyStrategy::$variant(s) => s.check(t, op, view, rng), )*
                }
            }

            /// See [`Strategy::analyze`].
            pub fn analyze(&mut self, t: TaskId, op: &Op, view: &View<'_>, rng: &mut SchedRng) -> TaskSet {
                match self {
                    $( AnyStrategy::$variant(s) => s.analyze(t, op, view, rng), )*
                }
            }
        }
    };
}

registry! {
    /// Uniform over enabled tasks (atomfuzzer-fse08 Algorithm 1, SimpleFuzzer).
    0 Random "random" => random::Random,
    /// RaceFuzzer: breakpoints are the racing pair's sites.
    1 Race "race" => racefuzzer::RaceFuzzer,
    /// AtomFuzzer: `params[0]` is the pause probability q in units of 1/65536 (0: 0.5);
    /// breakpoints (optional) name the block and re-acquire sites.
    2 Atom "atom" => atomfuzzer::AtomFuzzer,
    /// DeadlockFuzzer: breakpoints are the cycle's acquire and context sites.
    3 Deadlock "deadlock" => deadlockfuzzer::DeadlockFuzzer,
    /// DrFinder: breakpoints are may-trigger relations (frame site, lock class).
    4 DrFinder "drfinder" => drfinder::DrFinder,
    /// PCT: `params[0]` is the depth d (0: 3), `params[1]` the step bound k (0: 1000).
    5 Pct "pct" => pct::Pct,
    /// AVIO/CTrigger: breakpoints are a triple's first, second and remote access sites
    /// (and the source holding the remote access, if a handler does).
    6 Avio "avio" => avio::Avio,
    /// POS (Yuan et al. CAV'18, Fray's default): random priorities; the runner's and those of
    /// the tasks whose next operation conflicts with the one executed are drawn anew.
    7 Pos "pos" => pos::Pos,
    /// SURW (Zhao et al. ASPLOS'25): selectively uniform random walk. Breakpoints name the
    /// access sites of one shared location and each task's weight, its accesses left, both
    /// from a profiling run. The accesses interleave by a walk weighted by what each task has
    /// left, and random priorities order every other operation.
    8 Surw "surw" => surw::Surw,
    /// Schedule: follows a recorded schedule (shrinking and replaying findings). Breakpoints
    /// are entries "when task A has run n operations, B runs next" (or source i fires); between
    /// them the last task runs while enabled, else the lowest enabled one.
    9 Schedule "schedule" => schedule::Schedule,
}
