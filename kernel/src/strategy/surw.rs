//! SURW, selectively uniform random walk (Zhao, Wolff, Mathur, Roychoudhury, "Selectively
//! Uniform Concurrency Testing", ASPLOS 2025), as the paper's artifact implements it
//! (`zhaohuanqdcn/SURW`, `src/main.zig`; the line numbers below are its lines, see
//! `docs/research/surw.md`, section 5).
//!
//! A few operations are *interesting*: the accesses (plain or atomic) of one shared location,
//! which the host draws from a profiling run of the same firmware (A `is_interesting`,
//! L491-499, in `memory_addr` mode). Each task has a weight, the number of interesting
//! operations it has left, estimated by the host from that run. Interesting operations run
//! in the order of a uniform random walk over their interleavings. At each one, the task
//! that goes next is drawn with probability proportional to the weights. Every other
//! operation is scheduled by random priorities.
//!
//! The configuration block carries the choice in its breakpoints:
//!
//! - [`role::INTERESTING`]: an access site of the location. An access at one of these sites
//!   is interesting. Sites are used rather than the location's id because site ids are the
//!   same in every run of an image. On the host port, location ids are numbered anew in each
//!   run.
//! - [`role::WEIGHT`]: `W0`, the initial weight of consecutive tasks ([`Surw::weight_aux`]). A
//!   task's `W0` is its own count plus the counts of the tasks it spawns, recursively. A task
//!   named by no breakpoint has weight 0.
//!
//! The decision ([`Strategy::pick`]) follows A's `choose_next_thread_idx` (L723-788), among
//! the candidates that are not *held*:
//!
//! 1. If every candidate is held, all of them are released and the intended task is
//!    forgotten (`generic_unblock`, L503-516; L733-741).
//! 2. The base strategy picks `t`. This is A's `rp` (`choose_highest_priority`, L520-546): the
//!    highest priority wins. A task's priority is drawn when it first takes part in a
//!    decision, and again after each uninteresting operation it executes (`pri_callback`,
//!    L640-643). The priorities are [`Pos`]'s, without its resets on conflicts.
//! 3. If `t`'s pending operation is not interesting, `t` runs (L766-776).
//! 4. Otherwise, a weight of 0 becomes 1 (an exhausted estimate, L745-746). If no task is
//!    intended, one is drawn now from the candidates, with probability proportional to their
//!    weights (`uniform_rw`, L609-636; L748-751). If `t` is the intended task, it runs.
//!    Otherwise `t` is held and the decision starts again at step 1 (L753-755).
//!
//! After a task executes an interesting operation ([`Strategy::analyze`]), its weight goes
//! down by one (`urw_callback`, L668-671). Every held task is released and the intended task
//! is forgotten. The runner keeps its priority, as in A. This also happens when the task ran
//! without a decision, as the only enabled task (A L817-830 and L733-741 lead to the same
//! state).
//!
//! When a task spawns a child `c` (A `pthread_create`, L835-901), the child starts with
//! `W0[c]`. If the parent is the intended task and has weight `w > 0`, the intention moves
//! to the child with probability `W0[c] / w` (L872-883). The parent's weight then drops by
//! `W0[c]`, saturating at 0 (L885-889). Task 0 starts with `W0[0]`.
//!
//! Two points differ from A:
//!
//! - **Spinning.** A yield (`spin_loop` is one) or a failed compare-and-swap
//!   ([`Strategy::spun`]) puts the task below every drawn priority, as POS and PCT do.
//!   Otherwise a task spinning on a flag could win draw after draw and keep the task it
//!   waits for from running.
//! - **Starvation guard.** A resets every priority and releases the held tasks when one
//!   thread is chosen 1,000 times in a row (`TIMEOUT`, L778-786). The case it guards
//!   against is a held task that the intended task waits for without an interesting
//!   operation in between. Here the same happens when a task has been held for
//!   [`Surw::HOLD_BOUND`] steps. Counting steps also covers two spinners that take turns, which
//!   consecutive choices of one task would miss.
//!
//! Interrupt handlers are not decisions. As under Random, PCT and POS, the scheduler fires
//! them (`sched::irq`) and their operations never reach the strategy, so the weights count
//! only tasks.
//!
//! SURW sees every decision and every step, so the kernel's lean path has no budget under
//! it (as under POS): every scheduling point takes the general loop.

