//! RaceFuzzer (racefuzzer-pldi08 Algorithms 1–2): postpone a task about to execute one
//! statement of the targeted racing pair until another task is about to execute the other on
//! the same location; then the race is real (the check in [`crate::targets`] reports it),
//! and a coin decides which side goes first.

use super::{Check, Strategy, View};
use crate::op::Op;
use crate::rng::SchedRng;
use crate::task::TaskId;

/// The RaceFuzzer strategy; its RaceSet is the run's [`crate::targets::role::RACE`]
/// breakpoints.
#[derive(Clone, Debug, Default)]
pub struct RaceFuzzer;

impl Strategy for RaceFuzzer {
    fn new(_params: [u32; 4], _rng: &mut SchedRng) -> Self {
        RaceFuzzer
    }

    fn checks(&self, op: &Op) -> bool {
        matches!(op, Op::Read { .. } | Op::Write { .. } | Op::Update { .. })
    }

    fn check(&mut self, t: TaskId, op: &Op, view: &View<'_>, rng: &mut SchedRng) -> Check {
        // Line 6: NextStmt(s, t) ∈ RaceSet?
        if !view.targets.is_race_site(op) {
            return Check::Execute; // line 24
        }
        // Line 7: R := Racing(s, t, postponed).
        let racing = view.targets.racing(t, op, view.slots, view.postponed);
        if racing.is_empty() {
            return Check::Postpone; // line 21: wait for a race to happen
        }
        // Lines 11–18: resolve the real race randomly.
        if rng.coin() {
            Check::Execute
        } else {
            Check::ExecuteFirst(racing)
        }
    }
}
