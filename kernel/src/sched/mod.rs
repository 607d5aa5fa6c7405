//! The scheduling core: the papers' transition system, free of any CPU detail.
//!
//! At every scheduling point the running task stops *before* its operation; the operation is
//! recorded as the task's pending operation (NextStmt(s, t) of racefuzzer-pldi08 §2.1) and
//! [`Core::decide`] picks, through the strategy, which enabled task executes its pending
//! operation next (Execute(s, t)). A task is *enabled* unless its pending operation is an
//! acquire of a held lock, a join of a live task, a wait on an empty signal, or entry into a
//! critical section another task holds. No enabled task while some are alive is a deadlock.
//!
//! Ports (Cortex-M, host) only switch to the task this core names: strategy code never
//! touches the CPU, so one seed gives the same decisions on every port.
//!
//! The core is split by concern: [`lean`] is the cheap path most points take, [`calfuzzer`]
//! the general loop (pick, check, execute or postpone, analyze), [`blocking`] enabledness and
//! the deadlock report. This file holds the state and its bookkeeping.

mod blocking;
mod calfuzzer;
pub mod irq;
mod lean;
mod spin;
#[cfg(test)]
mod tests;
pub mod time;
pub mod wake;

use crate::config::Config;
use crate::event::{Event, TraceLevel, Verdict};
use crate::op::{Op, Slot};
use crate::rng::SchedRng;
use crate::strategy::AnyStrategy;
use crate::targets::{Targets, Tracker};
use crate::task::{MAX_TASKS, TaskId, TaskSet};
use rand_core::SeedableRng;

/// Most locks held at once, and most signals with pending counts.
pub const MAX_LOCKS: usize = 16;

/// What a port lends the API of virtual time and wake-ups ([`time`], [`wake`]): the core's
/// calls that are no scheduling point, behind one object whatever the port's sink.
pub trait Clockwork {
    /// [`Core::now`].
    fn now(&self) -> u64;
    /// [`Core::set_timer`].
    fn set_timer(&mut self, key: u32, at: u64, action: time::TimerAction);
    /// [`Core::cancel_timer`].
    fn cancel_timer(&mut self, key: u32);
    /// [`Core::sleep`].
    fn sleep(&mut self, t: TaskId, g: u32, s: u32, pcs: wake::WaitAddrs);
    /// [`Core::unsleep`].
    fn unsleep(&mut self, g: u32);
    /// [`Core::name_task`].
    fn name_task(&mut self, t: TaskId, a: u32, i: u8);
    /// [`Core::note_wake`].
    fn note_wake(&mut self, t: TaskId, g: u32, pcs: wake::WaitAddrs);
    /// [`Core::poll_pending`].
    fn poll_pending(&mut self, t: TaskId);
}

impl<K: Sink> Clockwork for Core<K> {
    fn now(&self) -> u64 {
        Core::now(self)
    }
    fn set_timer(&mut self, key: u32, at: u64, action: time::TimerAction) {
        Core::set_timer(self, key, at, action)
    }
    fn cancel_timer(&mut self, key: u32) {
        Core::cancel_timer(self, key)
    }
    fn sleep(&mut self, t: TaskId, g: u32, s: u32, pcs: wake::WaitAddrs) {
        Core::sleep(self, t, g, s, pcs)
    }
    fn unsleep(&mut self, g: u32) {
        Core::unsleep(self, g)
    }
    fn name_task(&mut self, t: TaskId, a: u32, i: u8) {
        Core::name_task(self, t, a, i)
    }
    fn note_wake(&mut self, t: TaskId, g: u32, pcs: wake::WaitAddrs) {
        Core::note_wake(self, t, g, pcs)
    }
    fn poll_pending(&mut self, t: TaskId) {
        Core::poll_pending(self, t)
    }
}

/// Where events go: defmt on the device, stdout on the host port, a vector in tests.
pub trait Sink {
    /// Emits one event.
    fn emit(&mut self, event: &Event);
}

/// What the port must do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Switch to (or keep running) this task; its pending operation has been executed.
    Run(TaskId),
    /// Fire interrupt source `i` now, preempting the caller (its operation stays pending);
    /// when the handler has returned, ask again with [`Core::resume`].
    Fire(u8),
    /// The run is over with this verdict (its `RunEnd` event has been emitted).
    End(Verdict),
}

/// Mixed into the seed for the inputs' stream (any constant other than 0 keeps it apart from
/// the scheduler's).
const INPUT_STREAM: u64 = 0x1A9D_7E5C_0B3F_4C21;

