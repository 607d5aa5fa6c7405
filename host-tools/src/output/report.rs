//! The campaign report: what is real, what is harmful, how likely, and how to replay it.
//!
//! `report.json` follows [`REPORT_SCHEMA`] (documented in the crate README). Everything in
//! it except the `timing` object is a function of the firmware, the settings and the seeds,
//! so two campaigns that differ only in the number of workers write equal reports once
//! `timing` is removed. [`merge`](super::merge::merge) combines shard reports into the report
//! of the whole.

use crate::error::JostleError;
use crate::trace::failure::one_line;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// Version of the `report.json` schema.
pub const REPORT_SCHEMA: u32 = 2;

/// A campaign's report.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`REPORT_SCHEMA`].
    pub schema_version: u32,
    /// The firmware: how the command line named it, and its fingerprint (file name and
    /// FNV-1a 64 of the ELF).
    pub firmware: FirmwareRef,
    /// The settings every shard of one campaign shares.
    pub settings: Settings,
    /// The shards merged into this report (`[i, n]` each; one entry for a single shard).
    pub shards: Vec<[u32; 2]>,
    /// Why the campaign stopped: `done` (nothing new to try), `budget`, `interrupted`.
    pub stopped: String,
    /// Phase I runs (Random, full trace) and Phase II runs made.
    pub runs: RunCounts,
    /// Every candidate predicted, confirmed or not, sorted by (kind, id).
    pub bugs: Vec<Bug>,
    /// Every run that failed (or is suspected of a livelock), whatever found it, grouped by
    /// signature; sorted by class (failures first), then first occurrence.
    pub failures: Vec<Failure>,
    /// Wall-clock figures (the only part that differs between equal campaigns).
    pub timing: Timing,
}

/// How to name and recognise the firmware.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirmwareRef {
    /// The firmware arguments of the `jostle` command line (`path.elf` or `-p P --bin B`).
    pub command: String,
    /// `name@fnv1a64` of the ELF.
    pub fingerprint: String,
}

/// Campaign settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Base seed.
    pub seed: u64,
    /// Firmware arguments.
    pub args: Vec<u32>,
    /// Phase I runs.
    pub phase1_runs: u32,
    /// Phase II runs per candidate and strategy.
    pub runs_per_candidate: u32,
    /// The run budget, if any (`--budget N`).
    pub budget_runs: Option<u64>,
    /// Step limit of each run.
    pub step_limit: u32,
    /// Phase II's livelock bound (given, or derived from Phase I's longest run).
    #[serde(default)]
    pub livelock_bound: u32,
}

/// Runs made.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunCounts {
    /// Phase I runs.
    pub phase1: u64,
    /// Phase II runs.
    pub phase2: u64,
    /// Phase I runs per verdict.
    pub phase1_verdicts: BTreeMap<String, u64>,
    /// Search runs (the rest of a budget after the candidates).
    #[serde(default)]
    pub search: u64,
    /// Search runs per verdict.
    #[serde(default)]
    pub search_verdicts: BTreeMap<String, u64>,
    /// Runs spent shrinking the findings' schedules (after the campaign's runs; not part
    /// of [`RunCounts::total`], which the budget and `first_failure` count).
    #[serde(default)]
    pub shrink: u64,
    /// Runs made up to and including the first failing run, in the campaign's order (Phase
    /// I, Phase II, search; the same whatever `-j`): a benchmark's "runs to the first bug".
    /// `None` when no run failed, and in merged reports (shards have no common order).
    #[serde(default)]
    pub first_failure: Option<u64>,
    /// What made the first failing run: `phase1`, `phase2` (a candidate's run) or `search`
    /// (search runs also come between Phase II's later runs). Absent in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failure_in: Option<String>,
}

impl RunCounts {
    /// Every run: Phase I, Phase II and search.
    pub fn total(&self) -> u64 {
        self.phase1 + self.phase2 + self.search
    }

    /// Every run the campaign made on its workers: [`RunCounts::total`] and shrinking's
    /// (the timeline replays, a few per campaign, are not counted).
    pub fn made(&self) -> u64 {
        self.total() + self.shrink
    }
}