use super::{Pos, Strategy, View};
use crate::op::Op;
use crate::rng::SchedRng;
use crate::targets::{Targets, access, aux, role, role_of};
use crate::task::{MAX_TASKS, TaskId, TaskSet};

/// The SURW strategy.
#[derive(Clone, Debug)]
pub struct Surw {
    /// The base strategy's random priorities (with POS's low priority for spinners).
    base: Pos,
    /// Each task's weight: its interesting operations left, estimated.
    weight: [u16; MAX_TASKS],
    /// Tasks held at an interesting operation until the intended task has run its own.
    held: TaskSet,
    /// The task whose interesting operation goes next (`None`: drawn at the next one).
    intended: Option<TaskId>,
    /// The step at which the held set last became non-empty.
    held_since: u32,
    /// Task 0's weight is set (at the first decision or step of the run).
    started: bool,
}

impl Surw {
    /// Steps a task may stay held before every held task is released (A's `TIMEOUT`, 1,000
    /// consecutive choices, L778-786).
    pub const HOLD_BOUND: u32 = 1000;

    /// The `aux` word of a [`role::WEIGHT`] breakpoint giving `len` tasks from `first` on
    /// (`first + len` at most 256) their initial weight, which the breakpoint's `site` holds.
    pub const fn weight_aux(first: TaskId, len: u8) -> u32 {
        aux(role::WEIGHT, first) | ((len as u32) << 8)
    }

    /// Task `t`'s initial weight `W0` in `targets` (0 when no [`role::WEIGHT`] breakpoint
    /// names it; at most `u16::MAX`, the width of A's estimates).
    pub fn initial_weight(targets: &Targets, t: TaskId) -> u16 {
        targets
            .breakpoints()
            .iter()
            .find(|b| {
                let (first, len) = (b.aux & 0xFF, (b.aux >> 8) & 0xFF);
                role_of(b.aux) == role::WEIGHT && (first..first + len).contains(&u32::from(t))
            })
            .map_or(0, |b| b.site.min(u32::from(u16::MAX)) as u16)
    }

    /// Is `op` interesting: an access at a [`role::INTERESTING`] site of `targets`?
    pub fn is_interesting(targets: &Targets, op: &Op) -> bool {
        access(op).is_some_and(|(s, _, _)| targets.has(s, role::INTERESTING))
    }

    /// SURW at the start of a run, before it has read the weights of the run's targets.
    pub fn new_run() -> Self {
        Surw {
            base: Pos::new_run(),
            weight: [0; MAX_TASKS],
            held: TaskSet::EMPTY,
            intended: None,
            held_since: 0,
            started: false,
        }
    }

    /// Task 0 starts with its initial weight (the only task alive at the start).
    fn start(&mut self, targets: &Targets) {
        if !self.started {
            self.started = true;
            self.weight[0] = Self::initial_weight(targets, 0);
        }
    }

    /// Task `t`'s current weight.
    pub fn weight(&self, t: TaskId) -> u16 {
        self.weight[t as usize]
    }

    /// The task whose interesting operation goes next, once drawn.
    pub fn intended(&self) -> Option<TaskId> {
        self.intended
    }

    /// The tasks held back at their interesting operation.
    pub fn held(&self) -> TaskSet {
        self.held
    }

    /// Releases every held task and forgets the intended one (A `generic_unblock`).
    fn release(&mut self) {
        self.held = TaskSet::EMPTY;
        self.intended = None;
    }