/// The scheduler state of one run. `repr(C)`, the lean path's fields first: whatever the
/// size of the task table and of the strategies' per-task tables behind them, each is
/// in reach of one load's 12-bit offset from the kernel's address (past 4 KiB, every
/// access took one more instruction to form the offset).
#[repr(C)]
pub struct Core<K: Sink> {
    /// Scheduling steps the lean path may still take on its own (0: every point goes
    /// through the general loop). Recomputed after every step of the general loop
    /// ([`Core::refresh_lean`]): it is 0 while anything is forced or postponed, at full
    /// trace, or when the strategy wants to see every step; else it runs to the step limit
    /// or the strategy's next point of interest.
    lean_budget: u32,
    /// Tasks stopped before a pending operation (kept with the slots, so that the enabled
    /// set is found without scanning them).
    stopped: TaskSet,
    /// Tasks the lean path may pick when stopped: not those whose blocking operation is
    /// disabled, nor, while a task holds the critical section, any other task. Only the
    /// general loop changes what this depends on.
    lean_allowed: TaskSet,
    /// Whether the strategy learns from every executed yield ([`crate::strategy::Strategy::SEES_YIELDS`]).
    sees_yields: bool,
    steps: u32,
    targets: Targets,
    rng: SchedRng,
    strategy: AnyStrategy,
    step_limit: u32,
    trace: TraceLevel,
    /// Stopped tasks whose operation can be disabled (acquire, join, wait, critical-section
    /// entry): only these need an enabledness test.
    blocking: TaskSet,
    /// CalFuzzer's `postponed` set.
    postponed: TaskSet,
    /// Tasks that execute before any other choice, in id order (released or resolved).
    forced: TaskSet,
    cs_holder: Option<TaskId>,
    /// Whether `targets` can report anything (the check is skipped otherwise).
    checking: bool,
    /// Whether the strategy or the check reads the tracker (kept up to date only then).
    tracking: bool,
    /// Whether the strategy learns from executed operations (PCT, DrFinder).
    analyzing: bool,
    livelock_bound: u32,
    /// The firmware's inputs ([`Core::input`]): a stream of its own, so that drawing an
    /// input never changes a scheduling decision.
    inputs: SchedRng,
    /// The priority mask (BASEPRI; 0: none).
    basepri: u8,
    /// Steps over which firings are drawn.
    irq_horizon: u32,
    /// Whether the seed draws firings (not under a strategy that replays them).
    draws_firings: bool,
    /// A source a strategy wants fired at the next decision.
    fire_next: Option<u8>,
    /// The async task [`Core::next_poll`] last picked in its dispatcher's own order (the
    /// lowest ready index), whose poll is then a firing any strategy makes.
    poll_in_order: Option<u8>,
    /// Steps of the innermost running handler (its spin bound is the livelock bound).
    handler_steps: u32,
    /// Handler entries so far.
    irq_entered: u32,
    /// The handler context whose requests code in `irq::QUIET_CONTEXT` makes.
    quiet_as: TaskId,
    /// Held locks and their holders.
    locks: crate::fixed::LinearMap<u32, TaskId, MAX_LOCKS>,
    /// Pending signal counts (entries with count 0 are removed).
    signals: crate::fixed::LinearMap<u32, u32, MAX_LOCKS>,
    slots: [Slot; MAX_TASKS],
    /// The step at which each postponed task was postponed (the livelock bound's clock).
    postponed_at: [u32; MAX_TASKS],
    /// Tasks that reached a spin mark with nothing changed since (`sched::spin`).
    quiet: TaskSet,
    /// Tasks that spin: two spin marks with nothing changed in between (`sched::spin`).
    spinning: TaskSet,
    /// Tasks whose last poll returned `Pending` with no data changed since (`sched::spin`).
    polled_quiet: TaskSet,
    /// Tasks that spin polling: two such polls with no data changed in between
    /// (`sched::spin`).
    poll_spinning: TaskSet,
    /// The step at which the first of the current polling marks was made (`sched::spin`).
    polls_quiet_since: u32,
    /// The running task runs alone and nothing else can act (`sched::spin`): the lean path
    /// is off and its iterations are watched.
    solo: bool,
    /// Something is held back (a postponed task, a firing in reserve) or a task runs alone:
    /// spin marks are kept (`sched::spin`).
    keeps_spins: bool,
    /// The lone task's iterations (`sched::spin`).
    watch: spin::SpinWatch,
    /// Running handlers, innermost last.
    irq_running: crate::fixed::Vec<u8, { irq::MAX_IRQS }>,
    /// The declared interrupt sources and their state ([`irq`]).
    irqs: crate::fixed::Vec<irq::IrqState, { irq::MAX_IRQS }>,
    /// The virtual clock, in ticks ([`time`]).
    now: u64,
    /// Timers set, by key ([`time`]).
    timers: crate::fixed::LinearMap<u32, time::Timer, { time::MAX_TIMERS }>,
    /// Contexts waiting for a wake-up, by wake-up signal ([`wake`]).
    sleepers: crate::fixed::LinearMap<u32, wake::Sleeper, { wake::MAX_SLEEPERS }>,
    tracker: Tracker,
    sink: K,
}

