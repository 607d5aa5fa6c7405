//! Replay: run a recorded configuration again and show the interleaving around the bug,
//! each operation with its source line.

use crate::campaign::replay_config;
use crate::error::JostleError;
use crate::report::{Bug, Replay, Report};
use crate::run::{RunOutcome, describe, is_step};
use crate::runner::Runner;
use jostle_kernel::{Config, Event, TraceLevel};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The bug `id` of `report` and the run to replay (its first harmful run, else its first
/// confirming one).
pub fn find_bug<'r>(report: &'r Report, id: &str) -> Result<(&'r Bug, &'r Replay), JostleError> {
    let bug = report
        .bugs
        .iter()
        .find(|b| b.id == id)
        .ok_or_else(|| JostleError::BadReport(format!("no bug {id} in the report")))?;
    let replay = bug
        .first_harmful
        .as_ref()
        .or(bug.first_confirmed.as_ref())
        .ok_or_else(|| {
            JostleError::BadReport(format!(
                "bug {id} was never confirmed: there is no run to replay"
            ))
        })?;
    Ok((bug, replay))
}

/// The full-trace configuration that replays `r` on `runner`'s image: site ids as recorded
/// when the image is the report's, else found again from each breakpoint's `file:line:col`.
pub fn config_for(report: &Report, r: &Replay, runner: &Runner) -> Result<Config, JostleError> {
    let same = crate::predict::fingerprint(runner.path())? == report.firmware.fingerprint;
    let base = Config {
        trace: TraceLevel::Full,
        ..Config::default()
    };
    let space = runner.space();
    let resolve = |location: &str| space.ids(location);
    let config = if same {
        replay_config(r, &base, None)
    } else {
        replay_config(r, &base, Some(&resolve))
    };
    Ok(Config {
        trace: TraceLevel::Full,
        ..config
    })
}

/// Checks that a replay shows what the report recorded: the same verdict and the bug made
/// real again.
/// Checks that `outcome` reproduces the recorded run `r` of `bug`: confirmed again, the same
/// verdict, and, on the campaign's own image (`same_image`), the same interleaving.
pub fn check_reproduced(
    bug: &Bug,
    r: &Replay,
    outcome: &RunOutcome,
    same_image: bool,
) -> Result<(), JostleError> {
    let verdict = outcome
        .outcome
        .map_or("none", crate::run::Outcome::name)
        .to_owned();
    if !outcome.confirmed() || verdict != r.verdict {
        return Err(JostleError::NotReproduced(format!(
            "{} {} (seed {}): the report says confirmed with verdict `{}`; the replay gave confirmed={} verdict `{verdict}`",
            bug.kind,
            bug.id,
            r.seed,
            r.verdict,
            outcome.confirmed()
        )));
    }
    if let Some(want) = r.schedule.as_ref().filter(|_| same_image) {
        let got = outcome.schedule_digest();
        if &got != want {
            return Err(JostleError::NotReproduced(format!(
                "{} {} (seed {}): the replay's interleaving differs from the campaign's (schedule {got}, recorded {want})",
                bug.kind, bug.id, r.seed
            )));
        }
    }
    Ok(())
}

/// Prints the steps within `context` steps of the first finding (the whole run when there
/// is none), each with its source line when the file can be read, then the verdict.
pub fn print_around(
    outcome: &RunOutcome,
    context: usize,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let events = &outcome.events;
    let mut step_of = Vec::with_capacity(events.len());
    let mut step = 0usize;
    for e in events {
        if is_step(e) {
            step += 1;
        }
        step_of.push(step);
    }
    let (from, to) = match events.iter().position(|e| outcome.is_targeted_finding(e)) {
        Some(i) => (
            step_of[i].saturating_sub(context),
            step_of[i].saturating_add(context),
        ),
        None => (0, usize::MAX),
    };
    let mut sources = Sources::default();
    writeln!(
        out,
        "{:>5}  {:<4}  {:<34}  site",
        "step", "task", "operation"
    )?;
    for (e, &s) in events.iter().zip(&step_of) {
        if s < from || s > to || matches!(e, Event::RunStart { .. } | Event::RunEnd { .. }) {
            continue;
        }
        let marker = if outcome.is_targeted_finding(e) {
            ">>"
        } else {
            "  "
        };
        let task = e.task().map_or("-".into(), |t| format!("t{t}"));
        let site = e.site().map(|s| outcome.site_text(s)).unwrap_or_default();
        let code = sources
            .line(&site)
            .map(|l| format!("  | {}", l.trim()))
            .unwrap_or_default();
        writeln!(
            out,
            "{marker}{:>3}  {task:<4}  {:<34}  {site}{code}",
            if is_step(e) {
                s.to_string()
            } else {
                "-".into()
            },
            describe(e, |s| outcome.site_text(s))
        )?;
    }
    writeln!(out, "{}", outcome.verdict_line())
}

/// Source files read so far (a missing file is remembered as missing).
#[derive(Default)]
struct Sources {
    files: HashMap<PathBuf, Option<Vec<String>>>,
}

impl Sources {
    /// The text of `file:line:col`'s line.
    fn line(&mut self, site: &str) -> Option<String> {
        let (file, line, _) = crate::targeting::parse_location(site)?;
        let lines = self.files.entry(PathBuf::from(file)).or_insert_with(|| {
            std::fs::read_to_string(Path::new(file))
                .ok()
                .map(|t| t.lines().map(str::to_owned).collect())
        });
        lines.as_ref()?.get(line.checked_sub(1)? as usize).cloned()
    }
}
