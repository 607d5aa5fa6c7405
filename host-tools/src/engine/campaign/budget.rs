//! Bookkeeping: the budget. A run budget cuts each wave's jobs to the runs left
//! (deterministic); a time budget stops starting runs past its deadline; either marks the
//! campaign `budget` when hit.

use super::Campaign;
use super::jobs::Job;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// When the campaign stops at the latest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// When nothing new is left to try.
    Unlimited,
    /// After this many runs (Phase I and II); deterministic.
    Runs(u64),
    /// After this much wall time (runs in flight finish; not deterministic).
    Time(Duration),
}

impl Campaign<'_> {
    /// Cuts `jobs` (the next of a wave) to the runs a run budget leaves (the last job
    /// shortened); marks the budget hit when none are left after them.
    pub(super) fn fit_budget(&self, jobs: &mut Vec<Job>) {
        if let Budget::Runs(n) = self.settings.budget {
            let left = n.saturating_sub(self.runs_done.load(Ordering::SeqCst));
            let mut room = left;
            jobs.retain_mut(|j| {
                if room == 0 {
                    return false;
                }
                j.chain = j.chain.min(u32::try_from(room).unwrap_or(u32::MAX));
                room -= u64::from(j.chain);
                true
            });
            if room == 0 {
                self.budget_hit.store(true, Ordering::SeqCst);
            }
        }
    }

    /// `runs`, or as many as a run budget still leaves.
    pub(super) fn within_budget(&self, runs: u64) -> u64 {
        match self.settings.budget {
            Budget::Runs(n) => runs.min(n.saturating_sub(self.runs_done.load(Ordering::SeqCst))),
            _ => runs,
        }
    }

    /// When a time budget ends.
    pub(super) fn deadline(&self) -> Option<Instant> {
        match self.settings.budget {
            Budget::Time(d) => Some(self.started + d),
            _ => None,
        }
    }

    /// Stopped by Ctrl-C, the budget, or (`until_failure`) a failing run.
    pub(super) fn halted(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
            || self.budget_hit.load(Ordering::SeqCst)
            || self.failure_hit.load(Ordering::SeqCst)
    }
}