impl<K: Sink> Core<K> {
    /// A run with `config`: task 0 (main) is alive and about to start.
    pub fn new(config: &Config, run: u32, sink: K) -> Self {
        let mut core = core::mem::MaybeUninit::uninit();
        // SAFETY: `init_at_rest` writes every field.
        let mut core = unsafe {
            Core::init_at_rest(core.as_mut_ptr(), sink);
            core.assume_init()
        };
        core.restart(config, run);
        core
    }

    /// Writes a core with no run (what [`Core::restart`] overwrites) at `this`, field by
    /// field: no whole `Core` is built on the stack and moved into place (on the Cortex-M
    /// port that took the boot stack some 6 KiB deep at 8 tasks, more than a 16 KiB
    /// micro:bit can spare).
    ///
    /// # Safety
    /// `this` is valid for writes of a `Core` (its old contents are neither read nor
    /// dropped).
    pub unsafe fn init_at_rest(this: *mut Self, sink: K) {
        let mut rng = SchedRng::seed_from_u64(0);
        // SAFETY: per the contract; each field is written once, through its own place. (A
        // field added to `Core` stops the build in `restart`'s pattern: add its line here.)
        unsafe {
            (&raw mut (*this).slots).write([Slot::Free; MAX_TASKS]);
            (&raw mut (*this).locks).write(crate::fixed::LinearMap::new());
            (&raw mut (*this).signals).write(crate::fixed::LinearMap::new());
            (&raw mut (*this).cs_holder).write(None);
            (&raw mut (*this).steps).write(0);
            (&raw mut (*this).step_limit).write(0);
            (&raw mut (*this).trace).write(TraceLevel::Results);
            (&raw mut (*this).inputs).write(rng.clone());
            (&raw mut (*this).strategy).write(AnyStrategy::new(
                crate::strategy::StrategyId::Random,
                [0; 4],
                &mut rng,
            ));
            (&raw mut (*this).rng).write(rng);
            (&raw mut (*this).stopped).write(TaskSet::EMPTY);
            (&raw mut (*this).blocking).write(TaskSet::EMPTY);
            (&raw mut (*this).postponed).write(TaskSet::EMPTY);
            (&raw mut (*this).postponed_at).write([0; MAX_TASKS]);
            (&raw mut (*this).livelock_bound).write(0);
            (&raw mut (*this).forced).write(TaskSet::EMPTY);
            (&raw mut (*this).targets).write(Targets::new(&[]));
            (&raw mut (*this).checking).write(false);
            (&raw mut (*this).tracking).write(false);
            (&raw mut (*this).analyzing).write(false);
            (&raw mut (*this).sees_yields).write(false);
            (&raw mut (*this).lean_budget).write(0);
            (&raw mut (*this).lean_allowed).write(TaskSet::EMPTY);
            (&raw mut (*this).irqs).write(crate::fixed::Vec::new());
            (&raw mut (*this).irq_running).write(crate::fixed::Vec::new());
            (&raw mut (*this).basepri).write(0);
            (&raw mut (*this).irq_horizon).write(0);
            (&raw mut (*this).draws_firings).write(false);
            (&raw mut (*this).fire_next).write(None);
            (&raw mut (*this).poll_in_order).write(None);
            (&raw mut (*this).handler_steps).write(0);
            (&raw mut (*this).irq_entered).write(0);
            (&raw mut (*this).quiet_as).write(0);
            (&raw mut (*this).quiet).write(TaskSet::EMPTY);
            (&raw mut (*this).spinning).write(TaskSet::EMPTY);
            (&raw mut (*this).polled_quiet).write(TaskSet::EMPTY);
            (&raw mut (*this).poll_spinning).write(TaskSet::EMPTY);
            (&raw mut (*this).polls_quiet_since).write(0);
            (&raw mut (*this).solo).write(false);
            (&raw mut (*this).keeps_spins).write(false);
            (&raw mut (*this).watch).write(spin::SpinWatch::default());
            (&raw mut (*this).now).write(0);
            (&raw mut (*this).timers).write(crate::fixed::LinearMap::new());
            (&raw mut (*this).sleepers).write(crate::fixed::LinearMap::new());
            (&raw mut (*this).tracker).write(Tracker::default());
            (&raw mut (*this).sink).write(sink);
        }
    }

