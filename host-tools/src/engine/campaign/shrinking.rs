//! Shrinking, after the timelines: each failure and each confirmed bug gets the shortest
//! schedule found that gives it again (`engine::shrink`), its figures against the recorded
//! run's, its timeline and a command that replays it. The runs are counted apart
//! (`runs.shrink`), outside the campaign's budget but within a share of its own
//! ([`SHRINK_SHARE`]), and so is their wall time (`timing.shrink_seconds`).

use super::Campaign;
use super::timelines::{failure_timeline, replay_config, timeline};
use crate::engine::pool::run_all;
use crate::engine::shrink::{
    MAX_RUNS, Recorded, Same, Shrinking, parse_schedule, schedule_text, shrink,
};
use crate::error::JostleError;
use crate::output::report::{Shrunk, shrunk_command};
use jostle_kernel::Config;
use jostle_kernel::config::Breakpoint;

/// Shrinking's share of a campaign: at most one run in this many of its testing runs (Phase
/// I, Phase II and search), so that a campaign with shrinking takes at most about a quarter
/// longer than without it (a shrink run is a results-level run like most Phase II runs) ...
pub const SHRINK_SHARE: u64 = 4;
/// ... but at least this many runs in all, so that a short campaign still shrinks its few
/// findings.
pub const SHRINK_FLOOR: u64 = 100;
/// The fewest runs a finding gets, whatever is left of the budget.
pub const SHRINK_LEAST: u64 = 10;

/// Which finding of the report.
#[derive(Clone, Copy)]
enum Which {
    Failure(usize),
    Bug(usize),
}

impl Campaign<'_> {
    /// Shrinks every failure (not the suspected livelocks: a run stopped by a limit has no
    /// shorter version that means the same) and every confirmed bug not shrunk yet. The
    /// failures go first, each on a worker; then the bugs, each trying the failures' shrunk
    /// schedules first (a harmful bug's run is often its failure's). Each wave's results are
    /// taken in order, so the report does not depend on -j.
    pub(super) fn shrink_findings(&mut self) -> Result<(), JostleError> {
        if !self.settings.shrink {
            return Ok(());
        }
        let started = std::time::Instant::now();
        let mut failures: Vec<(Which, Config, Same)> = Vec::new();
        for (i, f) in self.report.failures.iter().enumerate() {
            if f.shrunk.is_none() && f.is_failure() {
                let config = replay_config(&f.first, &self.settings.base, None)?;
                failures.push((Which::Failure(i), config, Same::Failure(f.id.clone())));
            }
        }
        let mut bugs: Vec<(Which, Config, Same)> = Vec::new();
        for (i, b) in self.report.bugs.iter().enumerate() {
            if b.shrunk.is_some() {
                continue;
            }
            let (r, harmful) = match (&b.first_harmful, &b.first_confirmed) {
                (Some(r), _) => (r, true),
                (None, Some(r)) => (r, false),
                (None, None) => continue,
            };
            let config = replay_config(r, &self.settings.base, None)?;
            bugs.push((Which::Bug(i), config, Same::Bug { harmful }));
        }
        if failures.is_empty() && bugs.is_empty() {
            return Ok(());
        }
        self.set_phase("shrinking");
        let mut budget = (self.report.runs.total() / SHRINK_SHARE).max(SHRINK_FLOOR);
        let result = self
            .shrink_wave(&failures, &[], &mut budget)
            .and_then(|()| {
                let hints: Vec<Vec<Breakpoint>> = self
                    .report
                    .failures
                    .iter()
                    .filter_map(|f| f.shrunk.as_ref())
                    .filter(|s| s.replay.is_some())
                    .filter_map(|s| parse_schedule(&s.schedule).ok())
                    .collect();
                self.shrink_wave(&bugs, &hints, &mut budget)
            });
        self.shrink_seconds += started.elapsed().as_secs_f64();
        result
    }

    /// Shrinks each finding of `todo` on the workers (one finding per worker: each shrink is
    /// a sequence of runs, each depending on the last), trying `hints` first, each within an
    /// equal part of what is left of the `budget` of runs (at least [`SHRINK_LEAST`], at
    /// most [`MAX_RUNS`]); the runs made come off the budget.
    fn shrink_wave(
        &mut self,
        todo: &[(Which, Config, Same)],
        hints: &[Vec<Breakpoint>],
        budget: &mut u64,
    ) -> Result<(), JostleError> {
        if todo.is_empty() {
            return Ok(());
        }
        let each = (*budget / todo.len() as u64).clamp(SHRINK_LEAST, u64::from(MAX_RUNS)) as u32;
        let transport = self.transport;
        let stop = &self.stop;
        let replays = &self.replays;
        let id_of = |which: &Which| match *which {
            Which::Failure(i) => &self.report.failures[i].id,
            Which::Bug(i) => &self.report.bugs[i].id,
        };
        let results = run_all(
            todo,
            self.settings.jobs,
            stop,
            |(which, config, same)| {
                let recorded = Recorded {
                    config,
                    replayed: replays.get(id_of(which)).map(|o| &**o),
                };
                shrink(transport, &recorded, same, hints, each, stop)
            },
            |_| {},
        );
        for ((which, _, _), r) in todo.iter().zip(results) {
            let Some(r) = r else { break };
            let s = r?;
            self.report.runs.shrink += u64::from(s.runs);
            *budget = budget.saturating_sub(u64::from(s.runs));
            let id = match *which {
                Which::Failure(i) => self.report.failures[i].id.clone(),
                Which::Bug(i) => self.report.bugs[i].id.clone(),
            };
            let shrunk = self.shrunk(&s, &id, matches!(which, Which::Failure(_)));
            match *which {
                Which::Failure(i) => self.report.failures[i].shrunk = Some(shrunk),
                Which::Bug(i) => self.report.bugs[i].shrunk = Some(shrunk),
            }
        }
        Ok(())
    }

    /// The report's record of one shrinking.
    fn shrunk(&self, s: &Shrinking, id: &str, failure: bool) -> Shrunk {
        let mut out = Shrunk {
            original_preemptions: s.original.preemptions,
            original_switches: s.original.switches,
            original_steps: s.original_steps,
            original_entries: s.original.entries.len() as u32,
            runs: s.runs,
            note: s.note.clone(),
            ..Shrunk::default()
        };
        if let Some((entries, outcome)) = &s.shrunk {
            out.schedule = schedule_text(entries);
            out.preemptions = s.figures.preemptions;
            out.switches = s.figures.switches;
            out.steps = outcome.steps;
            out.timeline = if failure {
                failure_timeline(outcome)
            } else {
                timeline(outcome)
            };
            let mut replay = self.replay_of(0, outcome, id);
            replay.schedule = Some(outcome.schedule_digest());
            replay.command = shrunk_command(
                &self.settings.firmware_command,
                &self.settings.report_dir,
                id,
            );
            out.replay = Some(replay);
        }
        out
    }
}