    /// A task of `set` drawn with probability proportional to its weight (A `uniform_rw`):
    /// `r` uniform below the total, and the first task whose cumulative weight exceeds it.
    /// Tasks of weight 0 are never drawn. Some task of `set` must have a positive weight.
    fn weighted(&self, set: TaskSet, rng: &mut SchedRng) -> TaskId {
        let total: u32 = set.iter().map(|t| u32::from(self.weight(t))).sum();
        let r = rng.below(total.max(1));
        let mut cumulative = 0;
        for t in set.iter() {
            cumulative += u32::from(self.weight(t));
            if r < cumulative {
                return t;
            }
        }
        set.nth(0)
    }

    /// `parent` spawned `child` (A L872-889): the child starts with its initial weight, the
    /// intention moves to it with probability `W0[child] / w[parent]` when the parent is
    /// the intended task, and the parent's weight drops by `W0[child]`.
    fn spawned(&mut self, parent: TaskId, child: TaskId, targets: &Targets, rng: &mut SchedRng) {
        let w0 = Self::initial_weight(targets, child);
        self.weight[child as usize] = w0;
        let wp = self.weight(parent);
        if self.intended == Some(parent) && wp > 0 && u32::from(w0) > rng.below(u32::from(wp)) {
            self.intended = Some(child);
        }
        self.weight[parent as usize] = wp.saturating_sub(w0);
    }
}

impl Strategy for Surw {
    const ANALYZES: bool = true;
    const SEES_YIELDS: bool = true;

    fn new(_params: [u32; 4], _rng: &mut SchedRng) -> Self {
        Self::new_run()
    }

    /// A's `choose_next_thread_idx`: the base strategy's pick, unless it stands at an
    /// interesting operation and is not the intended task, in which case it is held.
    fn pick(&mut self, candidates: TaskSet, view: &View<'_>, rng: &mut SchedRng) -> TaskId {
        self.start(view.targets);
        if !self.held.is_empty() && view.step.wrapping_sub(self.held_since) >= Self::HOLD_BOUND {
            // A's starvation guard resets every priority too.
            self.release();
            self.base = Pos::new_run();
        }
        loop {
            let mut set = candidates.minus(self.held);
            if set.is_empty() {
                self.release();
                set = candidates;
            }
            self.base.draw(set, rng);
            let t = self.base.highest(set);
            let Some(op) = view.pending(t) else {
                return t;
            };
            if !Self::is_interesting(view.targets, op) {
                return t;
            }
            if self.weight[t as usize] == 0 {
                self.weight[t as usize] = 1;
            }
            let intended = match self.intended {
                Some(i) => i,
                None => *self.intended.insert(self.weighted(set, rng)),
            };
            if t == intended {
                return t;
            }
            if self.held.is_empty() {
                self.held_since = view.step;
            }
            self.held.insert(t);
        }
    }

    /// After an interesting operation, the runner's weight goes down by one and the held
    /// tasks are released. After any other operation, the runner's priority is drawn again
    /// (a yield's stays at the low priority [`Strategy::spun`] gave it). A spawn gives the
    /// child its weight.
    fn analyze(&mut self, t: TaskId, op: &Op, view: &View<'_>, rng: &mut SchedRng) -> TaskSet {
        self.start(view.targets);
        if let Op::Spawn { child, .. } = *op {
            self.spawned(t, child, view.targets, rng);
            self.base.reset(child);
        }
        if Self::is_interesting(view.targets, op) {
            self.weight[t as usize] = self.weight(t).saturating_sub(1);
            self.release();
        } else if !matches!(op, Op::Yield { .. }) {
            self.base.reset(t);
        }
        TaskSet::EMPTY
    }

    /// The spinner goes below every drawn priority and every earlier spinner (as in POS).
    fn spun(&mut self, t: TaskId) {
        self.base.spun(t);
    }

    /// Never decided without the pending operations of the others: to the general loop.
    #[inline(always)]
    fn lean_pick(&mut self, _enabled: TaskSet, _rng: &mut SchedRng) -> Option<TaskId> {
        None
    }

    /// Every step must be analyzed (the weights and priorities change after each).
    #[inline(always)]
    fn lean_budget(&self, _steps: u32) -> u32 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::Breakpoint;
    use crate::op::Slot;
    use crate::targets::Tracker;
    use rand_core::SeedableRng;

