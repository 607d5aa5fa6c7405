//! POS, partial order sampling (Yuan, Yang, Gu, "Partial Order Aware Concurrency Sampling",
//! CAV 2018), Fray's default strategy. The paper's algorithm: every event has a priority, a
//! real number drawn uniformly from [0, 1) when the event first becomes schedulable; at each
//! state the enabled event `e*` of highest priority executes, and every enabled event that
//! *races* with `e*` gets a fresh priority. The resets are what the paper adds to sampling by
//! fixed random priorities: without them, a task that lost a race would carry its losing
//! priority on into the next one.
//!
//! Here an event is a task's pending operation, so each task has one priority (a `u32`, the
//! numerator of a real in [0, 1) over 2^32) for the operation it is stopped before:
//!
//! - at a decision among two or more enabled tasks ([`Strategy::pick`]) the highest
//!   priority runs (ties, one chance in 2^32, go to the lowest task id), and every other
//!   candidate whose pending operation [conflicts](Pos::conflicts) with the winner's loses
//!   its priority;
//! - after a task executes an operation ([`Strategy::analyze`]) its own priority goes (its
//!   next operation is a new event), also when it was the only enabled task;
//! - a priority that went is drawn again from the run's generator at the next decision the
//!   task takes part in (lazily, as Fray's `POSScheduler` draws it; nothing reads it before,
//!   so schedules have the same distribution as when it is drawn at once).
//!
//! Spinning: a yield (`spin_loop` is one) or a failed compare-and-swap ([`Strategy::spun`])
//! gives the task a priority below every drawn one and below every earlier spinner's, as PCT
//! does, or a spinner could keep the task it waits for from ever running; of two tasks
//! spinning on each other the one that spun last runs last, so they take turns. The spinner
//! gets a drawn priority again when it runs or when another task's operation conflicts with
//! its pending one (typically the write it waits for).
//!
//! Interrupt handlers are not decisions: as under Random and PCT, the scheduler fires them
//! (`sched::irq`) and their operations run to completion without reaching the strategy.
//!
//! POS sees every decision and every step, so the kernel's lean path (which keeps no
//! pending operation for the running task and shows its steps to no strategy) has no budget
//! under it: every point takes the general loop.

use super::{Strategy, View};
use crate::op::{ALL_IRQS, Op};
use crate::rng::SchedRng;
use crate::task::{MAX_TASKS, TaskId, TaskSet};
use rand_core::RngCore;

/// The POS strategy.
#[derive(Clone, Debug)]
pub struct Pos {
    /// Each task's priority: a drawn `u32`, or for a spinner its place below the drawn ones
    /// (see [`Pos::key`]).
    priority: [u32; MAX_TASKS],
    /// Tasks whose priority is set (drawn, or low after a spin).
    set: TaskSet,
    /// Tasks whose priority is a spinner's low one.
    low: TaskSet,
    /// Spins so far in the run (a later spinner ranks below an earlier one).
    spins: u32,
}

impl Pos {
    /// POS with no priority drawn yet.
    pub fn new_run() -> Self {
        Pos {
            priority: [0; MAX_TASKS],
            set: TaskSet::EMPTY,
            low: TaskSet::EMPTY,
            spins: 0,
        }
    }

    /// Do `a` and `b`, the operations of two different tasks, conflict (the paper's race
    /// between two co-enabled events: their two orders may lead to different states)?
    ///
    /// - accesses (plain or atomic) of the same location, one of them a write: `Write`,
    ///   `Update`, an atomic store, read-modify-write or compare-and-swap (which may write;
    ///   its outcome is not known before it runs);
    /// - acquires and releases of the same lock;
    /// - entries into and exits from the critical section;
    /// - a send and a receive, or two receives, of the same signal (sends only add up);
    /// - two masks of the same interrupt source (or of all), and two priority masks.
    ///
    /// Everything else commutes: reads with reads, operations on different locations, locks
    /// or signals, spawns, joins, yields, frames, atomic-block bounds, interrupt requests.
    pub fn conflicts(a: &Op, b: &Op) -> bool {
        use crate::targets::access;
        if let (Some((_, x, wa)), Some((_, y, wb))) = (access(a), access(b)) {
            return x == y && (wa || wb);
        }
        match (*a, *b) {
            (
                Op::Acquire { l: x, .. } | Op::Release { l: x, .. },
                Op::Acquire { l: y, .. } | Op::Release { l: y, .. },
            ) => x == y,
            (Op::CsEnter | Op::CsExit, Op::CsEnter | Op::CsExit) => true,
            (Op::Signal { g: x, .. }, Op::Wait { g: y, .. })
            | (Op::Wait { g: x, .. }, Op::Signal { g: y, .. })
            | (Op::Wait { g: x, .. }, Op::Wait { g: y, .. }) => x == y,
            (Op::IrqMask { i: x, .. }, Op::IrqMask { i: y, .. }) => {
                x == y || x == ALL_IRQS || y == ALL_IRQS
            }
            (Op::PrioMask { .. }, Op::PrioMask { .. }) => true,
            _ => false,
        }
    }

