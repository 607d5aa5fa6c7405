//! AtomFuzzer (atomfuzzer-fse08 Algorithm 2): pause, with probability q, a task about to
//! re-acquire inside an atomic block a lock it already acquired and released there, so that
//! another task can acquire the lock in between (the check in [`crate::targets`] reports that
//! violation and lets the paused task go).
//!
//! A task at an [`role::INTERLEAVER`] breakpoint (an acquire of the lock a targeted block
//! releases, by another task) is held back until some task is paused in its block, as
//! RaceFuzzer holds back one side of a race until the other comes: run freely, it would often
//! take the lock before the block has even started. When the block pauses, the held tasks
//! execute first and make the violation real. Once the block has been interleaved, or
//! when only held tasks are left (the loop's thrashing release), they run freely.

use super::{Check, Strategy, View};
use crate::op::Op;
use crate::rng::SchedRng;
use crate::targets::role;
use crate::task::{TaskId, TaskSet};

/// q = 1 in the fixed-point unit of [`AtomFuzzer::with_q`].
pub const Q_ONE: u32 = 1 << 16;

/// The AtomFuzzer strategy.
#[derive(Clone, Debug)]
pub struct AtomFuzzer {
    /// Pause probability in units of 1/65536 (the paper's default q = 0.5).
    q: u32,
    /// A held interleaver has been let go at a paused block: nobody is held back any more.
    interleaved: bool,
}

impl AtomFuzzer {
    /// With pause probability `q / 65536`; 0 means the paper's default, 0.5.
    pub fn with_q(q: u32) -> Self {
        AtomFuzzer {
            q: if q == 0 { Q_ONE / 2 } else { q.min(Q_ONE) },
            interleaved: false,
        }
    }
}

impl Strategy for AtomFuzzer {
    const AIMS_AT_EVERY_BLOCK: bool = true;

    /// `params[0]`: q (see [`AtomFuzzer::with_q`]).
    fn new(params: [u32; 4], _rng: &mut SchedRng) -> Self {
        Self::with_q(params[0])
    }

    fn checks(&self, op: &Op) -> bool {
        super::is_acquire(op)
    }

    fn check(&mut self, t: TaskId, op: &Op, view: &View<'_>, rng: &mut SchedRng) -> Check {
        // Lines 13–17: an acquire inside an atomic block of a lock already acquired there;
        // for a targeted block, any acquire after it released a lock (two locks in turn,
        // Atomizer's reduction: `Tracker::breaks_block`).
        let breaks = (view.tracker.is_reacquire(t, op)
            || (view.targets.atomicity && view.tracker.breaks_block(t, op)))
            && view
                .targets
                .is_atomicity_target(&view.tracker.tasks[t as usize], op);
        if breaks && rng.below(Q_ONE) < self.q {
            // Tasks held at their acquire of a lock this block released go first.
            let held = self.held_for(t, view);
            if held.is_empty() {
                return Check::Postpone;
            }
            self.interleaved = true;
            return Check::ExecuteFirst(held);
        }
        if !breaks
            && view.targets.interleaving
            && !self.interleaved
            && let Op::Acquire { s, l, .. } = *op
            && view.targets.has(s, role::INTERLEAVER)
        {
            if !paused_in_block(t, l, view) {
                return Check::Postpone; // held back until a block pauses
            }
            self.interleaved = true;
        }
        // Lines 7, 10, 18–23: everything else executes (the tracker records blocks and
        // acquires).
        Check::Execute
    }
}

impl AtomFuzzer {
    /// The tasks held back at an interleaver site, about to acquire a lock that `t`'s block
    /// (pausing now) has released.
    fn held_for(&self, t: TaskId, view: &View<'_>) -> TaskSet {
        let mut held = TaskSet::EMPTY;
        if !view.targets.interleaving || self.interleaved {
            return held;
        }
        for u in view.postponed.iter() {
            if u != t
                && let Some(&Op::Acquire { s, l, .. }) = view.pending(u)
                && view.targets.has(s, role::INTERLEAVER)
                && view.tracker.released_in_block(t, l)
            {
                held.insert(u);
            }
        }
        held
    }
}

/// Is a task other than `t` paused in its targeted block, which acquiring `l` now violates
/// (the check of [`crate::targets::Targets::before`] will report it)?
fn paused_in_block(t: TaskId, l: u32, view: &View<'_>) -> bool {
    view.postponed.iter().any(|p| {
        p != t
            && view.pending(p).is_some_and(|pending| {
                matches!(pending, Op::Acquire { .. })
                    && view.tracker.released_in_block(p, l)
                    && view
                        .targets
                        .is_atomicity_target(&view.tracker.tasks[p as usize], pending)
            })
    })
}
