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

use crate::config::Config;
use crate::event::{Event, NO_TASK, TraceLevel, Verdict, WaitKind};
use crate::rng::SchedRng;
use crate::strategy::{AnyStrategy, Choice, Strategy};
use rand_core::SeedableRng;

/// A task's index in the task table.
pub type TaskId = u8;
/// Most tasks alive in one run (task 0 is the main task).
pub const MAX_TASKS: usize = 8;
/// Most locks held at once, and most signals with pending counts.
pub const MAX_LOCKS: usize = 16;

/// A pending operation: what a stopped task will do when it is next chosen. Field names
/// follow [`Event`]: `s` site, `a` location, `l` lock, `c` class, `g` signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Op {
    /// A new task's first step: it begins running.
    Start,
    /// Make the reserved task `child` runnable.
    Spawn { s: u32, child: TaskId },
    /// Wait for `child` to end.
    Join { s: u32, child: TaskId },
    /// Read location `a`.
    Read { s: u32, a: u32 },
    /// Write location `a`.
    Write { s: u32, a: u32 },
    /// Read-modify-write location `a`.
    Update { s: u32, a: u32 },
    /// Acquire lock `l` of class `c` (disabled while another task holds it).
    Acquire { s: u32, l: u32, c: u32 },
    /// Release lock `l`.
    Release { s: u32, l: u32 },
    /// Enter an atomic block.
    AtomicEnter { s: u32 },
    /// Leave the atomic block entered at `s`.
    AtomicExit { s: u32 },
    /// Send signal `g`.
    Signal { s: u32, g: u32 },
    /// Receive signal `g` (disabled while none is pending).
    Wait { s: u32, g: u32 },
    /// Enter the critical section.
    CsEnter,
    /// Leave the critical section.
    CsExit,
    /// Let the scheduler choose again.
    Yield { s: u32 },
    /// Enter an instrumented frame.
    FrameEnter { s: u32 },
    /// Leave an instrumented frame.
    FrameExit { s: u32 },
}

impl Op {
    /// The site of the operation, if it has one.
    pub fn site(&self) -> Option<u32> {
        match *self {
            Op::Start | Op::CsEnter | Op::CsExit => None,
            Op::Spawn { s, .. }
            | Op::Join { s, .. }
            | Op::Read { s, .. }
            | Op::Write { s, .. }
            | Op::Update { s, .. }
            | Op::Acquire { s, .. }
            | Op::Release { s, .. }
            | Op::AtomicEnter { s }
            | Op::AtomicExit { s }
            | Op::Signal { s, .. }
            | Op::Wait { s, .. }
            | Op::Yield { s }
            | Op::FrameEnter { s }
            | Op::FrameExit { s } => Some(s),
        }
    }

    /// The event recording the execution of this operation by task `t`.
    pub fn event(&self, t: TaskId) -> Event {
        match *self {
            Op::Start => Event::TaskStart { t },
            Op::Spawn { s, child } => Event::Spawn { t, child, s },
            Op::Join { s, child } => Event::Join { t, child, s },
            Op::Read { s, a } => Event::Read { t, s, a },
            Op::Write { s, a } => Event::Write { t, s, a },
            Op::Update { s, a } => Event::Update { t, s, a },
            Op::Acquire { s, l, c } => Event::Acquire { t, s, l, c },
            Op::Release { s, l } => Event::Release { t, s, l },
            Op::AtomicEnter { s } => Event::AtomicEnter { t, s },
            Op::AtomicExit { s } => Event::AtomicExit { t, s },
            Op::Signal { s, g } => Event::Signal { t, s, g },
            Op::Wait { s, g } => Event::Wait { t, s, g },
            Op::CsEnter => Event::CsEnter { t },
            Op::CsExit => Event::CsExit { t },
            Op::Yield { s } => Event::Yield { t, s },
            Op::FrameEnter { s } => Event::FrameEnter { t, s },
            Op::FrameExit { s } => Event::FrameExit { t, s },
        }
    }
}

/// Where events go: defmt on the device, stdout on the host port, a vector in tests.
pub trait Sink {
    /// Emits one event.
    fn emit(&mut self, event: &Event);
}

/// A task-table slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Unused.
    Free,
    /// Allocated by a spawn that has not executed yet.
    Reserved,
    /// Alive; `None` while it runs, `Some(op)` while stopped before `op`.
    Alive(Option<Op>),
    /// Ended.
    Done,
}

impl Slot {
    /// The pending operation of a stopped task.
    pub fn pending(&self) -> Option<&Op> {
        match self {
            Slot::Alive(Some(op)) => Some(op),
            _ => None,
        }
    }
}

/// What the port must do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Switch to (or keep running) this task; its pending operation has been executed.
    Run(TaskId),
    /// The run is over with this verdict (its `RunEnd` event has been emitted).
    End(Verdict),
}