/// Wall-clock figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Wall time of the campaign.
    pub wall_seconds: f64,
    /// Runs per second over the whole campaign: every run made ([`RunCounts::made`]) over
    /// the wall time.
    pub runs_per_second: f64,
    /// Workers.
    pub jobs: usize,
    /// Events decoded in Phase I (full trace) and its wall time: Phase I's events per
    /// second, QEMU and decoding included.
    #[serde(default)]
    pub phase1_events: u64,
    /// See `phase1_events`.
    #[serde(default)]
    pub phase1_seconds: f64,
    /// Wall time spent shrinking the findings (part of `wall_seconds`): the shrink share is
    /// this over `wall_seconds`.
    #[serde(default)]
    pub shrink_seconds: f64,
}

/// One candidate bug and what Phase II made of it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bug {
    /// The candidate id (16 hex digits, stable across runs and images).
    pub id: String,
    /// `race`, `atomicity`, `access_atomicity` or `deadlock`.
    pub kind: String,
    /// Its sites as `file:line:col`.
    pub sites: Vec<String>,
    /// The analyses that predicted it.
    pub predicted_by: Vec<String>,
    /// One entry per strategy tried, in the order tried.
    pub attempts: Vec<Attempt>,
    /// Total runs over the attempts.
    pub runs: u64,
    /// Runs that made it real.
    pub confirmed: u64,
    /// Runs in which a failure followed.
    pub harmful: u64,
    /// `real` (confirmed, no failure followed), `harmful`, or `unconfirmed`.
    pub status: String,
    /// Probability that a run of the confirming strategy makes it real, with a 95 % Wilson
    /// score interval: `[p, low, high]`.
    pub probability: [f64; 3],
    /// The run that first made it real, and the first harmful one.
    pub first_confirmed: Option<Replay>,
    /// See `first_confirmed`.
    pub first_harmful: Option<Replay>,
    /// The interleaving of the first confirming run around the bug (full trace).
    pub timeline: Vec<Mark>,
    /// Why Phase II could not target it (e.g. more breakpoints than a block holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// The shortest schedule found that confirms it again (see [`Shrunk`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrunk: Option<Shrunk>,
}

/// Columns the terminal table fits in.
pub const TABLE_WIDTH: usize = 100;

