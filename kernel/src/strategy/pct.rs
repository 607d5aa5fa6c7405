//! PCT, probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte,
//! ASPLOS'10), the baseline users know from shuttle and Coyote: every task gets a random
//! distinct priority `≥ d`; the highest-priority enabled task runs; at `d − 1` change points
//! drawn uniformly from the first `k` steps, the task that just ran drops to priority `i`
//! (lower than every initial priority). A bug of depth `d` is found with probability at
//! least `1 / (n · k^(d−1))`.
//!
//! The random priorities are dealt as tasks appear: a new task is inserted at a uniformly
//! random rank among the tasks ranked so far, which gives a uniformly random permutation
//! without depending on the size of the task table (so one seed decides the same whatever
//! task limit the firmware was built with).

use super::{Strategy, View};
use crate::op::Op;
use crate::rng::SchedRng;
use crate::task::{MAX_TASKS, TaskId, TaskSet};

/// Most change points (`d − 1`).
pub const MAX_DEPTH: usize = 8;
/// Depth when the configuration gives 0.
pub const DEFAULT_DEPTH: u32 = 3;
/// Step bound when the configuration gives 0.
pub const DEFAULT_STEPS: u32 = 1000;

/// The PCT strategy.
#[derive(Clone, Debug)]
pub struct Pct {
    /// Priority of each task (`d + rank` for a random rank among the tasks spawned so far;
    /// below `d` once a change point has lowered it; negative once it spun). `i32`, as wide
    /// as POS's `u32` priorities, so the strategy enum is no larger.
    priority: [i32; MAX_TASKS],
    /// The lowest initial priority, `d`.
    base: i32,
    /// Tasks ranked so far.
    ranked: u8,
    /// The steps after which a priority change happens, ascending.
    change: crate::fixed::Vec<u32, MAX_DEPTH>,
    /// Change points passed so far.
    passed: u8,
    /// The next spinner's priority: `-1 - spins` after `spins` spins, below every other
    /// task (it stops falling at `i32::MIN`, some two billion spins on).
    spin_floor: i32,
}

impl Pct {
    /// PCT of depth `d` (0: [`DEFAULT_DEPTH`]) over about `k` steps (0: [`DEFAULT_STEPS`]).
    pub fn with_depth(d: u32, k: u32, rng: &mut SchedRng) -> Self {
        let d = if d == 0 { DEFAULT_DEPTH } else { d }.clamp(1, MAX_DEPTH as u32 + 1);
        let k = if k == 0 { DEFAULT_STEPS } else { k };
        let mut priority = [0i32; MAX_TASKS];
        // Task 0, the only one so far, has rank 0.
        priority[0] = d as i32;
        let mut change = crate::fixed::Vec::new();
        for _ in 1..d {
            let _ = change.push(1 + rng.below(k));
        }
        // Insertion sort: at most MAX_DEPTH entries, and no general sort in flash.
        for i in 1..change.len() {
            let mut j = i;
            while j > 0 && change[j - 1] > change[j] {
                change.swap(j - 1, j);
                j -= 1;
            }
        }
        Pct {
            priority,
            base: d as i32,
            ranked: 1,
            change,
            passed: 0,
            spin_floor: -1,
        }
    }
}

impl Pct {
    /// The highest-priority task of `candidates` (not empty).
    #[inline]
    pub fn highest(&self, candidates: TaskSet) -> TaskId {
        let mut best = candidates.nth(0);
        for t in candidates.iter() {
            if self.priority[t as usize] > self.priority[best as usize] {
                best = t;
            }
        }
        best
    }

    /// Task `child` appears: it takes a uniformly random rank among the ranked tasks
    /// (random insertion, which makes the ranks a uniformly random permutation).
    fn rank(&mut self, child: TaskId, rng: &mut SchedRng) {
        let n = u32::from(self.ranked);
        let at = self.base + rng.below(n + 1) as i32;
        for p in self.priority.iter_mut() {
            if *p >= at {
                *p += 1;
            }
        }
        self.priority[child as usize] = at;
        self.ranked += 1;
    }

    /// After `t` executed step number `step`: the change points passed lower its priority.
    #[inline]
    pub fn passed_step(&mut self, t: TaskId, step: u32) {
        while let Some(&at) = self.change.get(self.passed as usize) {
            if at > step {
                break;
            }
            self.passed += 1;
            // The i-th change point gives priority d − i: below every initial one.
            self.priority[t as usize] = (self.change.len() + 1 - self.passed as usize) as i32;
        }
    }
}

impl Strategy for Pct {
    const ANALYZES: bool = true;
    const SEES_YIELDS: bool = true;

    /// `params[0]`: depth d, `params[1]`: step bound k (see [`Pct::with_depth`]).
    fn new(params: [u32; 4], rng: &mut SchedRng) -> Self {
        Self::with_depth(params[0], params[1], rng)
    }

    #[inline(always)]
    fn lean_pick(&mut self, enabled: TaskSet, _rng: &mut SchedRng) -> Option<TaskId> {
        Some(self.highest(enabled))
    }

    /// A yield or a failed compare-and-swap is a priority change for the spinning task: it
    /// drops below every other (as shuttle's and Coyote's PCT do), or a task spinning on a
    /// flag would keep the one it waits for from ever running. Each spinner goes below the
    /// earlier ones (as in POS), so the order stays strict: of two tasks spinning on each
    /// other (a producer on a full queue, a consumer on an empty one), the one that spun
    /// last runs last, and they take turns instead of one spinning forever on a tie. One
    /// store, not a pass over the task table: a yield is on PCT's every-point path.
    fn spun(&mut self, t: TaskId) {
        if let Some(p) = self.priority.get_mut(t as usize) {
            *p = self.spin_floor;
        }
        self.spin_floor = self.spin_floor.saturating_sub(1);
    }

    /// Up to the next change point: the step numbered `at` must be analyzed.
    fn lean_budget(&self, steps: u32) -> u32 {
        match self.change.get(self.passed as usize) {
            Some(&at) => at.saturating_sub(steps + 1),
            None => u32::MAX,
        }
    }

    fn pick(&mut self, candidates: TaskSet, _view: &View<'_>, _rng: &mut SchedRng) -> TaskId {
        self.highest(candidates)
    }

    fn analyze(&mut self, t: TaskId, op: &Op, view: &View<'_>, rng: &mut SchedRng) -> TaskSet {
        if let Op::Spawn { child, .. } = *op {
            self.rank(child, rng);
        }
        // `view.step` counts the step just executed.
        self.passed_step(t, view.step);
        TaskSet::EMPTY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    #[test]
    fn two_tasks_spinning_on_each_other_take_turns() {
        let mut rng = SchedRng::seed_from_u64(7);
        let mut pct = Pct::with_depth(1, 100, &mut rng);
        pct.rank(1, &mut rng);
        let mut both = TaskSet::one(0);
        both.insert(1);
        let mut order = Vec::new();
        for _ in 0..4 {
            let t = pct.highest(both);
            order.push(t);
            pct.spun(t);
        }
        // Whichever starts, the spinner always yields to the other: no livelock on a tie.
        assert_eq!(order[0], order[2]);
        assert_eq!(order[1], order[3]);
        assert_ne!(order[0], order[1]);
    }
}