/// The scheduler state of one run.
pub struct Core<K: Sink> {
    slots: [Slot; MAX_TASKS],
    /// Slots ever allocated: slots are never freed, so decisions scan only `slots[..used]`.
    used: usize,
    /// Held locks and their holders.
    locks: heapless::LinearMap<u32, TaskId, MAX_LOCKS>,
    /// Pending signal counts (entries with count 0 are removed).
    signals: heapless::LinearMap<u32, u32, MAX_LOCKS>,
    cs_holder: Option<TaskId>,
    steps: u32,
    step_limit: u32,
    trace: TraceLevel,
    rng: SchedRng,
    strategy: AnyStrategy,
    sink: K,
}

impl<K: Sink> Core<K> {
    /// A run with `config`: task 0 (main) is alive and about to start.
    pub fn new(config: &Config, run: u32, mut sink: K) -> Self {
        sink.emit(&Event::RunStart {
            seed: config.seed,
            strategy: config.strategy as u8,
            trace: config.trace as u8,
            run,
        });
        let mut slots = [Slot::Free; MAX_TASKS];
        slots[0] = Slot::Alive(Some(Op::Start));
        Core {
            slots,
            used: 1,
            locks: heapless::LinearMap::new(),
            signals: heapless::LinearMap::new(),
            cs_holder: None,
            steps: 0,
            step_limit: config.step_limit,
            trace: config.trace,
            rng: SchedRng::seed_from_u64(config.seed),
            strategy: AnyStrategy::from_config(config),
            sink,
        }
    }

    /// Scheduling steps executed so far.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// The event sink.
    pub fn sink(&mut self) -> &mut K {
        &mut self.sink
    }

    /// Emits `event` if the trace level asks for it.
    fn record(&mut self, event: Event) {
        if event.level() <= self.trace {
            self.sink.emit(&event);
        }
    }

    /// Allocates a task id for a spawn (before its `Spawn` point); `None` if the table is full.
    pub fn reserve(&mut self) -> Option<TaskId> {
        let id = self.slots.iter().position(|s| matches!(s, Slot::Free))?;
        self.slots[id] = Slot::Reserved;
        self.used = self.used.max(id + 1);
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

    /// Task `me` stops before `op`; returns what runs next.
    pub fn point(&mut self, me: TaskId, op: Op) -> Next {
        self.slots[me as usize] = Slot::Alive(Some(op));
        self.decide()
    }

    /// Task `me` ended; returns what runs next.
    pub fn exit(&mut self, me: TaskId) -> Next {
        self.slots[me as usize] = Slot::Done;
        if self.cs_holder == Some(me) {
            self.cs_holder = None;
        }
        self.record(Event::TaskExit { t: me });
        self.decide()
    }

    /// Ends the run now with `verdict` (panic, stack overflow, fault: found by the port).
    pub fn abort(&mut self, verdict: Verdict) {
        self.sink.emit(&Event::RunEnd {
            verdict: verdict as u8,
            steps: self.steps,
        });
    }

    fn enabled(&self, op: &Op) -> bool {
        match *op {
            Op::Acquire { l, .. } => !self.locks.contains_key(&l),
            Op::Join { child, .. } => matches!(self.slots[child as usize], Slot::Done),
            Op::Wait { g, .. } => self.signals.get(&g).is_some_and(|n| *n > 0),
            // Nested sections never reach the core (the port keeps them local).
            Op::CsEnter => self.cs_holder.is_none(),
            _ => true,
        }
    }

    /// Picks the next task and executes its pending operation (racefuzzer-pldi08
    /// Algorithm 1, lines 4–5 and 24, with the strategy choosing).
    pub fn decide(&mut self) -> Next {
        let mut enabled = heapless::Vec::<TaskId, MAX_TASKS>::new();
        let mut alive = false;
        for (i, slot) in self.slots[..self.used].iter().enumerate() {
            if let Slot::Alive(Some(op)) = slot {
                alive = true;
                if self.enabled(op) {
                    let _ = enabled.push(i as TaskId);
                }
            }
        }
        // A critical section masks interrupts on a single core: nothing else runs until the
        // holder leaves it (if the holder blocks inside, that is a deadlock).
        if let Some(h) = self.cs_holder {
            enabled.retain(|t| *t == h);
        }
        if enabled.is_empty() {
            let verdict = if alive {
                self.report_blocked();
                Verdict::Deadlock
            } else {
                Verdict::Pass
            };
            self.abort(verdict);
            return Next::End(verdict);
        }
        if self.steps >= self.step_limit {
            self.abort(Verdict::StepLimit);
            return Next::End(Verdict::StepLimit);
        }
        let choice = Choice {
            enabled: &enabled,
            slots: &self.slots,
            step: self.steps,
        };
        let t = self.strategy.pick(&choice, &mut self.rng);
        let Some(&op) = self.slots[t as usize].pending() else {
            // A strategy returned a task that is not stopped: a kernel bug, not a user error.
            panic!("strategy picked a task with no pending operation");
        };
        self.execute(t, op);
        Next::Run(t)
    }

    /// Applies the effect of `op` by `t` on the scheduler state and records it.
    fn execute(&mut self, t: TaskId, op: Op) {
        match op {
            Op::Spawn { child, .. } => self.slots[child as usize] = Slot::Alive(Some(Op::Start)),
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
            }
            Op::Wait { g, .. } => match self.signals.get(&g).copied() {
                Some(n) if n > 1 => {
                    let _ = self.signals.insert(g, n - 1);
                }
                _ => {
                    self.signals.remove(&g);
                }
            },
            Op::CsEnter => self.cs_holder = Some(t),
            Op::CsExit => self.cs_holder = None,
            _ => {}
        }
        self.slots[t as usize] = Slot::Alive(None);
        self.steps += 1;
        self.record(op.event(t));
    }