/// `words` on lines of at most `width` columns, each line starting with `indent` (a word
/// longer than a line has one to itself).
fn wrap(words: &[String], indent: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for w in words {
        if !line.is_empty() && line.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if line.is_empty() {
            line.push_str(indent);
        } else {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

impl Bug {
    /// How often a run made it real, in words a person reads at once: `never in 50 runs
    /// (< 0.07)` rather than a probability of 0 with an interval of no width; `not tried`
    /// for a candidate no run aimed at.
    pub fn rate_text(&self) -> String {
        let [p, lo, hi] = self.probability;
        match (self.runs, self.confirmed) {
            (0, _) => "not tried".into(),
            (n, 0) => format!("never in {n} runs (< {hi:.2})"),
            (n, c) if c == n => format!("every run of {n} (> {lo:.2})"),
            _ => format!("{p:.2} [{lo:.2}, {hi:.2}]"),
        }
    }
}

/// Runs of any phase that failed with one signature (see `trace::failure`): a finding
/// whether or not an analysis predicted it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The signature's id (16 hex digits).
    pub id: String,
    /// `failure` (a bug) or `suspected` (a run that never ended: livelock or starvation).
    pub class: String,
    /// `panic`, `deadlock`, `stack_overflow`, `hard_fault`, `handler_blocked`,
    /// `starvation`; or `step_limit`, `timeout`.
    pub verdict: String,
    /// Where (`file:line:col`; the blocked sites of a deadlock; a fault's pc).
    pub site: String,
    /// The message with numbers masked.
    pub message: String,
    /// The message as the first run had it.
    pub example: String,
    /// Runs with this signature.
    pub count: u64,
    /// Of them, Phase I runs (every shard makes Phase I: merged once).
    pub phase1: u64,
    /// Of them, search runs (after the candidates).
    #[serde(default)]
    pub search: u64,
    /// Runs per candidate whose Phase II runs showed it (`candidate id` -> runs).
    pub during: BTreeMap<String, u64>,
    /// Runs per candidate whose confirmation it followed (that candidate is harmful).
    pub after_confirming: BTreeMap<String, u64>,
    /// The first run that showed it (replay it with `first.command`).
    pub first: Replay,
    /// Orders first runs across shards: (wave, candidate's place in it, run index).
    pub order: [u64; 3],
    /// The interleaving before the failure (full-trace replay of `first`).
    pub timeline: Vec<Mark>,
    /// The shortest schedule found that fails the same way (see [`Shrunk`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrunk: Option<Shrunk>,
}

/// A finding's run shrunk (`engine::shrink`): its schedule, delta-debugged to the fewest
/// preemptions and then the fewest other entries that still give the same finding, replayed
/// by the `schedule` strategy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Shrunk {
    /// The entries, comma-separated: `A:n>B` (task A, having run n operations, hands over to
    /// task B), `A:n!i` (interrupt source i fires when context A has run n operations),
    /// `A:n?k` (the dispatcher polls async task k next). Empty: no entry needed.
    pub schedule: String,
    /// Preemptions (switches away from a task that could have gone on) of the shrunk run. A
    /// switch away from a task that never steps again counts as one: the trace does not say
    /// whether it could have gone on (rf_fig1's ERROR1 shows 1 where main, blocked joining,
    /// gave way).
    pub preemptions: u32,
    /// Context switches of the shrunk run (preemptive or forced by blocking).
    pub switches: u32,
    /// Scheduling steps of the shrunk run.
    pub steps: u32,
    /// The same three figures for the original run, and its schedule's entries.
    pub original_preemptions: u32,
    /// See `original_preemptions`.
    pub original_switches: u32,
    /// See `original_preemptions`.
    pub original_steps: u32,
    /// Entries of the original schedule.
    pub original_entries: u32,
    /// Runs spent shrinking this finding.
    pub runs: u32,
    /// The shrunk run (strategy `schedule`; its command replays it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Replay>,
    /// The shrunk run's interleaving before the finding.
    #[serde(default)]
    pub timeline: Vec<Mark>,
    /// Why no shrunk run is given (the schedule did not replay, or it did not fit).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl Failure {
    /// Is it a failure (not a suspected livelock)?
    pub fn is_failure(&self) -> bool {
        self.class == "failure"
    }

    /// How it relates to the candidates, in words.
    pub fn relation(&self) -> String {
        if !self.after_confirming.is_empty() {
            let ids: Vec<&str> = self.after_confirming.keys().map(String::as_str).collect();
            format!("followed the confirmation of {}", ids.join(", "))
        } else if self.during.is_empty() {
            match (self.phase1, self.search) {
                (0, n) if n > 0 => "none (search)".into(),
                (_, 0) => "none (Phase I)".into(),
                _ => "none (Phase I and search)".into(),
            }
        } else {
            let ids: Vec<&str> = self.during.keys().map(String::as_str).collect();
            format!(
                "none (in the runs of {}, which it did not follow)",
                ids.join(", ")
            )
        }
    }
}

/// The runs of one strategy against one bug.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// Strategy name.
    pub strategy: String,
    /// Runs.
    pub runs: u64,
    /// Runs that made the bug real.
    pub confirmed: u64,
    /// Runs in which a failure followed the confirmation.
    pub harmful: u64,
    /// Runs per verdict.
    pub verdicts: BTreeMap<String, u64>,
    /// Panic messages and their counts.
    pub panics: BTreeMap<String, u64>,
}

