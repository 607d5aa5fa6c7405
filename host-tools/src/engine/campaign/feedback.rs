//! Prediction and feedback: every full-trace run (Phase I, and each candidate's first
//! Phase II run) is analysed and merged into the prediction; what it adds is tried in the
//! next round.

use super::Campaign;
use crate::engine::predict::{Trace, predict_trace};
use crate::engine::targeting::strategy_for;
use crate::trace::run::RunOutcome;
use jostle_checker::Candidate;
use jostle_kernel::config::StrategyId;

impl Campaign<'_> {
    /// Analyses a full trace and merges what it predicts.
    pub(super) fn feed(&mut self, outcome: &RunOutcome) {
        let p = predict_trace(&Trace::of_run(outcome), self.traces, &self.settings.options);
        self.traces += 1;
        self.prediction.merge(p);
    }

    /// Are there candidates whose matching strategy has not been tried?
    pub(super) fn has_untried(&self) -> bool {
        self.prediction.candidates.iter().any(|c| {
            !self
                .tried
                .contains(&(c.id.clone(), strategy_for(c.kind) as u8))
        })
    }

    /// The candidates (and strategies) not tried yet, in prediction order, except that
    /// redundant-write races go last ([`Candidate::redundant_writes`]: either order of the
    /// two writes leaves the same value, so they are the likeliest to be benign, and each
    /// one tried first delays every real bug behind it by a run per tier).
    pub(super) fn untried(
        &mut self,
        strategy: impl Fn(&Candidate) -> Option<StrategyId>,
    ) -> Vec<(Candidate, StrategyId)> {
        let mut queue = Vec::new();
        for c in &self.prediction.candidates {
            if let Some(s) = strategy(c)
                && self.tried.insert((c.id.clone(), s as u8))
            {
                queue.push((c.clone(), s));
            }
        }
        queue.sort_by_key(|(c, _)| c.redundant_writes());
        queue
    }
}