    /// The ordering key of task `t`'s priority (set): drawn priorities above every
    /// spinner's.
    #[inline]
    fn key(&self, t: TaskId) -> u64 {
        let p = u64::from(self.priority[t as usize]);
        if self.low.contains(t) { p } else { p | 1 << 32 }
    }

    /// The task of highest priority among `candidates` (not empty, every priority set);
    /// ties go to the lowest id.
    pub fn highest(&self, candidates: TaskSet) -> TaskId {
        let mut best = candidates.nth(0);
        let mut best_key = self.key(best);
        for t in candidates.iter() {
            let k = self.key(t);
            if k > best_key {
                best = t;
                best_key = k;
            }
        }
        best
    }

    /// Task `t`'s priority goes; it is drawn again at its next decision.
    pub fn reset(&mut self, t: TaskId) {
        self.set.remove(t);
        self.low.remove(t);
    }

    /// Draws a priority for each task of `candidates` that has none, in task-id order.
    pub fn draw(&mut self, candidates: TaskSet, rng: &mut SchedRng) {
        for t in candidates.minus(self.set).iter() {
            self.priority[t as usize] = rng.next_u32();
            self.set.insert(t);
        }
    }

    /// Task `t`'s priority, if set: `(low, value)` (`low`: a spinner's).
    pub fn priority(&self, t: TaskId) -> Option<(bool, u32)> {
        self.set
            .contains(t)
            .then(|| (self.low.contains(t), self.priority[t as usize]))
    }
}

impl Strategy for Pos {
    const ANALYZES: bool = true;
    const SEES_YIELDS: bool = true;

    fn new(_params: [u32; 4], _rng: &mut SchedRng) -> Self {
        Self::new_run()
    }

    /// The paper's step: the enabled event of highest priority is chosen, and the enabled
    /// events racing with it get fresh priorities.
    fn pick(&mut self, candidates: TaskSet, view: &View<'_>, rng: &mut SchedRng) -> TaskId {
        self.draw(candidates, rng);
        let best = self.highest(candidates);
        if let Some(op) = view.pending(best) {
            for t in candidates.iter() {
                if t != best && view.pending(t).is_some_and(|o| Self::conflicts(o, op)) {
                    self.reset(t);
                }
            }
        }
        best
    }

    /// After `t` executed `op`, its next operation is a new event: its priority goes (a
    /// yield's has just been set low by [`Strategy::spun`] and stays). A spawned task has
    /// none until it first takes part in a decision.
    fn analyze(&mut self, t: TaskId, op: &Op, _view: &View<'_>, _rng: &mut SchedRng) -> TaskSet {
        if let Op::Spawn { child, .. } = *op {
            self.reset(child);
        }
        if !matches!(op, Op::Yield { .. }) {
            self.reset(t);
        }
        TaskSet::EMPTY
    }

    /// The spinner goes below every drawn priority and every earlier spinner.
    fn spun(&mut self, t: TaskId) {
        if (t as usize) < MAX_TASKS {
            self.priority[t as usize] = u32::MAX - self.spins;
            self.spins = self.spins.saturating_add(1).min(u32::MAX - 1);
            self.set.insert(t);
            self.low.insert(t);
        }
    }

    /// Never decided without the pending operations of the others: to the general loop.
    #[inline(always)]
    fn lean_pick(&mut self, _enabled: TaskSet, _rng: &mut SchedRng) -> Option<TaskId> {
        None
    }

    /// Every step must be analyzed (the runner's priority goes after each).
    #[inline(always)]
    fn lean_budget(&self, _steps: u32) -> u32 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{AtomicKind, Slot};
    use crate::targets::{Targets, Tracker};
    use rand_core::SeedableRng;

    fn atomic(a: u32, kind: AtomicKind) -> Op {
        Op::AtomicAccess { s: 1, a, kind, ord: 4 }
    }

