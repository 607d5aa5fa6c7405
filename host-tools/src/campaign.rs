//! The campaign loop: Phase I (Random runs at full trace) → predict → Phase II per
//! candidate with the strategy that matches its kind → the full traces of Phase II feed
//! prediction again → until nothing new appears or the budget ends (calfuzzer-cav09 §3:
//! predictive analysis between runs, active testing to confirm).
//!
//! Determinism: every run's seed is a function of the base seed, the candidate id and the
//! run's index, never of completion order; jobs run on J workers but their results are
//! consumed in job order. So the report is the same whatever J is (timing aside).

use crate::confirm::with_relations_of;
use crate::error::JostleError;
use crate::pool::run_all;
use crate::predict::{Trace, predict_trace};
use crate::report::{Attempt, Bug, Mark, Replay, ReplayBreakpoint, Report};
use crate::run::{Outcome, RunOutcome, is_step, operation};
use crate::runner::Runner;
use crate::targeting::{candidate_breakpoints, strategy_for, strategy_name};
use jostle_checker::{Candidate, CandidateKind, Options, Prediction};
use jostle_kernel::config::{Breakpoint, StrategyId};
use jostle_kernel::{Config, Event, TraceLevel};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
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

/// What a campaign is asked to do.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Phase I runs.
    pub phase1_runs: u32,
    /// Phase II runs per candidate and strategy.
    pub runs_per_candidate: u32,
    /// Workers (QEMU instances at once).
    pub jobs: usize,
    /// The budget.
    pub budget: Budget,
    /// Base seed.
    pub seed: u64,
    /// Every run's configuration starts from this one (arguments, step limit).
    pub base: Config,
    /// This shard's slice of the seeds: run indices `i` with `i % count == index`.
    pub shard: (u32, u32),
    /// The analyses' options.
    pub options: Options,
    /// Most rounds of Phase II after Phase I.
    pub max_rounds: u32,
    /// How the command line names the firmware (for replay commands).
    pub firmware_command: String,
    /// Where the report goes.
    pub report_dir: PathBuf,
}

/// A snapshot for the progress display.
#[derive(Clone, Debug, Default)]
pub struct Status {
    /// What runs now (`phase I`, `phase II round 1`, ...).
    pub phase: String,
    /// Runs finished.
    pub runs: u64,
    /// Runs planned so far.
    pub planned: u64,
    /// Candidates predicted.
    pub predicted: usize,
    /// Candidates confirmed.
    pub confirmed: usize,
    /// Candidates with a harmful run.
    pub harmful: usize,
    /// Wall time so far.
    pub elapsed: Duration,
}

/// Runs per QEMU boot (consecutive seeds; the firmware resets itself between them). Fixed,
/// so that which runs share a boot never depends on the number of workers.
pub const BATCH: u64 = 50;

/// One unit of work for a worker: consecutive runs with seeds `config.seed + k`, several
/// per boot; or, for DrFinder, a chain where each run's relations configure the next
/// (drfinder-fse15 Algorithm 2, line 21).
struct Job {
    /// Index of the bug in the report (`None`: Phase I).
    bug: Option<usize>,
    /// Index of the first run among this bug's runs of this strategy.
    index: u64,
    /// The first run's configuration.
    config: Config,
    /// Runs.
    chain: u32,
    /// Whether this shard counts the runs (a shard also makes runs it does not count: Phase I
    /// and each candidate's first, full-trace run, so that every shard predicts the same).
    tally: bool,
}

/// Consecutive indices grouped into runs of at most [`BATCH`], none crossing a multiple of
/// it (so shards, which slice by blocks of [`BATCH`], group the same way).
fn batches(indices: &[u64]) -> Vec<(u64, u32)> {
    let mut out: Vec<(u64, u32)> = Vec::new();
    for &i in indices {
        match out.last_mut() {
            Some((first, n)) if *first + u64::from(*n) == i && i % BATCH != 0 => *n += 1,
            _ => out.push((i, 1)),
        }
    }
    out
}