    /// Starts run `run` of `config` in place, as [`Core::new`] would: every field is set
    /// again. The Cortex-M port's warm restart between two runs of a boot starts the next
    /// run on the core the last one left, instead of building a new one and moving it into
    /// place (copies that cost some 25,000 instructions at 32 tasks).
    pub fn restart(&mut self, config: &Config, run: u32) {
        // Only the last run's tasks (a prefix of the table) have entries not at rest.
        let used = self.tasks_used();
        // Named field by field, with no `..`: a field added to `Core` must be set here (and
        // in `init_at_rest`).
        let Core {
            slots,
            locks,
            signals,
            cs_holder,
            steps,
            step_limit,
            trace,
            rng,
            inputs,
            strategy,
            stopped,
            blocking,
            postponed,
            postponed_at,
            livelock_bound,
            forced,
            targets,
            checking,
            tracking,
            analyzing,
            sees_yields,
            lean_budget,
            lean_allowed,
            irqs,
            irq_running,
            basepri,
            irq_horizon,
            draws_firings,
            fire_next,
            poll_in_order,
            handler_steps,
            irq_entered,
            quiet_as,
            now,
            timers,
            sleepers,
            quiet,
            spinning,
            polled_quiet,
            poll_spinning,
            polls_quiet_since,
            solo,
            keeps_spins,
            watch,
            tracker,
            sink,
        } = self;
        sink.emit(&Event::RunStart {
            seed: config.seed,
            strategy: config.strategy as u8,
            trace: config.trace as u8,
            run,
        });
        slots[..used].fill(Slot::Free);
        slots[0] = Slot::Alive(Some(Op::Start));
        locks.clear();
        signals.clear();
        *cs_holder = None;
        *steps = 0;
        *step_limit = config.step_limit;
        *trace = config.trace;
        *rng = SchedRng::seed_from_u64(config.seed);
        *inputs = SchedRng::seed_from_u64(config.seed ^ INPUT_STREAM);
        strategy.restart(config.strategy, config.params, rng);
        *stopped = TaskSet(1);
        *blocking = TaskSet::EMPTY;
        *postponed = TaskSet::EMPTY;
        postponed_at[..used].fill(0);
        *livelock_bound = if config.livelock_bound == 0 {
            crate::config::DEFAULT_LIVELOCK_BOUND
        } else {
            config.livelock_bound
        };
        *forced = TaskSet::EMPTY;
        *targets = Targets::new(&config.breakpoints);
        // AtomFuzzer with no block targeted aims at every block (atomfuzzer-fse08).
        targets.all_blocks = config.strategy.aims_at_every_block() && !targets.atomicity;
        *checking = targets.race || targets.atomicity || targets.all_blocks || targets.triple;
        *tracking =
            targets.atomicity || targets.all_blocks || targets.triple || config.strategy.tracks();
        *analyzing = config.strategy.analyzes();
        *sees_yields = config.strategy.sees_yields();
        *lean_budget = 0;
        *lean_allowed = TaskSet::EMPTY;
        tracker.clear(used, irqs.len());
        irqs.clear();
        irq_running.clear();
        *basepri = 0;
        *irq_horizon = if config.irq_horizon == 0 {
            crate::config::DEFAULT_IRQ_HORIZON
        } else {
            config.irq_horizon
        };
        *draws_firings = config.strategy.draws_firings();
        *fire_next = None;
        *poll_in_order = None;
        *handler_steps = 0;
        *irq_entered = 0;
        *quiet_as = 0;
        *now = 0;
        timers.clear();
        sleepers.clear();
        *quiet = TaskSet::EMPTY;
        *spinning = TaskSet::EMPTY;
        *polled_quiet = TaskSet::EMPTY;
        *poll_spinning = TaskSet::EMPTY;
        *polls_quiet_since = 0;
        *solo = false;
        *keeps_spins = false;
        watch.reset();
    }

    /// The tasks this run has used (reserved, alive or ended): ids `0..n`, as ids are
    /// handed out lowest first and never freed within a run.
    fn tasks_used(&self) -> usize {
        self.slots
            .iter()
            .position(|s| matches!(s, Slot::Free))
            .unwrap_or(MAX_TASKS)
    }

