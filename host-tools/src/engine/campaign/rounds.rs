//! The loop: Phase I's first run, then rounds of Phase II (each candidate with the
//! strategy of its kind, then DrFinder for the races that stayed unconfirmed; the rest of
//! Phase I after round 1's first runs; the timelines of the bugs the round confirmed, fed to
//! prediction), then search for the rest of a budget, then the remaining timelines; and why
//! the campaign stopped.

use super::{Campaign, Status};
use crate::engine::targeting::strategy_for;
use crate::error::JostleError;
use std::sync::atomic::Ordering;

impl Campaign<'_> {
    /// Runs the campaign; `progress` hears of every finished run. The report is written
    /// after Phase I and after every wave of Phase II, so an interrupted campaign (or one
    /// whose run failed) leaves what it finished; the error, if any, comes after that write.
    pub fn run(&mut self, progress: &(dyn Fn(&Status) + Sync)) -> Result<(), JostleError> {
        std::fs::create_dir_all(&self.settings.report_dir).map_err(|e| {
            JostleError::io(
                format!("creating {}", self.settings.report_dir.display()),
                e,
            )
        })?;
        let result = self.rounds(progress);
        // An error stops the campaign whatever else was under way (a budget is marked hit
        // when its last runs are planned, before they run).
        self.report.stopped = if self.stop.load(Ordering::SeqCst) {
            "interrupted"
        } else if result.is_err() {
            "error"
        } else if self.failure_hit.load(Ordering::SeqCst) {
            "failure"
        } else if self.budget_hit.load(Ordering::SeqCst) {
            "budget"
        } else if self.rounds_hit {
            "rounds"
        } else {
            "done"
        }
        .into();
        self.finish_timing();
        self.write()?;
        result?;
        if !self.stop.load(Ordering::SeqCst) {
            self.report.tested()?;
        }
        Ok(())
    }

    fn rounds(&mut self, progress: &(dyn Fn(&Status) + Sync)) -> Result<(), JostleError> {
        // Phase I's first run alone: its trace gives the first candidates, whose first runs
        // come before the rest of Phase I (a bug predicted from one run is tried at once).
        let phase1_runs = u64::from(self.settings.phase1_runs);
        self.phase1(0..1.min(phase1_runs), progress)?;
        let mut phase1_rest = 1.min(phase1_runs)..phase1_runs;
        self.settings.base.livelock_bound = self.settings.livelock_bound.unwrap_or_else(|| {
            super::livelock_bound_for(self.phase1_max_steps, self.settings.base.step_limit)
        });
        self.report.settings.livelock_bound = self.settings.base.livelock_bound;
        self.settings.base.irq_horizon = super::irq_horizon_for(self.phase1_max_steps);
        let mut exhausted = false;
        let mut round = 1;
        while round <= self.settings.max_rounds && !self.halted() {
            // Each candidate with the strategy of its kind.
            let queue = self.untried(|c| Some(strategy_for(c.kind)));
            if queue.is_empty() {
                if phase1_rest.is_empty() {
                    exhausted = true;
                    break;
                }
                // Run 0 predicted nothing: round 1 starts from the whole of Phase I.
                self.phase1(std::mem::replace(&mut phase1_rest, 0..0), progress)?;
                continue;
            }
            self.set_phase(&format!("phase II round {round}"));
            let (mut first, later) = self.phase2_plans(&queue)?;
            self.execute(&mut first, progress)?;
            if !phase1_rest.is_empty() {
                self.phase1(std::mem::replace(&mut phase1_rest, 0..0), progress)?;
                self.set_phase(&format!("phase II round {round}"));
            }
            // Past each candidate's first run, search (under a budget) takes as many runs as
            // the candidates do.
            self.execute(&mut self.with_search(later), progress)?;
            // DrFinder for the races whose first RaceFuzzer run did not make them real, when
            // may-trigger relations exist (a race hidden behind a lock hand-off).
            if self.halted() {
                break;
            }
            let fallback = self.drfinder_fallback();
            let (mut first, later) = self.phase2_plans(&fallback)?;
            self.execute(&mut first, progress)?;
            self.execute(&mut self.with_search(later), progress)?;
            // The bugs this round made real, replayed at full trace (their timelines, made
            // now rather than at the end): a run that made one real may have taken a path no
            // earlier trace showed (racebench 031: a handler's 0 between two reads leads to
            // a third read), so prediction learns from it for the next round.
            if !self.stop.load(Ordering::SeqCst) {
                for outcome in self.bug_timelines()? {
                    self.feed(&outcome);
                }
                for outcome in self.more_confirming_traces()? {
                    self.feed(&outcome);
                }
            }
            round += 1;
        }
        // Without rounds (--max-rounds 0), Phase I still makes all its runs.
        if !self.halted() {
            self.phase1(phase1_rest, progress)?;
        }
        if !exhausted && !self.halted() && self.has_untried() {
            self.rounds_hit = true;
        }
        // The rest of a budget: undirected search, for what no analysis predicted.
        if !self.halted() {
            self.search(progress)?;
        }
        // A budget still gets its timelines (one short replay per confirmed bug); Ctrl-C
        // does not wait for them.
        if !self.stop.load(Ordering::SeqCst) {
            self.timelines()?;
        }
        Ok(())
    }
}
