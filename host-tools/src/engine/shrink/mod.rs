//! Shrinking: a finding's run reduced to the fewest preemptions, then the fewest other
//! context switches, that still give the same finding.
//!
//! The run's full trace gives its schedule ([`extract`]): one entry per context switch the
//! `schedule` strategy (`kernel/src/strategy/schedule.rs`) could not make on its own (it keeps
//! the last task running while it is enabled, else takes the lowest enabled one), each
//! anchored at the number of operations the task switched away from had run, and one per
//! interrupt firing the run chose (drawn from its seed or a strategy's: at a decision of
//! the tasks, or nested in a handler, anchored at a handler's count) and per async task a
//! dispatcher polled out of its own order. A switch is *preemptive* when that task could have
//! gone on. Candidate schedules are run through the `schedule` strategy, each test one run
//! at the results trace level (the verdict, the confirmations and the failure's site are
//! results-level events), held to the recorded run's steps; the finding must come again (the
//! same failure signature, or the same bug confirmed) in no more steps. In order, each test
//! stopping the search once a schedule of at most one entry gives the finding (nothing
//! shorter is left to find but the empty one, tried first):
//!
//! 1. the empty schedule, then the *hints* (schedules already shrunk for other findings of
//!    the campaign: a harmful bug is often its failure's interleaving); a hint that gives
//!    the finding ends the search;
//! 2. schedules aimed at the finding's first event ([`directed::focus_schedules`]): the tasks
//!    it names, each run to the operation it had reached there, handing over to the other
//!    (and back); the first that gives the finding ends this step;
//! 3. when none did and the schedule fits the configuration block, delta debugging
//!    ([`ddmin`]) of its entries: first the preemptive ones, then the rest;
//! 4. single-entry schedules, directed ([`directed`]): switches between the tasks the
//!    finding names and those sharing a location or lock with them, at each of their
//!    operation counts, and firings of the sources the run fired (there, and nested in
//!    the handlers the finding involves, at each of their operation counts);
//! 5. when none gives it and the schedule did not fit, delta debugging of the entries
//!    between those tasks, if they fit;
//! 6. when still none gives it, two-entry schedules: a switch of step 4 and a switch back.
//!
//! The shortest schedule found is replayed once at full trace (its figures and timeline).
//! A shrink stops when it stops gaining: after [`PATIENCE`] runs without a shorter schedule
//! (counted afresh when delta debugging begins), and at most [`MAX_RUNS`] runs a finding.

mod ddmin;
mod directed;
mod schedule;

pub use ddmin::ddmin;
pub use schedule::{Entry, Extracted, extract, parse_schedule, schedule_text};

use crate::error::JostleError;
use crate::trace::run::RunOutcome;
use crate::transport::Transport;
use jostle_kernel::config::{Breakpoint, MAX_BREAKPOINTS, StrategyId};
use jostle_kernel::targets::{role, role_of};
use jostle_kernel::{Config, TraceLevel};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// Most runs spent shrinking one finding.
pub const MAX_RUNS: u32 = 200;

/// Runs without a shorter schedule after which a shrink stops: it has stopped gaining. (40
/// before: on the examples and the verdict programs no shrunk schedule got longer at 20,
/// and a starvation's shrink, whose every test runs the spin out, took 70 runs, not 108.)
pub const PATIENCE: u32 = 20;

/// What counts as the same finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Same {
    /// A failing run with this signature id (`trace::failure`).
    Failure(String),
    /// The run's targeted bug confirmed again (and a failure following it, when `harmful`).
    Bug {
        /// The recorded run was harmful.
        harmful: bool,
    },
}

impl Same {
    /// Does `outcome` give this finding?
    pub fn holds(&self, outcome: &RunOutcome) -> bool {
        if outcome.error.is_some() {
            return false;
        }
        match self {
            Same::Failure(id) => {
                crate::trace::failure::signature(outcome).is_some_and(|s| s.id() == *id)
            }
            Same::Bug { harmful } => outcome.confirmed() && (!harmful || outcome.harmful()),
        }
    }
}