    /// A run already started, with these (task, weight) pairs.
    fn started_with(weights: &[(usize, u16)]) -> Surw {
        let mut surw = Surw::new_run();
        for &(t, w) in weights {
            surw.weight[t] = w;
        }
        surw.started = true;
        surw
    }

    /// Site 50 is interesting; the weights are `weights[t]` for tasks `0..`.
    fn targets(weights: &[u32]) -> Targets {
        let mut bps = std::vec![Breakpoint {
            site: 50,
            aux: aux(role::INTERESTING, 0),
        }];
        for (t, &w) in weights.iter().enumerate() {
            bps.push(Breakpoint {
                site: w,
                aux: Surw::weight_aux(t as TaskId, 1),
            });
        }
        Targets::new(&bps)
    }

    fn slots(ops: &[Op]) -> [Slot; MAX_TASKS] {
        let mut slots = [Slot::Free; MAX_TASKS];
        for (i, op) in ops.iter().enumerate() {
            slots[i] = Slot::Alive(Some(*op));
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

    const HOT: Op = Op::Write { s: 50, a: 1 };
    const COLD: Op = Op::Write { s: 60, a: 2 };

    #[test]
    fn weights_are_read_from_runs_of_tasks() {
        let t = Targets::new(&[
            Breakpoint {
                site: 7,
                aux: Surw::weight_aux(2, 3),
            },
            Breakpoint {
                site: 70_000,
                aux: Surw::weight_aux(0, 1),
            },
        ]);
        let w: std::vec::Vec<u16> = (0..6).map(|i| Surw::initial_weight(&t, i)).collect();
        assert_eq!(w, [u16::MAX, 0, 7, 7, 7, 0]);
        assert!(Surw::is_interesting(&targets(&[]), &HOT));
        assert!(Surw::is_interesting(
            &targets(&[]),
            &Op::Read { s: 50, a: 9 }
        ));
        assert!(!Surw::is_interesting(&targets(&[]), &COLD));
        assert!(!Surw::is_interesting(&targets(&[]), &Op::Yield { s: 50 }));
    }

    #[test]
    fn a_task_of_weight_zero_is_never_intended_unless_bumped() {
        let tracker = Tracker::default();
        // Task 1 (weight 0) is about to do something uninteresting; tasks 2 and 3 stand at
        // interesting writes.
        let t = targets(&[0, 0, 2, 5]);
        let s = slots(&[COLD, COLD, HOT, HOT]);
        let v = view(&s, &t, &tracker);
        let mut intended = [0u32; 4];
        for seed in 0..400 {
            let mut rng = SchedRng::seed_from_u64(seed);
            let mut surw = started_with(&[(2, 2), (3, 5)]);
            let picked = surw.pick(TaskSet(0b1110), &v, &mut rng);
            match surw.intended() {
                Some(i) => {
                    intended[i as usize] += 1;
                    // The pick is the intended task, or task 1 (uninteresting) before it.
                    assert!(picked == i || picked == 1, "seed {seed}");
                    // Whoever stood at an interesting write and was not intended is held.
                    for h in surw.held().iter() {
                        assert!(h != i && s[h as usize].pending() == Some(&HOT));
                    }
                }
                None => assert_eq!(picked, 1, "nothing interesting examined: seed {seed}"),
            }
        }
        assert_eq!(intended[1], 0, "weight 0: {intended:?}");
        assert!(intended[2] > 0 && intended[3] > intended[2], "{intended:?}");

        // Task 1 at an interesting write with weight 0: bumped to 1 when examined, it may
        // be intended.
        let s = slots(&[COLD, HOT, HOT, HOT]);
        let v = view(&s, &t, &tracker);
        let mut bumped = 0;
        for seed in 0..400 {
            let mut rng = SchedRng::seed_from_u64(seed);
            let mut surw = started_with(&[(2, 2), (3, 5)]);
            let picked = surw.pick(TaskSet(0b1110), &v, &mut rng);
            assert_eq!(Some(picked), surw.intended(), "seed {seed}");
            if picked == 1 {
                bumped += 1;
                assert_eq!(surw.weight(1), 1);
            }
        }
        assert!(bumped > 0);
    }

    #[test]
    fn held_tasks_are_released_when_the_intended_task_has_run_or_all_are_held() {
        let tracker = Tracker::default();
        let t = targets(&[0, 1, 1, 1]);
        let s = slots(&[COLD, HOT, HOT, HOT]);
        let v = view(&s, &t, &tracker);
        for seed in 0..100 {
            let mut rng = SchedRng::seed_from_u64(seed);
            let mut surw = Surw::new_run();
            surw.analyze(0, &Op::Start, &v, &mut rng);
            for t in 1..4 {
                surw.weight[t] = 1;
            }
            let picked = surw.pick(TaskSet(0b1110), &v, &mut rng);
            assert_eq!(Some(picked), surw.intended());
            // The intended task runs its write: its weight goes, everyone is released.
            surw.analyze(picked, &HOT, &v, &mut rng);
            assert_eq!(surw.weight(picked), 0);
            assert_eq!((surw.held(), surw.intended()), (TaskSet::EMPTY, None));

            // The intended task blocks (here: is no candidate any more) while the others
            // stand at interesting writes: all get held, then all released, and one of
            // them is drawn.
            let mut surw = Surw::new_run();
            surw.started = true;
            surw.weight[1] = 1;
            surw.weight[2] = 1;
            surw.intended = Some(3);
            let picked = surw.pick(TaskSet(0b0110), &v, &mut rng);
            assert!(picked == 1 || picked == 2);
            assert_eq!(surw.intended(), Some(picked), "seed {seed}");
            assert!(!surw.held().contains(picked));
        }
    }

    #[test]
    fn a_task_held_for_the_bound_is_released() {
        let tracker = Tracker::default();
        let t = targets(&[0, 1, 1]);
        let s = slots(&[COLD, HOT, COLD]);
        let mut released = 0;
        for seed in 0..20 {
            let mut rng = SchedRng::seed_from_u64(seed);
            let mut surw = Surw::new_run();
            surw.started = true;
            surw.weight[1] = 1;
            surw.weight[2] = 1;
            // Task 2 is intended but runs only uninteresting operations (it spins on a flag
            // task 1 would set after its write): task 1, held at step 0, stays held.
            surw.intended = Some(2);
            surw.held = TaskSet::one(1);
            let mut v = view(&s, &t, &tracker);
            for step in 0..Surw::HOLD_BOUND {
                v.step = step;
                assert_eq!(surw.pick(TaskSet(0b110), &v, &mut rng), 2, "step {step}");
                surw.analyze(2, &COLD, &v, &mut rng);
                assert!(surw.held().contains(1));
            }
            // Then the hold ends: the intended task is drawn again, and task 1 may go.
            v.step = Surw::HOLD_BOUND;
            let picked = surw.pick(TaskSet(0b110), &v, &mut rng);
            assert!(surw.held().is_empty() || surw.held_since == Surw::HOLD_BOUND);
            released += u32::from(picked == 1);
        }
        assert!(released > 0);
    }

    #[test]
    fn a_spawn_hands_the_intention_to_the_child_in_proportion_to_its_weight() {
        let tracker = Tracker::default();
        // Task 0 has 2 interesting operations of its own; its child 1 has 6.
        let t = targets(&[8, 6]);
        let s = slots(&[COLD]);
        let v = view(&s, &t, &tracker);
        let mut moved = 0;
        for seed in 0..800 {
            let mut rng = SchedRng::seed_from_u64(seed);
            let mut surw = Surw::new_run();
            surw.analyze(0, &Op::Start, &v, &mut rng);
            assert_eq!(surw.weight(0), 8);
            surw.intended = Some(0);
            surw.analyze(0, &Op::Spawn { s: 1, child: 1 }, &v, &mut rng);
            assert_eq!((surw.weight(0), surw.weight(1)), (2, 6));
            moved += u32::from(surw.intended() == Some(1));
        }
        // 6/8 of the time.
        assert!((540..660).contains(&moved), "{moved}");
    }
}
