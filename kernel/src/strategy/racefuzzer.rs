//! RaceFuzzer (racefuzzer-pldi08 Algorithms 1–2): postpone a task about to execute one
//! statement of the targeted racing pair until another task is about to execute the other on
//! the same location; then the race is real (the check in [`crate::targets`] reports it),
//! and a coin decides which side goes first.
//!
//! The host may name the side that goes first instead of the coin (`params[0]`, see
//! [`RaceFuzzer::new`]): the order the predicting trace did not show. That trace passed in
//! its own order, so the other one is the one still to learn from; the campaign asks for it
//! in a candidate's first runs and leaves the coin to the rest.
//!
//! When the other side is in an interrupt handler (a [`crate::targets::role::FIRE`]
//! breakpoint names its source), waiting is pointless: a handler comes only when fired. So
//! the handler is fired right there, before the task's access (the handler's access makes
//! the race real against the stopped task) or, on the other side of the coin, right after
//! it. A handler at one side whose other side is a more urgent handler fires that one.

use super::{Check, Strategy, View};
use crate::op::Op;
use crate::rng::SchedRng;
use crate::task::TaskId;

/// The RaceFuzzer strategy; its RaceSet is the run's [`crate::targets::role::RACE`]
/// breakpoints.
#[derive(Clone, Debug, Default)]
pub struct RaceFuzzer {
    /// Whether the handler holding the other side was fired already (once per run).
    fired: bool,
    /// The side (0 or 1) whose task goes first when the race is real; `None`: the coin.
    first: Option<u8>,
}

/// `params[0]` of a RaceFuzzer run whose side `side` (0 or 1, the order of its
/// [`crate::targets::role::RACE`] breakpoints) goes first when the race is real.
pub const fn side_first(side: u8) -> u32 {
    1 + side as u32
}

impl Strategy for RaceFuzzer {
    /// `params[0]`: 0 for the paper's coin, or [`side_first`]`(s)` for side `s` first.
    fn new(params: [u32; 4], _rng: &mut SchedRng) -> Self {
        RaceFuzzer {
            fired: false,
            first: match params[0] {
                1 => Some(0),
                2 => Some(1),
                _ => None,
            },
        }
    }

    fn checks(&self, op: &Op) -> bool {
        crate::targets::access(op).is_some()
    }

    fn check(&mut self, t: TaskId, op: &Op, view: &View<'_>, rng: &mut SchedRng) -> Check {
        // Line 6: NextStmt(s, t) ∈ RaceSet?
        if !view.targets.is_race_site(op) {
            return Check::Execute; // line 24
        }
        // Line 7: R := Racing(s, t, postponed).
        let racing = view.targets.racing(t, op, view.slots, view.postponed);
        if racing.is_empty() {
            if let Some(i) = self.handler_side(op, view) {
                self.fired = true;
                // The coin of lines 11–18, with the handler as the other task.
                return if rng.coin() {
                    Check::FireFirst(i)
                } else {
                    Check::ExecuteThenFire(i)
                };
            }
            return Check::Postpone; // line 21: wait for a race to happen
        }
        // Lines 11–18: resolve the real race randomly, or as the host asked (a race between
        // two tasks at one site has no sides: the coin).
        let side = op.site().and_then(|s| view.targets.sole_race_side(s));
        let goes_first = match (self.first, side) {
            (Some(first), Some(side)) => side == first,
            _ => rng.coin(),
        };
        if goes_first {
            Check::Execute
        } else {
            Check::ExecuteFirst(racing)
        }
    }

    fn handler_fire(&mut self, _ctx: TaskId, op: &Op, view: &View<'_>) -> Option<u8> {
        if !view.targets.is_race_site(op) {
            return None;
        }
        let i = self.handler_side(op, view)?;
        self.fired = true;
        Some(i)
    }
}

impl RaceFuzzer {
    /// The source whose handler holds the other side of the pair `op` is on, if it was not
    /// fired yet.
    fn handler_side(&self, op: &Op, view: &View<'_>) -> Option<u8> {
        if self.fired {
            return None;
        }
        let side = view.targets.race_side(op.site()?)?;
        view.targets.fire_source(1 - side.min(1))
    }
}
