//! AtomFuzzer (atomfuzzer-fse08 Algorithm 2): pause, with probability q, a task about to
//! re-acquire inside an atomic block a lock it already acquired and released there, so that
//! another task can acquire the lock in between (the check in [`crate::targets`] reports that
//! violation and lets the paused task go).

use super::{Check, Strategy, View};
use crate::op::Op;
use crate::rng::SchedRng;
use crate::task::TaskId;

/// q = 1 in the fixed-point unit of [`AtomFuzzer::with_q`].
pub const Q_ONE: u32 = 1 << 16;

/// The AtomFuzzer strategy.
#[derive(Clone, Debug)]
pub struct AtomFuzzer {
    /// Pause probability in units of 1/65536 (the paper's default q = 0.5).
    q: u32,
}

impl AtomFuzzer {
    /// With pause probability `q / 65536`; 0 means the paper's default, 0.5.
    pub fn with_q(q: u32) -> Self {
        AtomFuzzer {
            q: if q == 0 { Q_ONE / 2 } else { q.min(Q_ONE) },
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
        if (view.tracker.is_reacquire(t, op)
            || (view.targets.atomicity && view.tracker.breaks_block(t, op)))
            && view
                .targets
                .is_atomicity_target(&view.tracker.tasks[t as usize], op)
            && rng.below(Q_ONE) < self.q
        {
            return Check::Postpone;
        }
        // Lines 7, 10, 18–23: everything else executes (the tracker records blocks and
        // acquires).
        Check::Execute
    }
}