/// Serde's test for fields written only when set.
pub(crate) fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// Everything needed to replay one run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replay {
    /// Index of the run among the bug's runs of this strategy (orders shards' runs).
    pub index: u64,
    /// Seed.
    pub seed: u64,
    /// Strategy name.
    pub strategy: String,
    /// Strategy parameters of the configuration block.
    pub params: [u32; 4],
    /// Livelock bound.
    pub livelock_bound: u32,
    /// Step limit.
    pub step_limit: u32,
    /// Interrupt horizon (0: the kernel's default; reports before it was recorded).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub irq_horizon: u32,
    /// Firmware arguments.
    pub args: Vec<u32>,
    /// Spontaneous firings per run of the interrupt lines the campaign bounded (`--fire`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub firing_bounds: Vec<jostle_kernel::config::FiringBound>,
    /// The breakpoints: site as `file:line:col` (or `site#id` if unknown), raw site id, role
    /// and index word.
    pub breakpoints: Vec<ReplayBreakpoint>,
    /// The verdict of the run.
    pub verdict: String,
    /// The command that replays it.
    pub command: String,
    /// Digest of the run's interleaving at full trace (FNV-1a 64 of each step's task,
    /// operation and `file:line:col`), set on the run the timeline shows: a replay on the
    /// same image must give exactly this interleaving.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
}

/// A breakpoint of a replay configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayBreakpoint {
    /// `file:line:col`.
    pub location: String,
    /// The site id in the campaign's image.
    pub site: u32,
    /// Role and index (see the kernel's `targets` module).
    pub aux: u32,
}

/// One executed operation (or report) in a bug's timeline.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// Scheduling step (0-based index among executed operations).
    pub step: u64,
    /// Task.
    pub task: u8,
    /// What it did (`read`, `acquire`, ..., or a report such as `race`).
    pub op: String,
    /// `file:line:col`, when it has a site.
    pub site: String,
    /// The memory location or lock it touches, named from the image's symbols (`app::Z`),
    /// when it touches one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub location: String,
    /// The value it read, wrote or left (`7`, `-1`, `true`), when the run traced it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    /// One of the operations that make the bug (racing accesses, the intruding acquire,
    /// the acquires of a deadlock cycle).
    pub highlight: bool,
    /// The task's name, when the firmware named it (an Embassy task's function).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task_name: String,
}

/// A 95 % Wilson score interval for `k` successes in `n` trials: `[p, low, high]`.
pub fn wilson(k: u64, n: u64) -> [f64; 3] {
    if n == 0 {
        return [0.0, 0.0, 1.0];
    }
    let (k, n) = (k as f64, n as f64);
    let z = 1.959_963_984_540_054_f64;
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let center = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    let round = |x: f64| (x * 1e6).round() / 1e6;
    [
        round(p),
        round((center - half).max(0.0)),
        round((center + half).min(1.0)),
    ]
}

impl Bug {
    /// Recomputes the totals, status and probability from the attempts.
    pub fn settle(&mut self) {
        self.runs = self.attempts.iter().map(|a| a.runs).sum();
        self.confirmed = self.attempts.iter().map(|a| a.confirmed).sum();
        self.harmful = self.attempts.iter().map(|a| a.harmful).sum();
        self.status = if self.harmful > 0 {
            "harmful"
        } else if self.confirmed > 0 {
            "real"
        } else {
            "unconfirmed"
        }
        .into();
        // The probability is that of the strategy that confirmed it (the last one tried
        // when none did): a fallback strategy's runs say nothing about the first one.
        let a = self
            .attempts
            .iter()
            .find(|a| a.confirmed > 0)
            .or(self.attempts.last());
        self.probability = a.map_or([0.0, 0.0, 1.0], |a| wilson(a.confirmed, a.runs));
    }
}

impl Shrunk {
    /// Its figures against the original's, and its replay command (`None`: not shrunk).
    pub fn summary(&self) -> Option<(String, &str)> {
        let r = self.replay.as_ref()?;
        let plural = |n: u32| if n == 1 { "" } else { "s" };
        let schedule = if self.schedule.is_empty() {
            "no entry".to_owned()
        } else {
            self.schedule.clone()
        };
        Some((
            format!(
                "{} preemption{}, {} steps (first run: {}, {}); schedule {schedule}",
                self.preemptions,
                plural(self.preemptions),
                self.steps,
                self.original_preemptions,
                self.original_steps
            ),
            &r.command,
        ))
    }
}