/// Shard `index` of `count`'s run indices among `0..n`: the `index`-th of `count`
/// contiguous blocks of `ceil(n / count)`.
fn shard_slice(n: u32, (index, count): (u32, u32)) -> impl Iterator<Item = u64> {
    let block = u64::from(n).div_ceil(u64::from(count.max(1))).max(1);
    (0..u64::from(n)).filter(move |i| i / block == u64::from(index))
}

/// A campaign over one firmware.
pub struct Campaign<'r> {
    runner: &'r Runner,
    settings: Settings,
    stop: Arc<AtomicBool>,
    started: Instant,
    prediction: Prediction,
    report: Report,
    /// (candidate id, strategy) pairs whose Phase II is done.
    tried: BTreeSet<(String, u8)>,
    traces: u32,
    runs_done: AtomicU64,
    planned: AtomicU64,
    counts: [AtomicUsize; 3],
    phase: std::sync::Mutex<String>,
    budget_hit: AtomicBool,
    /// Rounds ended with candidates still untried (`--max-rounds`).
    rounds_hit: bool,
    /// Bugs whose first (full-trace) run under their matching strategy made them real.
    /// Every shard makes that run, so decisions taken on it are the same in every shard.
    real_at_first: BTreeSet<usize>,
    phase1_events: u64,
    phase1_seconds: f64,
}

impl<'r> Campaign<'r> {
    /// A campaign with `settings` on `runner`; setting `stop` ends it cleanly (Ctrl-C).
    pub fn new(runner: &'r Runner, settings: Settings, stop: Arc<AtomicBool>) -> Self {
        let fingerprint = crate::predict::fingerprint(runner.path()).unwrap_or_default();
        let report = Report {
            schema_version: crate::report::REPORT_SCHEMA,
            firmware: crate::report::FirmwareRef {
                command: settings.firmware_command.clone(),
                fingerprint,
            },
            settings: crate::report::Settings {
                seed: settings.seed,
                args: settings.base.args.to_vec(),
                phase1_runs: settings.phase1_runs,
                runs_per_candidate: settings.runs_per_candidate,
                budget_runs: match settings.budget {
                    Budget::Runs(n) => Some(n),
                    _ => None,
                },
                step_limit: settings.base.step_limit,
            },
            shards: vec![[settings.shard.0, settings.shard.1]],
            stopped: "running".into(),
            ..Report::default()
        };
        let mut prediction = Prediction::new();
        prediction.firmware = Some(report.firmware.fingerprint.clone());
        Campaign {
            runner,
            settings,
            stop,
            started: Instant::now(),
            prediction,
            report,
            tried: BTreeSet::new(),
            traces: 0,
            runs_done: AtomicU64::new(0),
            planned: AtomicU64::new(0),
            counts: Default::default(),
            phase: std::sync::Mutex::new(String::new()),
            budget_hit: AtomicBool::new(false),
            rounds_hit: false,
            real_at_first: BTreeSet::new(),
            phase1_events: 0,
            phase1_seconds: 0.0,
        }
    }

