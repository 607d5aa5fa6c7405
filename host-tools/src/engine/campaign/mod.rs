//! The campaign loop: Phase I (Random runs at full trace) → predict → Phase II per
//! candidate with the strategy that matches its kind → the full traces of Phase II feed
//! prediction again → until nothing new appears or the budget ends (calfuzzer-cav09 §3:
//! predictive analysis between runs, active testing to confirm).
//!
//! Determinism: every run's seed is a function of the base seed, the candidate id and the
//! run's index, never of completion order; jobs run on J workers but their results are
//! consumed in job order. So the report is the same whatever J is (timing aside).
//!
//! The phases are `rounds` (the loop and why it stopped), `phase1`, `phase2` (per
//! candidate), `feedback` (full traces back into prediction), `search` (the rest of a
//! budget, undirected), `timelines` and `shrinking` (each finding's schedule, shortest); the
//! bookkeeping is `jobs` (work on the workers), `record` (runs into the report), `status`
//! and `budget`. The campaign makes its runs through a `&dyn Transport`.

mod budget;
mod feedback;
mod jobs;
mod phase1;
mod phase2;
mod plan;
mod record;
mod rounds;
mod search;
mod shrinking;
mod status;
mod timelines;

pub use crate::output::progress::Status;
pub use budget::Budget;
pub use jobs::BATCH;
pub use phase2::candidate_seed;
pub use search::search_strategy;
pub use timelines::{Resolve, replay_config, timeline};

use crate::output::report::Report;
use crate::transport::Transport;
use jostle_checker::{Options, Prediction};
use jostle_kernel::Config;
use jostle_kernel::config::StrategyId;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::time::Instant;

/// Confirming runs of a bug, after its first, whose full-trace replays feed prediction: a
/// run that made a bug real may have gone down a path no other trace shows, and which path
/// depends on the run (racebench 031: half the runs that make bug 2 real store the 0 that
/// leads main to bug 3's read), so several are fed, not only the first.
pub const MORE_CONFIRMING: usize = 3;

/// What a campaign is asked to do.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Phase I runs.
    pub phase1_runs: u32,
    /// Phase II runs per candidate and strategy.
    pub runs_per_candidate: u32,
    /// Workers (runs in flight at once).
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
    /// Scheduling steps a postponed task may wait in Phase II; `None`: derived from Phase I
    /// (see `livelock_bound_for`).
    pub livelock_bound: Option<u32>,
    /// The search's strategies, in turn (see [`search_strategy`]).
    pub portfolio: Vec<(StrategyId, u32)>,
    /// Stop at the first failing run (benchmarks count the runs to the first bug).
    pub until_failure: bool,
    /// Shrink each finding's run (`engine::shrink`); off, the report gives the recorded runs only.
    pub shrink: bool,
}

/// The default livelock bound of Phase II: twice the longest Phase I run (a task postponed
/// that long is not waiting for its partner: every run seen was over by then), at least the
/// kernel's default, and at most half the step limit (so that a real livelock still ends
/// the run before the step limit does).
pub fn livelock_bound_for(longest_run: u32, step_limit: u32) -> u32 {
    longest_run
        .saturating_mul(2)
        .max(jostle_kernel::config::DEFAULT_LIVELOCK_BOUND)
        .min((step_limit / 2).max(1))
}

/// The interrupt horizon after Phase I's first run: a spontaneous source's firing is drawn
/// over as many steps as the longest run seen, so that handlers come anywhere in a run, not
/// only in its first steps (the kernel's default horizon, which the first run uses, is short).
pub fn irq_horizon_for(longest_run: u32) -> u32 {
    longest_run.max(jostle_kernel::config::DEFAULT_IRQ_HORIZON)
}