impl Report {
    /// Points every replay command at the report in `dir` (after a merge or a move).
    pub fn set_report_dir(&mut self, dir: &Path) {
        for b in &mut self.bugs {
            for r in [&mut b.first_confirmed, &mut b.first_harmful]
                .into_iter()
                .flatten()
            {
                r.command = replay_command(&self.firmware.command, dir, &b.id);
            }
            if let Some(r) = b.shrunk.as_mut().and_then(|s| s.replay.as_mut()) {
                r.command = shrunk_command(&self.firmware.command, dir, &b.id);
            }
        }
        for f in &mut self.failures {
            f.first.command = replay_command(&self.firmware.command, dir, &f.id);
            if let Some(r) = f.shrunk.as_mut().and_then(|s| s.replay.as_mut()) {
                r.command = shrunk_command(&self.firmware.command, dir, &f.id);
            }
        }
    }

    /// The failures proper (not the suspected livelocks).
    pub fn failed(&self) -> impl Iterator<Item = &Failure> {
        self.failures.iter().filter(|f| f.is_failure())
    }

    /// Did any run fail, or any bug prove harmful (the exit code says so)?
    pub fn any_failure(&self) -> bool {
        self.any_harmful() || self.failed().next().is_some()
    }

    /// Refuses a campaign that tested nothing: no run, or no run that reached its end
    /// (every one stopped by the step limit or the wall clock). A failure found is a
    /// result, whatever the other runs did.
    pub fn tested(&self) -> Result<(), JostleError> {
        let runs = self.runs.total();
        if runs == 0 {
            return Err(JostleError::NothingTested(
                "the campaign made no run: nothing was tested (raise --phase1-runs or --budget)"
                    .into(),
            ));
        }
        let mut unended = [0u64; 2];
        let verdicts = [&self.runs.phase1_verdicts, &self.runs.search_verdicts]
            .into_iter()
            .chain(
                self.bugs
                    .iter()
                    .flat_map(|b| b.attempts.iter().map(|a| &a.verdicts)),
            );
        for v in verdicts {
            unended[0] += v.get("step_limit").copied().unwrap_or(0);
            unended[1] += v.get("timeout").copied().unwrap_or(0);
        }
        if unended[0] + unended[1] >= runs && !self.any_failure() {
            return Err(JostleError::NothingTested(format!(
                "no run reached its end ({} hit the step limit of {}, {} the wall-clock limit): nothing was tested; raise --step-limit or --timeout, or look for a livelock (replay: {})",
                unended[0],
                self.settings.step_limit,
                unended[1],
                self.failures
                    .first()
                    .map_or("none recorded".into(), |f| f.first.command.clone())
            )));
        }
        Ok(())
    }

    /// Sorts the failures: failures before suspected, then by first occurrence.
    pub fn sort_failures(&mut self) {
        self.failures.sort_by_key(|f| (!f.is_failure(), f.order));
    }

    /// Confirmed bugs.
    pub fn confirmed(&self) -> impl Iterator<Item = &Bug> {
        self.bugs.iter().filter(|b| b.confirmed > 0)
    }

    /// Is any bug harmful (the campaign's exit code says so)?
    pub fn any_harmful(&self) -> bool {
        self.bugs.iter().any(|b| b.harmful > 0)
    }