    /// The report so far.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The prediction so far (Phase I and the full-trace Phase II runs).
    pub fn prediction(&self) -> &Prediction {
        &self.prediction
    }

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
        self.report.stopped = if self.stop.load(Ordering::SeqCst) {
            "interrupted"
        } else if self.budget_hit.load(Ordering::SeqCst) {
            "budget"
        } else if result.is_err() {
            "error"
        } else if self.rounds_hit {
            "rounds"
        } else {
            "done"
        }
        .into();
        self.finish_timing();
        self.write()?;
        result
    }

    fn rounds(&mut self, progress: &(dyn Fn(&Status) + Sync)) -> Result<(), JostleError> {
        self.set_phase("phase I");
        // Every shard runs all of Phase I: the shards then predict the same candidates.
        let indices: Vec<u64> = (0..u64::from(self.settings.phase1_runs)).collect();
        let jobs: Vec<Job> = batches(&indices)
            .into_iter()
            .map(|(i, n)| Job {
                bug: None,
                index: i,
                config: Config {
                    seed: self.settings.seed.wrapping_add(i),
                    strategy: StrategyId::Random,
                    trace: TraceLevel::Full,
                    ..self.settings.base.clone()
                },
                chain: n,
                tally: true,
            })
            .collect();
        let phase1 = Instant::now();
        self.execute(jobs, progress)?;
        self.phase1_seconds = phase1.elapsed().as_secs_f64();
        let mut exhausted = false;
        for round in 1..=self.settings.max_rounds {
            if self.halted() {
                break;
            }
            self.set_phase(&format!("phase II round {round}"));
            // Each candidate with the strategy of its kind.
            let queue = self.untried(|c| Some(strategy_for(c.kind)));
            if queue.is_empty() {
                exhausted = true;
                break;
            }
            let jobs = self.phase2_jobs(&queue)?;
            self.execute(jobs, progress)?;
            // DrFinder for the races whose first RaceFuzzer run did not make them real, when
            // may-trigger relations exist (a race hidden behind a lock hand-off). Decided on
            // the first run, which every shard makes, so that shards try the same chains.
            if self.halted() {
                break;
            }
            let has_relations = !self.prediction.relations.is_empty();
            let unconfirmed: BTreeSet<String> = self
                .report
                .bugs
                .iter()
                .enumerate()
                .filter(|(i, _)| !self.real_at_first.contains(i))
                .map(|(_, b)| b.id.clone())
                .collect();
            let fallback = self.untried(|c| {
                (has_relations && c.kind == CandidateKind::Race && unconfirmed.contains(&c.id))
                    .then_some(StrategyId::DrFinder)
            });
            let jobs = self.phase2_jobs(&fallback)?;
            self.execute(jobs, progress)?;
        }
        if !exhausted && !self.halted() && self.has_untried() {
            self.rounds_hit = true;
        }
        // A budget still gets its timelines (one short replay per confirmed bug); Ctrl-C
        // does not wait for them.
        if !self.stop.load(Ordering::SeqCst) {
            self.timelines()?;
        }
        Ok(())
    }

    /// Are there candidates whose matching strategy has not been tried?
    fn has_untried(&self) -> bool {
        self.prediction.candidates.iter().any(|c| {
            !self
                .tried
                .contains(&(c.id.clone(), strategy_for(c.kind) as u8))
        })
    }

    /// The candidates (and strategies) not tried yet, in prediction order.
    fn untried(
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
        queue
    }

    /// This shard's run indices among `0..n`: shard `I` of `N` takes the `I`-th of `N`
    /// contiguous blocks of `ceil(n / N)` indices, so every shard has work.
    fn slice(&self, n: u32) -> impl Iterator<Item = u64> + use<> {
        shard_slice(n, self.settings.shard)
    }

    fn phase2_jobs(&mut self, queue: &[(Candidate, StrategyId)]) -> Result<Vec<Job>, JostleError> {
        let space = self.runner.space();
        let mut jobs = Vec::new();
        for (candidate, strategy) in queue {
            let bug = self.bug_index(candidate);
            let breakpoints =
                candidate_breakpoints(candidate, &self.prediction, *strategy, &space, true)
                    .and_then(|mut bps| {
                        if *strategy == StrategyId::DrFinder {
                            let (more, _) = crate::targeting::relation_breakpoints(
                                &self.prediction.relations,
                                bps.len(),
                            );
                            bps.extend(more);
                        }
                        heapless::Vec::from_slice(&bps).map_err(|()| {
                            JostleError::Usage(format!(
                                "{} breakpoints, more than a configuration block holds",
                                bps.len()
                            ))
                        })
                    });
            let breakpoints = match breakpoints {
                Ok(bps) => bps,
                Err(e) => {
                    // This candidate cannot be targeted; the others still are.
                    self.report.bugs[bug].skipped =
                        Some(format!("{}: {e}", strategy_name(*strategy)));
                    continue;
                }
            };
            let config = Config {
                strategy: *strategy,
                breakpoints,
                ..self.settings.base.clone()
            };
            let first = candidate_seed(self.settings.seed, &candidate.id, *strategy);
            let indices: Vec<u64> = self.slice(self.settings.runs_per_candidate).collect();
            let owns_first = indices.first() == Some(&0);
            if *strategy == StrategyId::DrFinder {
                // One chain, each run's relations driving the next (full trace: DrFinder's
                // confirmation is the happens-before detector's). A chain cannot be split,
                // so the shard that owns run 0 makes all of it.
                if owns_first {
                    jobs.push(Job {
                        bug: Some(bug),
                        index: 0,
                        config: Config {
                            seed: first,
                            trace: TraceLevel::Full,
                            ..config
                        },
                        chain: self.settings.runs_per_candidate,
                        tally: true,
                    });
                }
                continue;
            }
            // Run 0 feeds prediction (full trace), in every shard so that all predict the
            // same; the others need only the results.
            if self.settings.runs_per_candidate > 0 {
                jobs.push(Job {
                    bug: Some(bug),
                    index: 0,
                    config: Config {
                        seed: first,
                        trace: TraceLevel::Full,
                        ..config.clone()
                    },
                    chain: 1,
                    tally: owns_first,
                });
            }
            let rest: Vec<u64> = indices.into_iter().filter(|i| *i != 0).collect();
            for (i, n) in batches(&rest) {
                jobs.push(Job {
                    bug: Some(bug),
                    index: i,
                    config: Config {
                        seed: first.wrapping_add(i),
                        trace: TraceLevel::Results,
                        ..config.clone()
                    },
                    chain: n,
                    tally: true,
                });
            }
        }
        Ok(jobs)
    }

    /// Runs `jobs` on the workers within the budget, then takes their results in order.
    fn execute(
        &mut self,
        mut jobs: Vec<Job>,
        progress: &(dyn Fn(&Status) + Sync),
    ) -> Result<(), JostleError> {
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
        let total: u64 = jobs.iter().map(|j| u64::from(j.chain)).sum();
        self.planned.fetch_add(total, Ordering::SeqCst);
        let deadline = match self.settings.budget {
            Budget::Time(d) => Some(self.started + d),
            _ => None,
        };
        let runner = self.runner;
        let stop = &*self.stop;
        let budget_hit = &self.budget_hit;
        let this = &*self;
        let results = run_all(
            &jobs,
            self.settings.jobs,
            stop,
            |job| {
                if stop.load(Ordering::SeqCst) {
                    return Ok(None);
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    budget_hit.store(true, Ordering::SeqCst);
                    return Ok(None);
                }
                if job.config.strategy != StrategyId::DrFinder {
                    let mut outcomes = runner
                        .run_batch(&job.config, job.chain)
                        .map_err(|e| with_context(e, &job.config))?;
                    if let Some(o) = outcomes.iter_mut().find(|o| o.error.is_some()) {
                        let e = o.error.take().expect("found");
                        return Err(with_context(e, &o.config));
                    }
                    this.runs_done
                        .fetch_add(outcomes.len() as u64, Ordering::SeqCst);
                    progress(&this.status());
                    return Ok(Some(outcomes));
                }
                let mut outcomes = Vec::new();
                let mut config = job.config.clone();
                for k in 0..job.chain {
                    if stop.load(Ordering::SeqCst) {
                        return Ok(None);
                    }
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        budget_hit.store(true, Ordering::SeqCst);
                        return Ok(None);
                    }
                    config.seed = job.config.seed.wrapping_add(u64::from(k));
                    let mut outcome = runner
                        .run(config.clone(), None)
                        .map_err(|e| with_context(e, &config))?;
                    if let Some(e) = outcome.error.take() {
                        return Err(with_context(e, &config));
                    }
                    this.runs_done.fetch_add(1, Ordering::SeqCst);
                    progress(&this.status());
                    if job.config.strategy == StrategyId::DrFinder {
                        config = with_relations_of(&outcome, &job.config);
                    }
                    outcomes.push(outcome);
                }
                Ok(Some(outcomes))
            },
            |_| {},
        );
        // Consume in job order; a job cut short by the stop or the deadline ends the wave
        // (later jobs' results are dropped so that the report is a prefix of the plan).
        for (job, result) in jobs.iter().zip(results) {
            let outcomes = match result {
                None | Some(Ok(None)) => break,
                Some(Err(e)) => return Err(e),
                Some(Ok(Some(o))) => o,
            };
            if outcomes.len() < job.chain as usize {
                break;
            }
            for (k, outcome) in outcomes.iter().enumerate() {
                self.take(job, job.index + k as u64, outcome);
            }
        }
        self.sync_bugs();
        self.write()?;
        Ok(())
    }

    /// Counts one finished run.
    fn take(&mut self, job: &Job, index: u64, outcome: &RunOutcome) {
        let verdict = outcome.outcome.map_or("none", Outcome::name).to_owned();
        let Some(bug) = job.bug else {
            self.report.runs.phase1 += 1;
            self.phase1_events += outcome.events.len() as u64;
            *self.report.runs.phase1_verdicts.entry(verdict).or_default() += 1;
            self.feed(outcome);
            return;
        };
        if outcome.config.trace == TraceLevel::Full {
            self.feed(outcome);
        }
        if index == 0 && outcome.config.strategy != StrategyId::DrFinder && outcome.confirmed() {
            self.real_at_first.insert(bug);
        }
        if !job.tally {
            return;
        }
        self.report.runs.phase2 += 1;
        let strategy = strategy_name(outcome.config.strategy).to_owned();
        let replay = |b: &Bug| Replay {
            index,
            seed: outcome.config.seed,
            strategy: strategy.clone(),
            params: outcome.config.params,
            livelock_bound: outcome.config.livelock_bound,
            step_limit: outcome.config.step_limit,
            args: outcome.config.args.to_vec(),
            breakpoints: outcome
                .config
                .breakpoints
                .iter()
                .map(|bp| ReplayBreakpoint {
                    location: crate::predict::site_text(&self.prediction, bp.site),
                    site: bp.site,
                    aux: bp.aux,
                })
                .collect(),
            verdict: verdict.clone(),
            schedule: None,
            command: crate::report::replay_command(
                &self.settings.firmware_command,
                &self.settings.report_dir,
                &b.id,
            ),
        };
        let (confirmed, harmful) = (outcome.confirmed(), outcome.harmful());
        let b = &self.report.bugs[bug];
        let first_confirmed = (confirmed && b.first_confirmed.is_none()).then(|| replay(b));
        let first_harmful = (harmful && b.first_harmful.is_none()).then(|| replay(b));
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

    /// Analyses a full trace and merges what it predicts.
    fn feed(&mut self, outcome: &RunOutcome) {
        let p = predict_trace(&Trace::of_run(outcome), self.traces, &self.settings.options);
        self.traces += 1;
        self.prediction.merge(p);
    }

    /// The report's bug of `candidate` (added when new).
    fn bug_index(&mut self, candidate: &Candidate) -> usize {
        self.sync_bugs();
        self.report
            .bugs
            .iter()
            .position(|b| b.id == candidate.id)
            .expect("synced")
    }

    /// Adds the prediction's new candidates to the report and refreshes what the prediction
    /// says of the known ones; keeps the report sorted like the prediction (kind, id).
    fn sync_bugs(&mut self) {
        for c in &self.prediction.candidates {
            let sites: Vec<String> = c
                .sites
                .iter()
                .map(|s| crate::predict::site_text(&self.prediction, *s))
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
    }

    /// Replays the first confirming run of each confirmed bug at full trace: it must make
    /// the bug real again (a determinism check), and its interleaving is the timeline.
    fn timelines(&mut self) -> Result<(), JostleError> {
        self.set_phase("timelines");
        let todo: Vec<(usize, Config)> = self
            .report
            .bugs
            .iter()
            .enumerate()
            .filter(|(_, b)| b.timeline.is_empty())
            .filter_map(|(i, b)| {
                let r = b.first_harmful.as_ref().or(b.first_confirmed.as_ref())?;
                Some((i, replay_config(r, &self.settings.base, None)))
            })
            .collect();
        let runner = self.runner;
        let results = run_all(
            &todo,
            self.settings.jobs,
            &self.stop,
            |(_, config)| {
                runner.run(
                    Config {
                        trace: TraceLevel::Full,
                        ..config.clone()
                    },
                    None,
                )
            },
            |_| {},
        );
        for ((i, _), r) in todo.iter().zip(results) {
            let Some(r) = r else { break };
            let outcome = r?;
            if let Some(e) = outcome.error {
                return Err(e);
            }
            let bug = &mut self.report.bugs[*i];
            if !outcome.confirmed() {
                return Err(JostleError::NotReproduced(format!(
                    "{} {}: seed {} made it real but its full-trace replay did not (nondeterminism)",
                    bug.kind, bug.id, outcome.config.seed
                )));
            }
            bug.timeline = timeline(&outcome);
            let schedule = Some(outcome.schedule_digest());
            match (&mut bug.first_harmful, &mut bug.first_confirmed) {
                (Some(r), _) | (None, Some(r)) => r.schedule = schedule,
                (None, None) => {}
            }
        }
        self.write()
    }

    fn halted(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || self.budget_hit.load(Ordering::SeqCst)
    }

    fn set_phase(&self, phase: &str) {
        *self.phase.lock().unwrap_or_else(|p| p.into_inner()) = phase.to_owned();
    }

    /// The progress snapshot.
    pub fn status(&self) -> Status {
        Status {
            phase: self.phase.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            runs: self.runs_done.load(Ordering::SeqCst),
            planned: self.planned.load(Ordering::SeqCst),
            predicted: self.counts[0].load(Ordering::SeqCst),
            confirmed: self.counts[1].load(Ordering::SeqCst),
            harmful: self.counts[2].load(Ordering::SeqCst),
            elapsed: self.started.elapsed(),
        }
    }

    fn finish_timing(&mut self) {
        let wall = self.started.elapsed().as_secs_f64();
        let runs = self.report.runs.phase1 + self.report.runs.phase2;
        self.report.timing = crate::report::Timing {
            wall_seconds: (wall * 1000.0).round() / 1000.0,
            runs_per_second: (runs as f64 / wall.max(1e-9) * 10.0).round() / 10.0,
            jobs: self.settings.jobs,
            phase1_events: self.phase1_events,
            phase1_seconds: (self.phase1_seconds * 1000.0).round() / 1000.0,
        };
    }

    /// Writes report.json and report.html.
    fn write(&mut self) -> Result<(), JostleError> {
        self.finish_timing();
        let dir = &self.settings.report_dir;
        self.report.write_json(dir)?;
        crate::report::write_atomic(
            &dir.join("report.html"),
            crate::html::render(&self.report).as_bytes(),
        )?;
        crate::predict::write_prediction(&self.prediction, &dir.join("prediction.json"))
    }
}

/// The first seed of a candidate's runs under `strategy`: the base seed mixed with the
/// candidate id (so candidates do not share schedules) and the strategy.
pub fn candidate_seed(base: u64, id: &str, strategy: StrategyId) -> u64 {
    let id = u64::from_str_radix(id, 16).unwrap_or_else(|_| jostle_checker::fnv1a64(id.as_bytes()));
    let mut z = base ^ id ^ (u64::from(strategy as u8) << 56);
    // SplitMix64's finaliser: neighbouring ids get unrelated seed ranges.
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Maps a `file:line:col` to the site ids of the image about to run.
pub type Resolve<'a> = &'a dyn Fn(&str) -> Result<Vec<u32>, JostleError>;

/// The configuration of a recorded run. `resolve` maps a breakpoint's `file:line:col` to
/// the site ids of the image about to run (`None`: the same image, ids as recorded).
pub fn replay_config(r: &Replay, base: &Config, resolve: Option<Resolve<'_>>) -> Config {
    let strategy = [
        StrategyId::Random,
        StrategyId::Race,
        StrategyId::Atom,
        StrategyId::Deadlock,
        StrategyId::DrFinder,
        StrategyId::Pct,
    ]
    .into_iter()
    .find(|s| strategy_name(*s) == r.strategy)
    .unwrap_or(StrategyId::Random);
    let mut breakpoints = heapless::Vec::new();
    for bp in &r.breakpoints {
        let ids = match resolve {
            Some(f) => f(&bp.location).unwrap_or_else(|_| vec![bp.site]),
            None => vec![bp.site],
        };
        for site in ids {
            let _ = breakpoints.push(Breakpoint { site, aux: bp.aux });
        }
    }
    Config {
        seed: r.seed,
        strategy,
        params: r.params,
        livelock_bound: r.livelock_bound,
        step_limit: r.step_limit,
        args: heapless::Vec::from_slice(&r.args).unwrap_or_default(),
        breakpoints,
        ..base.clone()
    }
}

/// The interleaving around the first finding of a full-trace run: the steps before it and
/// a few after, with the operations that make the bug highlighted.
pub fn timeline(outcome: &RunOutcome) -> Vec<Mark> {
    const BEFORE: usize = 40;
    const AFTER: usize = 12;
    let events = &outcome.events;
    let Some(found) = events.iter().position(|e| outcome.is_targeted_finding(e)) else {
        return Vec::new();
    };
    // Step numbers of executed operations.
    let mut steps = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if is_step(e) {
            steps.push(i);
        }
    }
    let found_step = steps.partition_point(|&i| i < found);
    let from = found_step.saturating_sub(BEFORE);
    let to = (found_step + AFTER).min(steps.len());
    // What to highlight: (task, site) of the operations that make the bug.
    let mut wanted: Vec<(u8, u32)> = Vec::new();
    let mut blocked = Vec::new();
    for e in &events[found..] {
        match *e {
            Event::RealRace { t, s, t2, s2, .. } => wanted.extend([(t, s), (t2, s2)]),
            Event::AtomicityViolation {
                t, block, by, s, ..
            } => {
                wanted.extend([(by, s), (t, block)]);
            }
            Event::DeadlockConfirmed { t, s, l, holder } => blocked.push((t, s, l, holder)),
            _ => {}
        }
    }
    let site = |s: Option<u32>| s.map(|s| outcome.site_text(s)).unwrap_or_default();
    let mut marks: Vec<Mark> = steps[from..to]
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let e = &events[i];
            let task = e.task().unwrap_or(0);
            let highlight = e.site().is_some_and(|s| wanted.contains(&(task, s)))
                || blocked.iter().any(|&(_, _, l, holder)| {
                    holder == task && matches!(*e, Event::Acquire { l: l2, .. } if l2 == l)
                });
            Mark {
                step: (from + k) as u64,
                task,
                op: operation(e).to_owned(),
                site: site(e.site()),
                highlight,
            }
        })
        .collect();
    for (t, s, _, _) in blocked {
        marks.push(Mark {
            step: steps.len() as u64,
            task: t,
            op: "blocked".into(),
            site: site(Some(s)),
            highlight: true,
        });
    }
    marks
}

fn with_context(e: JostleError, config: &Config) -> JostleError {
    match e {
        JostleError::StreamTruncated(m) => JostleError::StreamTruncated(format!(
            "run with seed {} ({}): {m}",
            config.seed,
            strategy_name(config.strategy)
        )),
        JostleError::StreamCorrupt(m) => JostleError::StreamCorrupt(format!(
            "run with seed {} ({}): {m}",
            config.seed,
            strategy_name(config.strategy)
        )),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_every_candidates_runs_and_each_gets_some() {
        for (n, count) in [(50, 4), (50, 2), (7, 3), (160, 3), (5, 8)] {
            let mut all: Vec<u64> = Vec::new();
            for index in 0..count {
                let mine: Vec<u64> = shard_slice(n, (index, count)).collect();
                // Work for every shard while there are as many runs as shards.
                if index < n.min(count) && n >= count {
                    assert!(!mine.is_empty(), "{n} runs, shard {index}/{count}");
                }
                all.extend(mine);
            }
            assert_eq!(all, (0..u64::from(n)).collect::<Vec<_>>(), "{n}/{count}");
        }
    }
}
