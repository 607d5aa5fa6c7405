//! Phase II tallies: many seeded runs of one strategy against one target, counted the way
//! the papers report them (bug created, failure that followed, per run).

use crate::error::JostleError;
use crate::trace::run::{Outcome, RunOutcome};
use crate::transport::Transport;
use jostle_kernel::config::StrategyId;
use jostle_kernel::{Config, TraceLevel, Verdict};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

/// What `runs` seeded runs of one configuration gave.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Tally {
    /// Runs made.
    pub runs: u32,
    /// Runs made before them to estimate (SURW's profiling run), not in `runs`.
    #[serde(skip_serializing_if = "crate::output::report::is_zero")]
    pub profiling_runs: u32,
    /// Runs in which the targeted bug was made real.
    pub confirmed: u32,
    /// Runs that did not pass (panic, deadlock, overflow, fault, step limit, timeout).
    pub failed: u32,
    /// Runs in which a failure followed the confirmation.
    pub harmful: u32,
    /// Runs per verdict name.
    pub verdicts: BTreeMap<String, u32>,
    /// Panicking runs per panic message (which assertion failed).
    pub panics: BTreeMap<String, u32>,
    /// The first seed whose run confirmed the bug (the replay seed).
    pub first_confirmed_seed: Option<u64>,
    /// Wall-clock runs per second.
    pub runs_per_second: f64,
    /// The failures the runs showed, by signature (whether or not they confirmed).
    pub failures: crate::trace::failure::Seen,
    /// `jostle` was stopped (Ctrl-C) before every run was made: the counts are of the runs
    /// that finished.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl Tally {
    /// `part` of the runs, in percent.
    pub fn percent(&self, part: u32) -> f64 {
        100.0 * f64::from(part) / f64::from(self.runs.max(1))
    }

    /// One line: counts and rates.
    pub fn line(&self) -> String {
        let verdicts: Vec<String> = self
            .verdicts
            .iter()
            .map(|(v, n)| format!("{v} {n}"))
            .collect();
        let panics: Vec<String> = self
            .panics
            .iter()
            .map(|(m, n)| format!("\"{}\" {n}", crate::trace::failure::one_line(m)))
            .collect();
        let panics = if panics.is_empty() {
            String::new()
        } else {
            format!("  panics: {}", panics.join(", "))
        };
        let profiling = if self.profiling_runs > 0 {
            format!(" (+{} profiling)", self.profiling_runs)
        } else {
            String::new()
        };
        let stopped = if self.interrupted {
            "  (stopped by a signal)"
        } else {
            ""
        };
        format!(
            "runs {}{profiling}  confirmed {} ({:.1}%)  failed {} ({:.1}%)  harmful {}  [{}]{panics}  {:.1} runs/s{stopped}",
            self.runs,
            self.confirmed,
            self.percent(self.confirmed),
            self.failed,
            self.percent(self.failed),
            self.harmful,
            verdicts.join(", "),
            self.runs_per_second
        )
    }
}