    /// Every pair of operations of this list, with the expected answer.
    #[test]
    fn the_conflict_relation() {
        use AtomicKind::*;
        let read = |a| Op::Read { s: 1, a };
        let write = |a| Op::Write { s: 2, a };
        let update = |a| Op::Update { s: 3, a };
        let acquire = |l| Op::Acquire { s: 4, l, c: l };
        let release = |l| Op::Release { s: 5, l };
        let signal = |g| Op::Signal { s: 6, g };
        let wait = |g| Op::Wait { s: 7, g };
        let mask = |i| Op::IrqMask { s: 8, i, on: true };
        let conflicting = [
            (write(1), write(1)),
            (write(1), read(1)),
            (update(1), read(1)),
            (update(1), update(1)),
            (atomic(1, Store), atomic(1, Load)),
            (atomic(1, Rmw), atomic(1, Rmw)),
            (atomic(1, Cas), atomic(1, Load)),
            (atomic(1, Load), write(1)),
            (atomic(1, Store), read(1)),
            (acquire(9), acquire(9)),
            (acquire(9), release(9)),
            (Op::CsEnter, Op::CsEnter),
            (Op::CsEnter, Op::CsExit),
            (signal(3), wait(3)),
            (wait(3), wait(3)),
            (mask(2), mask(2)),
            (mask(2), mask(ALL_IRQS)),
            (
                Op::PrioMask {
                    s: 1,
                    level: 2,
                    r: 0,
                },
                Op::PrioMask {
                    s: 2,
                    level: 0,
                    r: 0,
                },
            ),
        ];
        let commuting = [
            (read(1), read(1)),
            (atomic(1, Load), read(1)),
            (atomic(1, Load), atomic(1, Load)),
            (write(1), write(2)),
            (atomic(1, Rmw), atomic(2, Rmw)),
            (acquire(9), acquire(10)),
            (acquire(9), release(10)),
            (signal(3), signal(3)),
            (signal(3), wait(4)),
            (mask(2), mask(3)),
            (
                Op::IrqRequest { s: 1, i: 2 },
                Op::IrqRequest { s: 2, i: 2 },
            ),
            (Op::IrqRequest { s: 1, i: 2 }, mask(2)),
            (Op::CsEnter, acquire(9)),
            (Op::CsEnter, write(1)),
            (Op::Yield { s: 1 }, Op::Yield { s: 1 }),
            (Op::Yield { s: 1 }, write(1)),
            (Op::Start, write(1)),
            (Op::Spawn { s: 1, child: 2 }, Op::Join { s: 2, child: 2 }),
            (Op::AtomicEnter { s: 1 }, Op::AtomicExit { s: 1 }),
            (Op::FrameEnter { s: 1 }, Op::FrameEnter { s: 1 }),
            (write(9), acquire(9)),
            (write(9), signal(9)),
        ];
        for (a, b) in conflicting {
            assert!(Pos::conflicts(&a, &b), "{a:?} / {b:?}");
            assert!(Pos::conflicts(&b, &a), "{b:?} / {a:?}");
        }
        for (a, b) in commuting {
            assert!(!Pos::conflicts(&a, &b), "{a:?} / {b:?}");
            assert!(!Pos::conflicts(&b, &a), "{b:?} / {a:?}");
        }
    }

    /// Tasks 0..4 stopped before `ops`.
    fn slots(ops: [Op; 4]) -> [Slot; MAX_TASKS] {
        let mut slots = [Slot::Free; MAX_TASKS];
        for (i, op) in ops.into_iter().enumerate() {
            slots[i] = Slot::Alive(Some(op));
        }
        slots
    }