    /// Writes `report.json` into `dir` atomically (a reader never sees half a report).
    pub fn write_json(&self, dir: &Path) -> Result<(), JostleError> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| JostleError::io("encoding the report", std::io::Error::other(e)))?;
        write_atomic(&dir.join("report.json"), text.as_bytes())
    }

    /// Reads `report.json` from `dir` (or a report file). A missing or unreadable file is a
    /// bad report (the user named it); another schema version is refused before its fields
    /// are read, so the message says why rather than which field changed.
    pub fn read(path: &Path) -> Result<Report, JostleError> {
        let file = if path.is_dir() {
            path.join("report.json")
        } else {
            path.to_owned()
        };
        let bad = |why: String| JostleError::BadReport(format!("{}: {why}", file.display()));
        let text =
            std::fs::read_to_string(&file).map_err(|e| bad(format!("cannot be read ({e})")))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(format!("not a Jostle report ({e})")))?;
        match value.get("schema_version").map(|v| v.as_u64()) {
            Some(Some(v)) if v == u64::from(REPORT_SCHEMA) => {}
            Some(Some(v)) => {
                return Err(bad(format!(
                    "schema version {v} (this jostle reads {REPORT_SCHEMA})"
                )));
            }
            _ => return Err(bad("not a Jostle report (no schema_version)".into())),
        }
        serde_json::from_value(value).map_err(|e| bad(format!("not a Jostle report ({e})")))
    }

    /// The summary table (after racefuzzer-pldi08 Table 1): one row per candidate.
    pub fn print_table(&self, out: &mut impl Write) -> std::io::Result<()> {
        // At most TABLE_WIDTH columns: the sites go below their row, wrapped.
        writeln!(
            out,
            "{:<16} {:<16} {:>6} {:>9} {:>8}  {:<11} made real per run",
            "kind", "id", "runs", "confirmed", "harmful", "status"
        )?;
        for b in &self.bugs {
            writeln!(
                out,
                "{:<16} {:<16} {:>6} {:>9} {:>8}  {:<11} {}",
                b.kind,
                b.id,
                b.runs,
                b.confirmed,
                b.harmful,
                b.status,
                b.rate_text()
            )?;
            let sites: Vec<String> = b
                .sites
                .iter()
                .map(|s| super::short_site(s).to_owned())
                .collect();
            for line in wrap(&sites, "  ", TABLE_WIDTH) {
                writeln!(out, "{line}")?;
            }
        }
        let (predicted, real, harmful) = (
            self.bugs.len(),
            self.confirmed().count(),
            self.bugs.iter().filter(|b| b.harmful > 0).count(),
        );
        let failed_runs: u64 = self.failed().map(|f| f.count).sum();
        let suspected = self.failures.iter().filter(|f| !f.is_failure()).count();
        writeln!(
            out,
            "predicted {predicted}, real {real}, harmful {harmful}; failures {} ({failed_runs} runs), suspected livelocks {suspected}\n{} Phase I + {} Phase II + {} search runs; stopped: {}",
            self.failed().count(),
            self.runs.phase1,
            self.runs.phase2,
            self.runs.search,
            self.stopped
        )?;
        for b in self.confirmed() {
            // The shortest interleaving first: it is the one to read.
            if let Some((what, command)) = b.shrunk.as_ref().and_then(Shrunk::summary) {
                writeln!(out, "shortest {} {}: {what}", b.kind, b.id)?;
                writeln!(out, "replay shortest {} {}: {command}", b.kind, b.id)?;
            }
            if let Some(r) = b.first_harmful.as_ref().or(b.first_confirmed.as_ref()) {
                writeln!(out, "replay {} {}: {}", b.kind, b.id, r.command)?;
            }
        }
        self.print_failures(out)
    }

    /// The failures and suspected livelocks, one paragraph each.
    pub fn print_failures(&self, out: &mut impl Write) -> std::io::Result<()> {
        for (heading, failure) in [
            ("failures (every failing run, predicted or not)", true),
            ("suspected livelock / starvation", false),
        ] {
            let mut some = self.failures.iter().filter(|f| f.is_failure() == failure);
            let Some(first) = some.next() else { continue };
            writeln!(out, "{heading}:")?;
            for f in std::iter::once(first).chain(some) {
                writeln!(
                    out,
                    "  {} {} {} run{}: {}{}",
                    f.verdict,
                    f.id,
                    f.count,
                    if f.count == 1 { "" } else { "s" },
                    one_line(&f.example),
                    if f.site.is_empty() {
                        String::new()
                    } else {
                        format!(" at {}", super::short_site(&f.site))
                    }
                )?;
                if let Some((what, command)) = f.shrunk.as_ref().and_then(Shrunk::summary) {
                    writeln!(out, "    shortest: {what}")?;
                    writeln!(out, "    replay shortest: {command}")?;
                }
                writeln!(
                    out,
                    "    first: seed {} ({}); relation: {}",
                    f.first.seed,
                    f.first.strategy,
                    f.relation()
                )?;
                writeln!(out, "    replay: {}", f.first.command)?;
            }
        }
        Ok(())
    }

    /// A JUnit XML document: one test case per candidate, failing when the bug is harmful
    /// (a confirmed bug the runs survived is reported in its output, not as a failure), and
    /// one per failure signature (failing) and suspected livelock (passing, with its output).
    pub fn junit(&self) -> String {
        let failures = self.bugs.iter().filter(|b| b.harmful > 0).count() + self.failed().count();
        let mut x = String::new();
        x.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        x.push_str(&format!(
            "<testsuites><testsuite name=\"jostle {}\" tests=\"{}\" failures=\"{failures}\">\n",
            xml(&self.firmware.fingerprint),
            self.bugs.len() + self.failures.len()
        ));
        for f in &self.failures {
            let detail = format!(
                "{} in {} run{} (first: seed {}, {}); relation: {}\n{}\nreplay: {}",
                one_line(&f.example),
                f.count,
                if f.count == 1 { "" } else { "s" },
                f.first.seed,
                f.first.strategy,
                f.relation(),
                f.message,
                f.first.command
            );
            let failed = f
                .is_failure()
                .then(|| format!("{}: {}", f.verdict, one_line(&f.example)));
            testcase(
                &mut x,
                &f.class,
                format!("{} {} {}", f.verdict, f.id, f.site).trim_end(),
                failed.as_deref(),
                &detail,
            );
        }
        for b in &self.bugs {
            let [p, lo, hi] = b.probability;
            let summary = format!(
                "{}: {} of {} runs confirmed, {} harmful; probability {p:.2} [{lo:.2}, {hi:.2}]",
                b.status, b.confirmed, b.runs, b.harmful
            );
            let replay = b
                .first_harmful
                .as_ref()
                .or(b.first_confirmed.as_ref())
                .map(|r| format!("\nreplay: {}", r.command))
                .unwrap_or_default();
            testcase(
                &mut x,
                &b.kind,
                &format!("{} {} {}", b.kind, b.id, b.sites.join(" ")),
                (b.harmful > 0).then_some(summary.as_str()),
                &format!("{summary}{replay}"),
            );
        }
        x.push_str("</testsuite></testsuites>\n");
        x
    }
}