    /// The deadlock report: every stopped task, what it waits for, and who holds that.
    fn report_blocked(&mut self) {
        for i in 0..MAX_TASKS {
            let Some(op) = self.slots[i].pending().copied() else {
                continue;
            };
            let t = i as TaskId;
            let (kind, on, holder) = match op {
                Op::Acquire { l, .. } => (
                    WaitKind::Lock,
                    l,
                    self.locks.get(&l).copied().unwrap_or(NO_TASK),
                ),
                Op::Join { child, .. } => (WaitKind::Join, child as u32, child),
                Op::Wait { g, .. } => (WaitKind::Signal, g, NO_TASK),
                Op::CsEnter => (
                    WaitKind::CriticalSection,
                    0,
                    self.cs_holder.unwrap_or(NO_TASK),
                ),
                _ => continue,
            };
            self.sink.emit(&Event::Blocked {
                t,
                s: op.site().unwrap_or(0),
                kind: kind as u8,
                on,
                holder,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    #[derive(Default)]
    struct Rec(Vec<Event>);
    impl Sink for Rec {
        fn emit(&mut self, e: &Event) {
            self.0.push(*e);
        }
    }

    fn core(seed: u64) -> Core<Rec> {
        let config = Config {
            seed,
            ..Config::default()
        };
        Core::new(&config, 0, Rec::default())
    }

    #[test]
    fn main_task_starts_then_passes() {
        let mut c = core(1);
        assert_eq!(c.decide(), Next::Run(0));
        assert_eq!(c.exit(0), Next::End(Verdict::Pass));
        let kinds: Vec<_> = c.sink.0.iter().map(|e| e.kind()).collect();
        use crate::event::EventKind::*;
        assert_eq!(kinds, [RunStart, TaskStart, TaskExit, RunEnd]);
    }

    #[test]
    fn abba_blocks_and_reports_holders() {
        let mut c = core(3);
        assert_eq!(c.decide(), Next::Run(0));
        let a = c.reserve().unwrap();
        assert_eq!(c.point(0, Op::Spawn { s: 1, child: a }), Next::Run(0));
        // Main takes lock 10, then the child must run.
        assert_eq!(c.point(0, Op::Acquire { s: 2, l: 10, c: 10 }), Next::Run(0));
        // Main waits for 20; the child is only Start-enabled.
        let mut next = c.point(0, Op::Acquire { s: 3, l: 20, c: 20 });
        if next == Next::Run(0) {
            // Main took 20 as well: release both so the child can go; not the case we test.
            return;
        }
        assert_eq!(next, Next::Run(a));
        next = c.point(a, Op::Acquire { s: 4, l: 20, c: 20 });
        // Child takes 20 (main is still enabled for 20 too until then; either may win).
        if next == Next::Run(a) {
            next = c.point(a, Op::Acquire { s: 5, l: 10, c: 10 });
            assert_eq!(next, Next::End(Verdict::Deadlock));
            let blocked: Vec<_> = c
                .sink
                .0
                .iter()
                .filter(|e| matches!(e, Event::Blocked { .. }))
                .collect();
            assert_eq!(blocked.len(), 2);
            assert!(blocked.contains(&&Event::Blocked {
                t: 0,
                s: 3,
                kind: 0,
                on: 20,
                holder: a
            }));
        }
    }

    #[test]
    fn join_waits_for_child_and_step_limit_ends_runs() {
        let config = Config {
            step_limit: 5,
            ..Config::default()
        };
        let mut c = Core::new(&config, 0, Rec::default());
        c.decide();
        let a = c.reserve().unwrap();
        c.point(0, Op::Spawn { s: 1, child: a });
        let next = c.point(0, Op::Join { s: 2, child: a });
        // Only the child can run until it exits.
        assert_eq!(next, Next::Run(a));
        // Steps so far: start, spawn, child start. Two yields reach the limit of 5.
        for _ in 0..2 {
            assert_eq!(c.point(a, Op::Yield { s: 3 }), Next::Run(a));
        }
        assert_eq!(
            c.point(a, Op::Yield { s: 3 }),
            Next::End(Verdict::StepLimit)
        );
        assert_eq!(c.steps(), 5);
    }

    #[test]
    fn trace_level_filters_accesses() {
        let config = Config {
            trace: TraceLevel::Sync,
            ..Config::default()
        };
        let mut c = Core::new(&config, 0, Rec::default());
        c.decide();
        c.point(0, Op::Read { s: 1, a: 2 });
        c.point(0, Op::Acquire { s: 1, l: 2, c: 2 });
        assert!(!c.sink.0.iter().any(|e| matches!(e, Event::Read { .. })));
        assert!(c.sink.0.iter().any(|e| matches!(e, Event::Acquire { .. })));
    }
}