    fn view<'a>(slots: &'a [Slot; MAX_TASKS], targets: &'a Targets, tracker: &'a Tracker) -> View<'a> {
        View {
            slots,
            postponed: TaskSet::EMPTY,
            step: 0,
            targets,
            tracker,
        }
    }

    #[test]
    fn a_pick_redraws_the_winner_and_the_candidates_that_conflict_with_it() {
        let (targets, tracker) = (Targets::new(&[]), Tracker::default());
        let all = TaskSet(0b1111);
        for seed in 0..50 {
            let mut rng = SchedRng::seed_from_u64(seed);
            let mut pos = Pos::new_run();
            // Each task writes its own location, so nothing conflicts: the first pick
            // draws everyone and keeps every loser's priority.
            let own = slots(core::array::from_fn(|i| Op::Write { s: 1, a: i as u32 }));
            let v = view(&own, &targets, &tracker);
            let winner = pos.pick(all, &v, &mut rng);
            let before: Vec<_> = (0..4).map(|t| pos.priority(t)).collect();
            assert!(before.iter().all(|p| matches!(p, Some((false, _)))));
            let top = (0..4).max_by_key(|t| before[*t as usize].unwrap().1).unwrap();
            assert_eq!(winner, top, "seed {seed}");
            pos.analyze(winner, &own[winner as usize].pending().copied().unwrap(), &v, &mut rng);
            for t in 0..4 {
                let expected = if t == winner { None } else { before[t as usize] };
                assert_eq!(pos.priority(t), expected, "seed {seed} task {t}");
            }

            // Now the winner reads location 9, which task `w` writes and the others read.
            let mut pos = Pos::new_run();
            let mut rng = SchedRng::seed_from_u64(seed);
            let w = (seed % 4) as TaskId;
            let ops = core::array::from_fn(|i| {
                if i as TaskId == w {
                    Op::Write { s: 2, a: 9 }
                } else {
                    Op::Read { s: 3, a: 9 }
                }
            });
            let mixed = slots(ops);
            let v = view(&mixed, &targets, &tracker);
            let winner = pos.pick(all, &v, &mut rng);
            for t in 0..4 {
                let conflicts = t != winner && (t == w || winner == w);
                let kept = pos.priority(t).is_some();
                // Only the winner itself and the tasks in conflict with it lose theirs
                // at the pick (the winner's goes once it has executed).
                assert_eq!(kept, !conflicts, "seed {seed} winner {winner} task {t}");
            }
        }
    }

    #[test]
    fn picks_follow_the_priorities_and_are_seed_deterministic() {
        let (targets, tracker) = (Targets::new(&[]), Tracker::default());
        let own = slots(core::array::from_fn(|i| Op::Write { s: 1, a: i as u32 }));
        let v = view(&own, &targets, &tracker);
        let run = |seed: u64| {
            let mut rng = SchedRng::seed_from_u64(seed);
            let mut pos = Pos::new_run();
            let mut order = Vec::new();
            for _ in 0..12 {
                let t = pos.pick(TaskSet(0b1111), &v, &mut rng);
                pos.analyze(t, &Op::Write { s: 1, a: t as u32 }, &v, &mut rng);
                order.push(t);
            }
            order
        };
        assert_eq!(run(3), run(3));
        let distinct: std::collections::BTreeSet<_> = (0..30).map(run).collect();
        assert!(distinct.len() > 10, "{distinct:?}");
    }

    #[test]
    fn a_spinner_goes_below_everyone_and_spinners_take_turns() {
        let (targets, tracker) = (Targets::new(&[]), Tracker::default());
        let yields = slots([Op::Yield { s: 1 }; 4]);
        let v = view(&yields, &targets, &tracker);
        for seed in 0..20 {
            let mut rng = SchedRng::seed_from_u64(seed);
            let mut pos = Pos::new_run();
            let all = TaskSet(0b111);
            // Each task that runs yields: every other task runs before it runs again.
            let mut order = Vec::new();
            for _ in 0..9 {
                let t = pos.pick(all, &v, &mut rng);
                pos.spun(t);
                pos.analyze(t, &Op::Yield { s: 1 }, &v, &mut rng);
                assert_eq!(pos.priority(t).map(|p| p.0), Some(true));
                order.push(t);
            }
            assert_eq!(order[0..3], order[3..6], "seed {seed}");
            assert_eq!(order[3..6], order[6..9], "seed {seed}");
            let mut first: Vec<_> = order[0..3].to_vec();
            first.sort();
            assert_eq!(first, [0, 1, 2], "seed {seed}");
        }
    }

    #[test]
    fn a_spinner_gets_a_drawn_priority_back_when_its_wait_is_written() {
        let (targets, tracker) = (Targets::new(&[]), Tracker::default());
        // Task 0 spins on flag 5 (its pending load); task 1 is about to store it.
        let flag = slots([
            atomic(5, AtomicKind::Load),
            atomic(5, AtomicKind::Store),
            Op::Read { s: 1, a: 6 },
            Op::Read { s: 1, a: 6 },
        ]);
        let v = view(&flag, &targets, &tracker);
        let mut rng = SchedRng::seed_from_u64(1);
        let mut pos = Pos::new_run();
        pos.spun(0);
        // Task 2 also spun, earlier tasks rank higher: 0 above 2 but below 1.
        pos.spun(2);
        let both = TaskSet(0b111);
        assert_eq!(pos.pick(both, &v, &mut rng), 1);
        // The store conflicts with task 0's load: its low priority goes, task 2's stays.
        assert_eq!(pos.priority(0), None);
        assert_eq!(pos.priority(2).map(|p| p.0), Some(true));
        // A failed compare-and-swap after its step (the port reports it then) is a spin too.
        pos.analyze(1, &flag[1].pending().copied().unwrap(), &v, &mut rng);
        pos.spun(1);
        assert_eq!(pos.priority(1).map(|p| p.0), Some(true));
        assert_eq!(pos.pick(both, &v, &mut rng), 0);
    }
}