/// One JUnit test case: failing with `failure` as its message, else passing with `detail`
/// as its output.
fn testcase(x: &mut String, class: &str, name: &str, failure: Option<&str>, detail: &str) {
    x.push_str(&format!(
        "  <testcase classname=\"jostle.{}\" name=\"{}\">",
        xml(class),
        xml(name)
    ));
    match failure {
        Some(message) => x.push_str(&format!(
            "<failure message=\"{}\">{}</failure>",
            xml(message),
            xml(detail)
        )),
        None => x.push_str(&format!("<system-out>{}</system-out>", xml(detail))),
    }
    x.push_str("</testcase>\n");
}

/// The command that replays bug `id` of the report in `dir`; `firmware` is already a
/// string of shell words (see the campaign command), the directory is quoted here.
pub fn replay_command(firmware: &str, dir: &Path, id: &str) -> String {
    format!(
        "jostle replay {firmware} --report {} --bug {}",
        super::shell::quote(&dir.display().to_string()),
        super::shell::quote(id)
    )
}

/// The command that replays the shrunk run of bug (or failure) `id` of the report in `dir`.
pub fn shrunk_command(firmware: &str, dir: &Path, id: &str) -> String {
    format!("{} --shrunk", replay_command(firmware, dir, id))
}

/// Escapes text for XML and HTML.
pub fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Writes `bytes` to `path` through a temporary file beside it (`NAME.tmp`) and a rename: a
/// reader never sees half a file, and a write that fails (a full disk) leaves the file as
/// it was and no temporary file behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), JostleError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            JostleError::io(format!("writing {}", path.display()), e)
        })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn the_table_fits_a_hundred_columns_with_its_sites_below() {
        let site = "src/bin/fw.rs:120:17".to_owned();
        let bug = |kind: &str, runs, confirmed, p: [f64; 3]| Bug {
            id: "9e83865055ffef30".into(),
            kind: kind.into(),
            sites: vec![site.clone(); 6],
            runs,
            confirmed,
            status: "unconfirmed".into(),
            probability: p,
            ..Bug::default()
        };
        let report = Report {
            bugs: vec![
                bug("access_atomicity", 2000, 0, [0.0, 0.0, 0.0019]),
                bug("race", 50, 50, [1.0, 0.93, 1.0]),
                bug("deadlock", 50, 20, [0.4, 0.27, 0.54]),
                bug("atomicity", 0, 0, [0.0, 0.0, 0.0]),
            ],
            ..Report::default()
        };
        let mut out = Vec::new();
        report.print_table(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let table: Vec<&str> = text.lines().take(11).collect();
        for line in &table {
            assert!(line.chars().count() <= TABLE_WIDTH, "{line}");
        }
        // Six sites of 20 columns take two lines below their row.
        assert!(
            table[2].starts_with("  src/") && table[3].starts_with("  src/"),
            "{text}"
        );
        assert!(table[1].contains("never in 2000 runs (< 0.00)"), "{text}");
        assert!(!table[1].contains("[0.00, 0.00]"), "{text}");
        assert!(table[4].contains("every run of 50 (> 0.93)"), "{text}");
        assert!(table[7].contains("0.40 [0.27, 0.54]"), "{text}");
        assert!(text.contains("not tried"), "{text}");
    }

    #[test]
    fn wilson_interval_brackets_the_estimate() {
        let [p, lo, hi] = wilson(50, 100);
        assert_eq!(p, 0.5);
        assert!(
            (lo - 0.4038).abs() < 1e-3 && (hi - 0.5962).abs() < 1e-3,
            "{lo} {hi}"
        );
        let [p, lo, hi] = wilson(0, 50);
        assert_eq!((p, lo), (0.0, 0.0));
        assert!(hi > 0.05 && hi < 0.1, "{hi}");
        assert_eq!(wilson(0, 0), [0.0, 0.0, 1.0]);
    }

    pub(crate) fn bug(id: &str, runs: u64, confirmed: u64, first: Option<u64>) -> Bug {
        let mut b = Bug {
            id: id.into(),
            kind: "race".into(),
            attempts: vec![Attempt {
                strategy: "race".into(),
                runs,
                confirmed,
                ..Attempt::default()
            }],
            first_confirmed: first.map(|index| Replay {
                index,
                seed: 1000 + index,
                ..Replay::default()
            }),
            ..Bug::default()
        };
        b.settle();
        b
    }

    #[test]
    fn junit_fails_only_harmful_bugs() {
        let mut harmful = bug("a", 10, 5, Some(0));
        harmful.attempts[0].harmful = 2;
        harmful.settle();
        let r = Report {
            bugs: vec![harmful, bug("b", 10, 4, Some(1)), bug("c", 10, 0, None)],
            ..Report::default()
        };
        let x = r.junit();
        assert!(x.contains("tests=\"3\" failures=\"1\""), "{x}");
        assert_eq!(x.matches("<failure").count(), 1);
        assert!(roxmltree::Document::parse(&x).is_ok());
    }

    #[test]
    fn a_report_that_cannot_be_read_is_a_bad_report_and_its_version_is_checked_first() {
        let dir = tempfile::tempdir().unwrap();
        let missing = Report::read(&dir.path().join("nowhere.json")).unwrap_err();
        assert!(matches!(missing, JostleError::BadReport(ref m) if m.contains("cannot be read")));
        // A future report whose fields changed: the version is what the message names.
        let future = dir.path().join("future.json");
        std::fs::write(&future, r#"{"schema_version": 9, "bugs": "changed"}"#).unwrap();
        let e = Report::read(&future).unwrap_err().to_string();
        assert!(e.contains("schema version 9"), "{e}");
        let r = Report {
            schema_version: REPORT_SCHEMA,
            ..Report::default()
        };
        r.write_json(dir.path()).unwrap();
        assert_eq!(
            Report::read(dir.path()).unwrap().schema_version,
            REPORT_SCHEMA
        );
    }
}