/// A finding shrunk.
#[derive(Debug)]
pub struct Shrinking {
    /// The recorded run's schedule and steps.
    pub original: Extracted,
    /// See `original`.
    pub original_steps: u32,
    /// The entries kept, and the run they give (it gives the same finding).
    pub shrunk: Option<(Vec<Breakpoint>, RunOutcome)>,
    /// The shrunk run's own schedule figures.
    pub figures: Extracted,
    /// Runs made (the recorded run's replay included).
    pub runs: u32,
    /// Why there is no shrunk run.
    pub note: String,
}

/// Breakpoints of a recorded configuration that say what its finding is (race sides, blocks,
/// cycles, triples, firing sources), without those that steer its strategy (DrFinder's
/// relations, AtomFuzzer's interleavers, SURW's location and weights) or a schedule's
/// entries.
pub fn finding_breakpoints(config: &Config) -> Vec<Breakpoint> {
    config
        .breakpoints
        .iter()
        .copied()
        .filter(|b| {
            !matches!(
                role_of(b.aux),
                role::RELATION
                    | role::CLASS
                    | role::INTERLEAVER
                    | role::INTERESTING
                    | role::WEIGHT
                    | role::SWITCH
                    | role::FIRE_AT
                    | role::POLL_AT
            )
        })
        .collect()
}

/// The configuration that replays `entries` after `recorded` (seed, limits, arguments) with
/// the `schedule` strategy; `targets` are the finding's breakpoints.
pub fn schedule_config(
    recorded: &Config,
    targets: &[Breakpoint],
    entries: &[Breakpoint],
) -> Config {
    let mut bps = targets.to_vec();
    bps.extend_from_slice(entries);
    Config {
        strategy: StrategyId::Schedule,
        params: [0; 4],
        trace: TraceLevel::Full,
        runs: 1,
        breakpoints: jostle_kernel::fixed::Vec::from_slice(&bps).unwrap_or_default(),
        ..recorded.clone()
    }
}

/// What a shrink starts from: the recorded run's configuration, and its full-trace replay
/// when the campaign has made it already (its timeline), so that it is not made again.
pub struct Recorded<'a> {
    /// The recorded run's configuration.
    pub config: &'a Config,
    /// Its replay at full trace, if made.
    pub replayed: Option<&'a RunOutcome>,
}

/// Shrinks the finding `same` of the recorded run: replays it at full trace (unless given),
/// reads its schedule, and searches for a shorter one (module doc), trying the `hints` first,
/// in at most `max_runs` runs. A transport error ends it with that error; `stop` ends it
/// early with what it has.
pub fn shrink(
    transport: &dyn Transport,
    recorded: &Recorded<'_>,
    same: &Same,
    hints: &[Vec<Breakpoint>],
    max_runs: u32,
    stop: &AtomicBool,
) -> Result<Shrinking, JostleError> {
    let replayed;
    let (first, runs) = match recorded.replayed {
        Some(outcome) => (outcome, 0),
        None => {
            replayed = transport.run(
                Config {
                    trace: TraceLevel::Full,
                    runs: 1,
                    ..recorded.config.clone()
                },
                None,
            )?;
            (&replayed, 1)
        }
    };
    let mut result = Shrinking {
        original: Extracted::default(),
        original_steps: first.steps,
        shrunk: None,
        figures: Extracted::default(),
        runs,
        note: String::new(),
    };
    if !same.holds(first) {
        result.note = "the recorded run did not give the finding again".into();
        return Ok(result);
    }
    result.original = extract(&first.events);
    let targets = finding_breakpoints(&first.config);
    let mut search = Search {
        transport,
        same,
        first,
        room: MAX_BREAKPOINTS.saturating_sub(targets.len()),
        targets,
        runs,
        improved: runs,
        max_runs,
        stop,
        memo: HashMap::new(),
        best: None,
        failure: None,
    };
    search.run_strategies(&result.original, hints);
    result.runs = search.runs;
    if let Some(e) = search.failure.take() {
        return Err(e);
    }
    let Some((kept, _)) = search.best.take() else {
        result.note = search.why_not(&result.original);
        return Ok(result);
    };
    // The shortest schedule, at full trace: its figures and timeline.
    let outcome = transport.run(search.config(&kept, TraceLevel::Full), None)?;
    result.runs += 1;
    if !same.holds(&outcome) {
        result.note = format!(
            "its shortest schedule ({}) gave the finding at the results level but not at full trace (nondeterminism)",
            schedule_text(&kept)
        );
        return Ok(result);
    }
    result.figures = extract(&outcome.events);
    // Under the `schedule` strategy a preemption happens only at an entry (between entries
    // the last task runs while it can): the trace's model, which takes a task it never saw
    // step again for enabled, would count a switch away from it at the run's end as one.
    result.figures.preemptions = result
        .figures
        .entries
        .iter()
        .filter(|e| e.preemptive && kept.contains(&e.bp))
        .count() as u32;
    result.shrunk = Some((kept, outcome));
    Ok(result)
}