    /// Scheduling steps executed so far.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// An input the run's seed chooses, in `0..bound` (`0` when `bound` is 0): an external
    /// value (a sensor reading, a received length) that runs explore as they explore
    /// schedules. Same seed, same inputs, on every port.
    pub fn input(&mut self, bound: u32) -> u32 {
        if bound == 0 {
            0
        } else {
            self.inputs.below(bound)
        }
    }

    /// The event sink.
    pub fn sink(&mut self) -> &mut K {
        &mut self.sink
    }

    /// Are values traced (the full trace level)?
    #[inline(always)]
    pub fn values_traced(&self) -> bool {
        self.trace == TraceLevel::Full
    }

    /// Task or handler `me`'s last access read, wrote or left `v` of kind `k`
    /// ([`Event::Value`]).
    pub fn value(&mut self, me: TaskId, v: u32, k: u8) {
        self.record(Event::Value { t: me, v, k });
    }

    /// Names context `t` by the `n` bytes of text at `a` ([`Event::ContextName`]).
    pub fn record_name(&mut self, t: TaskId, a: u32, n: u32) {
        self.record(Event::ContextName { t, a, n });
    }

    /// Emits `event` if the trace level asks for it.
    pub(super) fn record(&mut self, event: Event) {
        if event.level() <= self.trace {
            self.sink.emit(&event);
        }
    }

    /// Allocates a task id for a spawn (before its `Spawn` point); `None` if the table is full.
    pub fn reserve(&mut self) -> Option<TaskId> {
        let id = self.slots.iter().position(|s| matches!(s, Slot::Free))?;
        self.slots[id] = Slot::Reserved;
        Some(id as TaskId)
    }

    /// Is task `t` reserved or alive (its stack in use)?
    pub fn is_live(&self, t: TaskId) -> bool {
        matches!(self.slots[t as usize], Slot::Reserved | Slot::Alive(_))
    }

    /// Does `t` hold the critical section?
    pub fn holds_cs(&self, t: TaskId) -> bool {
        self.cs_holder == Some(t)
    }

    /// Task `t` is stopped before `op`.
    #[inline(always)]
    pub(super) fn stop(&mut self, t: TaskId, op: Op) {
        self.slots[t as usize] = Slot::Alive(Some(op));
        self.stopped.insert(t);
        if matches!(
            op,
            Op::Acquire { .. } | Op::Join { .. } | Op::Wait { .. } | Op::CsEnter | Op::Idle { .. }
        ) {
            self.blocking.insert(t);
        }
    }

    /// Task `me` ended; returns what runs next.
    pub fn exit(&mut self, me: TaskId) -> Next {
        self.slots[me as usize] = Slot::Done;
        self.data_changed();
        if self.cs_holder == Some(me) {
            self.cs_holder = None;
        }
        self.record(Event::TaskExit { t: me });
        self.decide()
    }

    /// Task `me` has just performed the compare-and-swap at site `s` on `a` (its scheduling
    /// point came first): the event follows the outcome (ordering `ord` on success,
    /// `failure_ord` on failure), and a failure tells the strategy `me` may be spinning.
    pub fn cas_outcome(&mut self, me: TaskId, s: u32, a: u32, ord: u8, failure_ord: u8, ok: bool) {
        if TraceLevel::Sync <= self.trace {
            self.sink.emit(&if ok {
                Event::AtomicRmw {
                    t: me,
                    s,
                    a,
                    o: ord,
                }
            } else {
                Event::CasFailed {
                    t: me,
                    s,
                    a,
                    o: failure_ord,
                }
            });
        }
        if !ok && (me as usize) < MAX_TASKS {
            self.strategy.spun(me);
        }
        self.cas_spin(me, s, a, ok);
    }

    /// Ends the run because task `me` spawned past the task limit: the `TaskLimit` event,
    /// then the run's end. The port stops the run with the verdict's exit code.
    pub fn task_limit(&mut self, me: TaskId) -> Verdict {
        self.sink.emit(&Event::TaskLimit {
            t: me,
            max: MAX_TASKS as u8,
        });
        self.abort(Verdict::TaskLimit);
        Verdict::TaskLimit
    }

    /// Ends the run now with `verdict` (panic, stack overflow, fault: found by the port).
    pub fn abort(&mut self, verdict: Verdict) {
        self.sink.emit(&Event::RunEnd {
            verdict: verdict as u8,
            steps: self.steps,
        });
    }

    /// The pending operation of a task the loop chose (only stopped tasks are enabled, so
    /// one without is a kernel bug, not a user error).
    #[inline(always)]
    pub(super) fn pending(&self, t: TaskId) -> Op {
        match self.slots[t as usize].pending() {
            Some(op) => *op,
            None => panic!("scheduled a task with no pending operation"),
        }
    }
}