/// A campaign over one firmware.
pub struct Campaign<'r> {
    transport: &'r dyn Transport,
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
    counts: [AtomicUsize; 4],
    phase: std::sync::Mutex<String>,
    budget_hit: AtomicBool,
    /// A failing run was recorded under `until_failure`.
    failure_hit: AtomicBool,
    /// Rounds ended with candidates still untried (`--max-rounds`).
    rounds_hit: bool,
    /// Bugs (by handle) whose first (full-trace) run under their matching strategy made them real.
    /// Every shard makes that run, so decisions taken on it are the same in every shard.
    real_at_first: BTreeSet<usize>,
    /// Per bug (by index in the report), the confirming runs after its first, up to
    /// [`MORE_CONFIRMING`], and how many of them have fed prediction.
    more_confirming: std::collections::BTreeMap<usize, (Vec<crate::output::report::Replay>, usize)>,
    /// The bug ids jobs name by handle (`Work::Candidate`), in the order first queued.
    handles: Vec<String>,
    phase1_events: u64,
    phase1_seconds: f64,
    /// Wall time spent shrinking (`timing.shrink_seconds`).
    shrink_seconds: f64,
    /// The full-trace replays of findings' recorded runs (their timelines), by finding id:
    /// shrinking starts from them.
    replays: std::collections::HashMap<String, Arc<crate::trace::run::RunOutcome>>,
    /// Waves of jobs executed so far (orders failures' first runs).
    wave: u64,
    /// When the report was last written.
    last_write: Instant,
    /// The longest Phase I run, in scheduling steps (the default livelock bound's measure).
    phase1_max_steps: u32,
    /// SURW's profile: Phase I's first run (when the search's portfolio has SURW).
    surw_profile: Option<crate::engine::surw::Profile>,
    /// Search runs of this shard planned so far (the next one's place in the blocks).
    search_planned: u64,
    /// The DrFinder chains under way, by bug handle.
    chains: std::collections::BTreeMap<usize, phase2::Chain>,
    /// The last write of the report went through.
    written: bool,
}

impl<'r> Campaign<'r> {
    /// A campaign with `settings` on `transport`; setting `stop` ends it cleanly (Ctrl-C).
    pub fn new(
        transport: &'r dyn Transport,
        mut settings: Settings,
        stop: Arc<AtomicBool>,
    ) -> Self {
        // One board, one run at a time (shard across boards with --shard instead).
        if !transport.parallel() {
            settings.jobs = 1;
        }
        let fingerprint = crate::engine::predict::fingerprint(transport.path()).unwrap_or_default();
        let report = Report {
            schema_version: crate::output::report::REPORT_SCHEMA,
            firmware: crate::output::report::FirmwareRef {
                command: settings.firmware_command.clone(),
                fingerprint,
            },
            settings: crate::output::report::Settings {
                seed: settings.seed,
                args: settings.base.args.to_vec(),
                phase1_runs: settings.phase1_runs,
                runs_per_candidate: settings.runs_per_candidate,
                budget_runs: match settings.budget {
                    Budget::Runs(n) => Some(n),
                    _ => None,
                },
                step_limit: settings.base.step_limit,
                livelock_bound: settings.livelock_bound.unwrap_or(0),
            },
            shards: vec![[settings.shard.0, settings.shard.1]],
            stopped: "running".into(),
            ..Report::default()
        };
        let mut prediction = Prediction::new();
        prediction.firmware = Some(report.firmware.fingerprint.clone());
        Campaign {
            transport,
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
            failure_hit: AtomicBool::new(false),
            rounds_hit: false,
            real_at_first: BTreeSet::new(),
            more_confirming: std::collections::BTreeMap::new(),
            handles: Vec::new(),
            phase1_events: 0,
            phase1_seconds: 0.0,
            shrink_seconds: 0.0,
            replays: std::collections::HashMap::new(),
            wave: 0,
            last_write: Instant::now(),
            phase1_max_steps: 0,
            surw_profile: None,
            search_planned: 0,
            chains: std::collections::BTreeMap::new(),
            written: false,
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
}