/// Runs `base` with seeds `first .. first + runs` and counts. A run whose stream is broken
/// stops the tally with that error (and its seed), never a silently smaller count.
/// With `happened`, a run also counts as confirmed when the happens-before detector finds
/// the targeted race in its full trace (how DrFinder is measured, and Random beside it).
pub fn tally(
    transport: &dyn Transport,
    base: &Config,
    first: u64,
    runs: u32,
    happened: bool,
) -> Result<Tally, JostleError> {
    let mut base = base.clone();
    if happened {
        base.trace = TraceLevel::Full;
    }
    let base = &base;
    let started = Instant::now();
    let mut t = Tally::default();
    let mut feedback = base.clone();
    // SURW's profiling run, once (seed `first`); each run draws its location from its seed.
    let profile = crate::engine::surw::profile(
        transport,
        &Config {
            seed: first,
            ..base.clone()
        },
    )?;
    t.profiling_runs = u32::from(profile.is_some());
    for i in 0..runs {
        let seed = first.wrapping_add(u64::from(i));
        let mut config = feedback.clone();
        config.seed = seed;
        bound_pct(transport, &mut config)?;
        let config = crate::engine::surw::with_choice(&config, profile.as_ref());
        let outcome = match transport.run(config, None) {
            // Stopped: the runs that finished are the tally.
            Err(JostleError::Interrupted) => {
                t.interrupted = true;
                break;
            }
            outcome => outcome?,
        };
        if let Some(e) = outcome.error {
            return Err(with_seed(e, seed));
        }
        t.runs += 1;
        let name = outcome.outcome.map_or("none", Outcome::name);
        *t.verdicts.entry(name.to_owned()).or_default() += 1;
        if outcome.outcome != Some(Outcome::Verdict(Verdict::Pass)) {
            t.failed += 1;
        }
        if let Some(p) = &outcome.panic {
            let message = p.message.clone().unwrap_or_else(|| "(no message)".into());
            *t.panics.entry(message).or_default() += 1;
        }
        if outcome.confirmed() || (happened && outcome.happened_race()) {
            t.confirmed += 1;
            t.first_confirmed_seed.get_or_insert(seed);
        }
        if outcome.harmful() {
            t.harmful += 1;
        }
        t.failures.count(&outcome);
        if base.strategy == StrategyId::DrFinder {
            feedback = with_relations_of(&outcome, base);
        }
    }
    t.runs_per_second = f64::from(t.runs) / started.elapsed().as_secs_f64().max(1e-9);
    Ok(t)
}

/// Gives a PCT configuration without a step bound k the one [`measure_steps`] finds.
pub fn bound_pct(transport: &dyn Transport, config: &mut Config) -> Result<(), JostleError> {
    if config.strategy == StrategyId::Pct && config.params[1] == 0 {
        config.params[1] = measure_steps(transport, config)?;
    }
    Ok(())
}

/// PCT's step bound k for `config`'s seed: the length of a Random run of the same firmware
/// and seed (PCT's guarantee holds for k at least the run's length).
pub fn measure_steps(transport: &dyn Transport, config: &Config) -> Result<u32, JostleError> {
    let probe = Config {
        strategy: StrategyId::Random,
        params: [0; 4],
        breakpoints: jostle_kernel::fixed::Vec::new(),
        trace: TraceLevel::Results,
        ..config.clone()
    };
    let outcome = transport.run(probe, None)?;
    if let Some(e) = outcome.error {
        return Err(with_seed(e, config.seed));
    }
    Ok(outcome.steps.max(1))
}

/// DrFinder's feedback (drfinder-fse15 Algorithm 2, line 21): the next run uses the
/// may-trigger relations this run collected (kept when it collected none).
pub fn with_relations_of(outcome: &RunOutcome, base: &Config) -> Config {
    use jostle_kernel::targets::{role, role_of};
    let relations =
        jostle_checker::drfinder::collect(&outcome.events, jostle_checker::drfinder::DEFAULT_DEPTH);
    if relations.is_empty() {
        return base.clone();
    }
    let mut config = base.clone();
    let targets: Vec<_> = base
        .breakpoints
        .iter()
        .filter(|b| !matches!(role_of(b.aux), role::RELATION | role::CLASS))
        .copied()
        .collect();
    let (bps, _) = crate::engine::targeting::relation_breakpoints(&relations, targets.len());
    config.breakpoints = targets.into_iter().chain(bps).collect();
    config
}

fn with_seed(e: JostleError, seed: u64) -> JostleError {
    match e {
        JostleError::StreamTruncated(m) => {
            JostleError::StreamTruncated(format!("run with seed {seed}: {m}"))
        }
        JostleError::StreamCorrupt(m) => {
            JostleError::StreamCorrupt(format!("run with seed {seed}: {m}"))
        }
        other => other,
    }
}
