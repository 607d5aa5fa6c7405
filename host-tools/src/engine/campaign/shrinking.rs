//! Shrinking, after the timelines: each failure and each confirmed bug gets the shortest
//! schedule found that gives it again (`engine::shrink`), its figures against the recorded
//! run's, its timeline and a command that replays it. The runs are counted apart
//! (`runs.shrink`), outside the budget.

use super::Campaign;
use super::timelines::{failure_timeline, replay_config, timeline};
use crate::engine::pool::run_all;
use crate::engine::shrink::{MAX_RUNS, Same, Shrinking, schedule_text, shrink};
use crate::error::JostleError;
use crate::output::report::{Shrunk, shrunk_command};
use jostle_kernel::Config;

/// Which finding of the report.
#[derive(Clone, Copy)]
enum Which {
    Failure(usize),
    Bug(usize),
}

impl Campaign<'_> {
    /// Shrinks every failure (not the suspected livelocks: a run stopped by a limit has no
    /// shorter version that means the same) and every confirmed bug not shrunk yet.
    pub(super) fn shrink_findings(&mut self) -> Result<(), JostleError> {
        if !self.settings.shrink {
            return Ok(());
        }
        let mut todo: Vec<(Which, Config, Same)> = Vec::new();
        for (i, f) in self.report.failures.iter().enumerate() {
            if f.shrunk.is_none() && f.is_failure() {
                let config = replay_config(&f.first, &self.settings.base, None)?;
                todo.push((Which::Failure(i), config, Same::Failure(f.id.clone())));
            }
        }
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
            todo.push((Which::Bug(i), config, Same::Bug { harmful }));
        }
        if todo.is_empty() {
            return Ok(());
        }
        self.set_phase("shrinking");
        let transport = self.transport;
        let stop = &self.stop;
        // One finding per worker: each shrink is a sequence of runs, each depending on the
        // last, so the results do not depend on -j.
        let results = run_all(
            &todo,
            self.settings.jobs,
            stop,
            |(_, config, same)| shrink(transport, config, same, MAX_RUNS, stop),
            |_| {},
        );
        for ((which, _, _), r) in todo.iter().zip(results) {
            let Some(r) = r else { break };
            let s = r?;
            self.report.runs.shrink += u64::from(s.runs);
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