/// The search's state: the runs made, the tests memoised, the best schedule so far.
struct Search<'a> {
    transport: &'a dyn Transport,
    same: &'a Same,
    /// The recorded run, replayed at full trace.
    first: &'a RunOutcome,
    /// The finding's own breakpoints, which every test carries.
    targets: Vec<Breakpoint>,
    /// Entries the configuration block has room for besides them.
    room: usize,
    runs: u32,
    /// Runs made when the best schedule was last improved (or the search began).
    improved: u32,
    max_runs: u32,
    stop: &'a AtomicBool,
    memo: HashMap<Vec<Breakpoint>, bool>,
    /// The shortest schedule that gave the finding (fewest entries, then steps).
    best: Option<(Vec<Breakpoint>, u32)>,
    /// A transport error: the search ends and shrinking fails with it.
    failure: Option<JostleError>,
}

impl Search<'_> {
    /// The search's phases in order (module doc), each skipped once a schedule of at most
    /// one entry gives the finding.
    fn run_strategies(&mut self, original: &Extracted, hints: &[Vec<Breakpoint>]) {
        let done = |s: &Self| s.best.as_ref().is_some_and(|(k, _)| k.len() <= 1) || s.spent();
        self.test(&[]);
        for hint in hints {
            if done(self) {
                return;
            }
            // A hint that gives this finding too ends the search: it is already the end of
            // a search over the same kind of interleaving.
            if self.test(hint) {
                return;
            }
        }
        for schedule in directed::focus_schedules(&self.first.events, &original.entries) {
            if done(self) || self.best.is_some() {
                break;
            }
            self.test(&schedule);
        }
        let entries: Vec<Entry> = original.entries.clone();
        if self.best.is_none() && entries.len() <= self.room {
            self.ddmin_over(&entries);
        }
        if !done(self) {
            for candidate in directed::one_entry_schedules(&self.first.events) {
                if done(self) {
                    break;
                }
                self.test(&[candidate]);
            }
        }
        if !done(self) && self.best.is_none() && entries.len() > self.room {
            let between = directed::entries_between_involved(&self.first.events, &entries);
            if between.len() <= self.room && between.len() < entries.len() {
                self.ddmin_over(&between);
            }
        }
        if self.best.is_none() {
            for pair in directed::there_and_back_schedules(&self.first.events) {
                if self.best.is_some() || self.spent() {
                    break;
                }
                self.test(&pair);
            }
        }
    }

    /// Delta debugging over `entries`: the preemptive ones first (the rest kept), then the
    /// rest (the preemptions kept minimal). It gets a patience of its own: the directed
    /// schedules before it are one or two switches, and a finding that needs more (a lost
    /// update, then a spinner left alone: a starvation) would otherwise use the patience up
    /// before its recorded schedule is even tried.
    fn ddmin_over(&mut self, entries: &[Entry]) {
        self.improved = self.runs;
        let preemptive: Vec<Breakpoint> = entries
            .iter()
            .filter(|e| e.preemptive)
            .map(|e| e.bp)
            .collect();
        let rest: Vec<Breakpoint> = entries
            .iter()
            .filter(|e| !e.preemptive)
            .map(|e| e.bp)
            .collect();
        let in_order = |kept: &[Breakpoint]| -> Vec<Breakpoint> {
            entries
                .iter()
                .map(|e| e.bp)
                .filter(|bp| kept.contains(bp))
                .collect()
        };
        let all = in_order(&[preemptive.as_slice(), rest.as_slice()].concat());
        if !self.test(&all) {
            return;
        }
        let fewest = ddmin(preemptive, &mut |p: &[Breakpoint]| {
            self.test(&in_order(&[p, rest.as_slice()].concat()))
        });
        ddmin(rest.clone(), &mut |r: &[Breakpoint]| {
            self.test(&in_order(&[fewest.as_slice(), r].concat()))
        });
    }

    /// Have the runs run out, or stopped gaining (or the campaign stopped, or a run failed)?
    fn spent(&self) -> bool {
        self.runs >= self.max_runs
            || self.runs - self.improved >= PATIENCE
            || self.failure.is_some()
            || self.stop.load(Ordering::SeqCst)
    }

    /// The configuration of a test of `entries`: the `schedule` strategy at `trace`, held to
    /// the recorded run's steps (a schedule that sends a task spinning ends there, not at
    /// the configured step limit).
    fn config(&self, entries: &[Breakpoint], trace: TraceLevel) -> Config {
        Config {
            step_limit: self
                .first
                .config
                .step_limit
                .min(self.first.steps.saturating_add(1)),
            trace,
            ..schedule_config(&self.first.config, &self.targets, entries)
        }
    }

    /// Does the schedule `entries` give the finding, in no more steps than the recorded
    /// run? One run at the results level (memoised). A schedule that does not fit the block,
    /// or one left untried because the runs ran out, counts as not giving it (ddmin's
    /// unresolved outcome).
    fn test(&mut self, entries: &[Breakpoint]) -> bool {
        if let Some(&v) = self.memo.get(entries) {
            return v;
        }
        if entries.len() > self.room || self.spent() {
            return false;
        }
        self.runs += 1;
        let outcome = match self
            .transport
            .run(self.config(entries, TraceLevel::Results), None)
        {
            Ok(o) => o,
            Err(e) => {
                self.failure = Some(e);
                return false;
            }
        };
        let holds = self.same.holds(&outcome) && outcome.steps <= self.first.steps;
        self.memo.insert(entries.to_vec(), holds);
        let score = (entries.len(), outcome.steps);
        if holds
            && self
                .best
                .as_ref()
                .is_none_or(|(k, steps)| score < (k.len(), *steps))
        {
            self.best = Some((entries.to_vec(), outcome.steps));
            self.improved = self.runs;
        }
        holds
    }

    /// Why no schedule was found.
    fn why_not(&self, original: &Extracted) -> String {
        let runs = if self.max_runs < MAX_RUNS && self.runs >= self.max_runs {
            format!(
                "{} runs, all the campaign's shrink budget left it",
                self.runs
            )
        } else {
            format!("{} runs", self.runs)
        };
        let all: Vec<Breakpoint> = original.entries.iter().map(|e| e.bp).collect();
        if original.entries.len() > self.room {
            format!(
                "its schedule has {} entries, the configuration block room for {}, and none of the shorter schedules tried gave the finding ({runs})",
                original.entries.len(),
                self.room,
            )
        } else if self.memo.get(&all) != Some(&false) {
            format!("none of the shorter schedules tried gave the finding ({runs})")
        } else {
            "its schedule did not replay under the schedule strategy".into()
        }
    }
}
