//! Bookkeeping: the report. Each finished run is counted into its bug's attempt (its
//! verdict, panic, first confirming and harmful runs), new candidates become bugs, and the
//! report (with report.html and prediction.json) is written after every wave.

use super::Campaign;
use super::jobs::{Job, Work};
use crate::engine::targeting::strategy_name;
use crate::error::JostleError;
use crate::output::report::{Attempt, Bug, Failure, Replay, ReplayBreakpoint};
use crate::trace::failure::signature;
use crate::trace::run::{Outcome, RunOutcome};
use jostle_checker::Candidate;
use jostle_kernel::TraceLevel;
use jostle_kernel::config::StrategyId;
use jostle_kernel::targets::{role, role_of};
use std::sync::atomic::Ordering;

impl Campaign<'_> {
    /// Counts one finished run.
    pub(super) fn take(&mut self, job: &Job, index: u64, outcome: &RunOutcome) {
        let verdict = outcome.outcome.map_or("none", Outcome::name).to_owned();
        let handle = match job.work {
            Work::PhaseOne => {
                self.report.runs.phase1 += 1;
                self.phase1_events += outcome.events.len() as u64;
                self.phase1_max_steps = self.phase1_max_steps.max(outcome.steps);
                // SURW's profiling run is Phase I's first (the artifact's one dry run).
                if index == 0
                    && self
                        .settings
                        .portfolio
                        .iter()
                        .any(|p| p.0 == StrategyId::Surw)
                {
                    self.surw_profile = Some(crate::engine::surw::Profile::of(outcome));
                }
                *self.report.runs.phase1_verdicts.entry(verdict).or_default() += 1;
                self.feed(outcome);
                self.record_failure(job, index, outcome);
                return;
            }
            Work::Search => {
                self.report.runs.search += 1;
                *self.report.runs.search_verdicts.entry(verdict).or_default() += 1;
                self.record_failure(job, index, outcome);
                return;
            }
            Work::Candidate(handle) => handle,
        };
        // A DrFinder chain's next run starts from this one's relations.
        if outcome.config.strategy == StrategyId::DrFinder
            && let Some(chain) = self.chains.get_mut(&handle)
        {
            chain.next = crate::engine::confirm::with_relations_of(outcome, &chain.base);
            chain.taken += 1;
        }
        // The report keeps its bugs sorted, so a bug's place moves as candidates arrive.
        let bug = self.bug_at(handle);
        if outcome.config.trace == TraceLevel::Full {
            self.feed(outcome);
        }
        if index == 0 && outcome.config.strategy != StrategyId::DrFinder && outcome.confirmed() {
            self.real_at_first.insert(handle);
        }
        if !job.tally {
            return;
        }
        self.report.runs.phase2 += 1;
        self.record_failure(job, index, outcome);
        let strategy = strategy_name(outcome.config.strategy).to_owned();
        let (confirmed, harmful) = (outcome.confirmed(), outcome.harmful());
        let b = &self.report.bugs[bug];
        let first_confirmed = (confirmed && b.first_confirmed.is_none())
            .then(|| self.replay_of(index, outcome, &b.id));
        if confirmed
            && b.first_confirmed.is_some()
            && self.more_confirming.get(&bug).map_or(0, |m| m.0.len()) < super::MORE_CONFIRMING
        {
            let r = self.replay_of(index, outcome, &b.id);
            self.more_confirming.entry(bug).or_default().0.push(r);
        }
        let first_harmful =
            (harmful && b.first_harmful.is_none()).then(|| self.replay_of(index, outcome, &b.id));
        let b = &mut self.report.bugs[bug];
        if b.attempts.last().is_none_or(|a| a.strategy != strategy) {
            b.attempts.push(Attempt {
                strategy: strategy.clone(),
                ..Attempt::default()
            });
        }
        let a = b.attempts.last_mut().expect("pushed");
        a.runs += 1;
        a.confirmed += u64::from(confirmed);
        a.harmful += u64::from(harmful);
        *a.verdicts.entry(verdict.clone()).or_default() += 1;
        if let Some(p) = &outcome.panic {
            let m = p.message.clone().unwrap_or_else(|| "(no message)".into());
            *a.panics.entry(m).or_default() += 1;
        }
        if first_confirmed.is_some() {
            b.first_confirmed = first_confirmed;
        }
        if first_harmful.is_some() {
            b.first_harmful = first_harmful;
        }
        b.settle();
    }

    /// Everything needed to replay run `index` (the `index`-th of its kind), named `id` in
    /// the report's replay command.
    pub(super) fn replay_of(&self, index: u64, outcome: &RunOutcome, id: &str) -> Replay {
        Replay {
            index,
            seed: outcome.config.seed,
            strategy: strategy_name(outcome.config.strategy).to_owned(),
            params: outcome.config.params,
            livelock_bound: outcome.config.livelock_bound,
            step_limit: outcome.config.step_limit,
            irq_horizon: outcome.config.irq_horizon,
            args: outcome.config.args.to_vec(),
            firing_bounds: outcome.config.firing_bounds.to_vec(),
            breakpoints: outcome
                .config
                .breakpoints
                .iter()
                .map(|bp| ReplayBreakpoint {
                    // A SURW weight and a schedule's entry are no sites: they have no
                    // location (and are never mapped).
                    location: if matches!(
                        role_of(bp.aux),
                        role::WEIGHT | role::SWITCH | role::FIRE_AT | role::POLL_AT
                    ) {
                        String::new()
                    } else {
                        crate::engine::predict::site_text(&self.prediction, bp.site)
                    },
                    site: bp.site,
                    aux: bp.aux,
                })
                .collect(),
            verdict: outcome.outcome.map_or("none", Outcome::name).to_owned(),
            schedule: None,
            command: crate::output::report::replay_command(
                &self.settings.firmware_command,
                &self.settings.report_dir,
                id,
            ),
        }
    }

    /// Counts a run that failed (or is suspect) into the finding of its signature, whatever
    /// the phase or strategy and whether or not it confirmed its candidate.
    fn record_failure(&mut self, job: &Job, index: u64, outcome: &RunOutcome) {
        let Some(sig) = signature(outcome) else {
            return;
        };
        let id = sig.id();
        let order = [self.wave, job.place, index];
        let candidate = match job.work {
            Work::Candidate(h) => Some(self.handles[h].clone()),
            Work::PhaseOne | Work::Search => None,
        };
        let followed = candidate.clone().filter(|_| outcome.harmful());
        let at = match self.report.failures.iter().position(|f| f.id == id) {
            Some(at) => at,
            None => {
                let first = self.replay_of(index, outcome, &id);
                self.report.failures.push(Failure {
                    id,
                    class: sig.class.name().to_owned(),
                    verdict: sig.verdict,
                    site: sig.site,
                    message: sig.message,
                    example: sig.example,
                    first,
                    order,
                    ..Failure::default()
                });
                self.report.failures.len() - 1
            }
        };
        let f = &mut self.report.failures[at];
        f.count += 1;
        if f.is_failure() && self.report.runs.first_failure.is_none() {
            // Runs are taken in job order, so this count does not depend on -j.
            self.report.runs.first_failure = Some(self.report.runs.total());
            self.report.runs.first_failure_in = Some(
                match job.work {
                    Work::PhaseOne => "phase1",
                    Work::Candidate(_) => "phase2",
                    Work::Search => "search",
                }
                .into(),
            );
            if self.settings.until_failure {
                self.failure_hit.store(true, Ordering::SeqCst);
            }
        }
        match (job.work, candidate) {
            (Work::Search, _) => f.search += 1,
            (_, None) => f.phase1 += 1,
            (_, Some(c)) => *f.during.entry(c).or_default() += 1,
        }
        if let Some(c) = followed {
            *f.after_confirming.entry(c).or_default() += 1;
        }
    }

    /// A stable handle on `candidate`'s bug for jobs (its place in the report moves: the
    /// report keeps its bugs sorted while new candidates arrive); added when new.
    pub(super) fn bug_handle(&mut self, candidate: &Candidate) -> usize {
        self.sync_bugs();
        match self.handles.iter().position(|id| *id == candidate.id) {
            Some(h) => h,
            None => {
                self.handles.push(candidate.id.clone());
                self.handles.len() - 1
            }
        }
    }

    /// The report's place now of the bug with handle `handle`.
    pub(super) fn bug_at(&self, handle: usize) -> usize {
        let id = &self.handles[handle];
        self.report
            .bugs
            .iter()
            .position(|b| b.id == *id)
            .expect("every handle's bug is in the report")
    }

    /// Adds the prediction's new candidates to the report and refreshes what the prediction
    /// says of the known ones; keeps the report sorted like the prediction (kind, id).
    pub(super) fn sync_bugs(&mut self) {
        for c in &self.prediction.candidates {
            let sites: Vec<String> = c
                .sites
                .iter()
                .map(|s| crate::engine::predict::site_text(&self.prediction, *s))
                .collect();
            let mut analyses: Vec<String> = c
                .evidence
                .analyses
                .iter()
                .map(|a| format!("{a:?}"))
                .collect();
            analyses.sort();
            match self.report.bugs.iter_mut().find(|b| b.id == c.id) {
                Some(b) => {
                    b.sites = sites;
                    b.predicted_by = analyses;
                }
                None => {
                    let mut b = Bug {
                        id: c.id.clone(),
                        kind: c.kind.name().to_owned(),
                        sites,
                        predicted_by: analyses,
                        ..Bug::default()
                    };
                    b.settle();
                    self.report.bugs.push(b);
                }
            }
        }
        self.report
            .bugs
            .sort_by(|a, b| (&a.kind, &a.id).cmp(&(&b.kind, &b.id)));
        let real = self.report.confirmed().count();
        let harmful = self.report.bugs.iter().filter(|b| b.harmful > 0).count();
        self.counts[0].store(self.report.bugs.len(), Ordering::SeqCst);
        self.counts[1].store(real, Ordering::SeqCst);
        self.counts[2].store(harmful, Ordering::SeqCst);
        self.counts[3].store(self.report.failed().count(), Ordering::SeqCst);
    }

    pub(super) fn finish_timing(&mut self) {
        let wall = self.started.elapsed().as_secs_f64();
        let runs = self.report.runs.made();
        self.report.timing = crate::output::report::Timing {
            wall_seconds: (wall * 1000.0).round() / 1000.0,
            runs_per_second: (runs as f64 / wall.max(1e-9) * 10.0).round() / 10.0,
            jobs: self.settings.jobs,
            phase1_events: self.phase1_events,
            phase1_seconds: (self.phase1_seconds * 1000.0).round() / 1000.0,
            shrink_seconds: (self.shrink_seconds * 1000.0).round() / 1000.0,
        };
    }

    /// Writes report.json, report.html and prediction.json.
    pub(super) fn write(&mut self) -> Result<(), JostleError> {
        self.last_write = std::time::Instant::now();
        self.report.sort_failures();
        self.finish_timing();
        let dir = &self.settings.report_dir;
        let written = self
            .report
            .write_json(dir)
            .and_then(|()| {
                crate::output::report::write_atomic(
                    &dir.join("report.html"),
                    crate::output::html::render(&self.report).as_bytes(),
                )
            })
            .and_then(|()| {
                crate::engine::predict::write_prediction(
                    &self.prediction,
                    &dir.join("prediction.json"),
                )
            });
        self.written = written.is_ok();
        written
    }

    /// Whether the report directory holds the report as it is now (its last write went
    /// through: not on a full disk).
    pub fn written(&self) -> bool {
        self.written
    }
}
