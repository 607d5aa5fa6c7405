//! `jostle campaign`: the whole loop, its report, its exit code (harmful, interrupted).

use crate::cli::args::{FirmwareArgs, Via, base_config, utf8_path};
use crate::cli::{EXIT_HARMFUL, EXIT_INTERRUPTED, on_signals, print_report};
use clap::Args;
use jostle_host_tools::JostleError;
use jostle_host_tools::engine::campaign::{Campaign, Settings};
use jostle_host_tools::output::progress::Progress;
use jostle_kernel::TraceLevel;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
pub(crate) struct CampaignArgs {
    #[command(flatten)]
    pub(crate) firmware: FirmwareArgs,
    /// Phase I runs (Random strategy, full trace).
    #[arg(long, default_value_t = 5)]
    pub(crate) phase1_runs: u32,
    /// Phase II runs per candidate (and per strategy tried on it).
    #[arg(long, default_value_t = 50)]
    pub(crate) runs_per_candidate: u32,
    /// Workers: QEMU instances at once (default: the number of cores).
    #[arg(short = 'j', long)]
    pub(crate) jobs: Option<usize>,
    /// Stop after this many runs (`500`) or this much time (`90s`, `10m`, `1h`).
    #[arg(long)]
    pub(crate) budget: Option<String>,
    /// Base seed.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// A firmware argument for every run (repeat for more).
    #[arg(long = "arg")]
    pub(crate) args: Vec<u32>,
    /// How many times the RTIC hardware task NAME (its function's name, as its lane shows
    /// it, or the interrupt it binds: `binds = NAME`) may fire on its own in a run, instead
    /// of once (0: only when the firmware pends it). Repeat for more interrupts (at most 4).
    #[arg(long = "fire", value_name = "NAME=N")]
    pub(crate) fire: Vec<String>,
    /// Where report.json, report.html and prediction.json go (the directory `replay --report` reads).
    #[arg(long, value_name = "DIR", default_value = "jostle-report")]
    pub(crate) out: PathBuf,
    /// Run only this slice of the seeds: `I/N` (0-based), then `jostle merge` the N reports.
    #[arg(long)]
    pub(crate) shard: Option<String>,
    /// Print the report as JSON instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
    /// Also write a JUnit XML file (one test case per candidate; harmful ones fail).
    #[arg(long)]
    pub(crate) junit: Option<PathBuf>,
    /// Most Phase II rounds (each round tries the candidates the previous one found).
    #[arg(long, default_value_t = 3)]
    pub(crate) max_rounds: u32,
    /// Most scheduling steps per run.
    #[arg(long, default_value_t = jostle_kernel::config::DEFAULT_STEP_LIMIT)]
    pub(crate) step_limit: u32,
    /// Scheduling steps a postponed task may wait in Phase II before it is released
    /// (default: twice Phase I's longest run, at least 1000, at most half the step limit).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) livelock_bound: Option<u32>,
    /// Seconds a run may go without output before it is killed (verdict timeout; on the
    /// host port, the run's wall-clock limit).
    #[arg(long, default_value_t = 10.0, value_parser = crate::cli::args::seconds, value_name = "SECS")]
    pub(crate) timeout: f64,
    /// The search's strategies, taken in turn by blocks of 50 runs, between the candidates'
    /// later runs and for the rest of a budget after them (`random`, `pct` = PCT of depth 3, `pos`, `surw` =
    /// SURW with Phase I's first run as its profiling run; `none`: no search).
    #[arg(long, default_value = "surw,pos,pct,random", value_name = "LIST")]
    pub(crate) search: String,
    /// Stop at the first failing run; report.json's `runs.first_failure` counts the runs
    /// made up to it (with `--max-rounds 0 --search S`: strategy S alone).
    #[arg(long)]
    pub(crate) until_failure: bool,
    /// Do not shrink findings: no shrink runs, the report gives each finding's recorded run
    /// only (shrinking costs up to 200 runs a finding, outside the budget).
    #[arg(long)]
    pub(crate) no_shrink: bool,
    #[command(flatten)]
    pub(crate) via: Via,
    /// For a firmware that declares tests (`jostle::tests!`), as cargo test passes them:
    /// name filters and libtest's options (`--exact`, `--skip F`, `--list`; `--nocapture`,
    /// `--test-threads N`, `-q` are taken and change nothing). Campaign options go before
    /// them: from the first of them on, every argument is libtest's.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "TEST_ARGS"
    )]
    pub(crate) test_args: Vec<String>,
}

/// `--search`: strategy names, comma-separated, or `none`.
fn parse_search(text: &str) -> Result<Vec<(jostle_kernel::config::StrategyId, u32)>, JostleError> {
    if text == "none" {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|name| {
            jostle_host_tools::engine::campaign::search_strategy(name.trim()).ok_or_else(|| {
                JostleError::Usage(format!(
                    "--search {text}: `{name}` is no search strategy (random, pct, pos, surw; or none)"
                ))
            })
        })
        .collect()
}

/// `--budget`: a run count, or a duration with a unit (s, m, h).
pub(crate) fn parse_budget(
    text: &str,
) -> Result<jostle_host_tools::engine::campaign::Budget, JostleError> {
    use jostle_host_tools::engine::campaign::Budget;
    let bad = || {
        JostleError::Usage(format!(
            "--budget {text}: give a number of runs (500) or a duration (90s, 10m, 1h)"
        ))
    };
    let t = text.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Ok(Budget::Runs(n));
    }
    // The unit is the last character (a byte split could cut a multi-byte one).
    let cut = t.char_indices().last().map_or(0, |(i, _)| i);
    let (number, unit) = t.split_at(cut);
    let n: f64 = number.parse().map_err(|_| bad())?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(bad()),
    };
    // Positive, and at most a year (Duration::from_secs_f64 panics past its range).
    if !(secs > 0.0 && secs <= 366.0 * 86_400.0) {
        return Err(bad());
    }
    Ok(Budget::Time(Duration::from_secs_f64(secs)))
}

/// `--shard I/N`.
pub(crate) fn parse_shard(text: &str) -> Result<(u32, u32), JostleError> {
    let bad = || JostleError::Usage(format!("--shard {text}: expected I/N with 0 <= I < N"));
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (u32, u32) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// How the command line named the firmware (and the declared `test` it runs, if any), for
/// the replay commands in the report. Each word is shell-quoted, so that the printed replay
/// command runs as it reads.
pub(crate) fn firmware_command(
    fw: &FirmwareArgs,
    path: &std::path::Path,
    via: &Via,
    test: Option<&str>,
) -> String {
    use jostle_host_tools::output::shell::quote;
    let c = match (&fw.package, &fw.bin) {
        (Some(p), Some(b)) => format!("-p {} --bin {}", quote(p), quote(b)),
        _ => quote(&path.display().to_string()),
    };
    let test = test.map_or(String::new(), |t| format!(" --test {}", quote(t)));
    format!("{c}{}{test}", via.describe())
}

/// What the command line asks of a campaign, checked before anything is made: no report
/// directory, no lock, no build until every value is known to be usable.
pub(crate) struct Checked {
    pub(crate) budget: jostle_host_tools::engine::campaign::Budget,
    pub(crate) portfolio: Vec<(jostle_kernel::config::StrategyId, u32)>,
    pub(crate) shard: (u32, u32),
    pub(crate) base: jostle_kernel::Config,
    pub(crate) jobs: usize,
}

/// `--fire NAME=N`s as the firmware at `path` numbers its interrupts: each NAME must be the
/// handler of exactly one line of its vector table.
fn firing_bounds(
    fire: &[String],
    path: &std::path::Path,
) -> Result<
    jostle_kernel::fixed::Vec<
        jostle_kernel::config::FiringBound,
        { jostle_kernel::config::MAX_FIRING_BOUNDS },
    >,
    JostleError,
> {
    let mut bounds = jostle_kernel::fixed::Vec::new();
    if fire.is_empty() {
        return Ok(bounds);
    }
    let elf = jostle_host_tools::trace::elf::Firmware::load(path)?;
    for f in fire {
        let (name, max) = parse_fire(f)?;
        // The interrupt's name, or the name of the hardware task that binds it.
        let line = elf
            .interrupt_line(name)
            .or_else(|| elf.interrupt_line(&elf.task_interrupt(name)?))
            .ok_or_else(|| {
                JostleError::Usage(format!(
                    "--fire {f}: `{name}` is neither a hardware task of this firmware nor the handler of one of its interrupts (name the task as its lane shows it, or the interrupt it binds)"
                ))
            })?;
        if bounds
            .push(jostle_kernel::config::FiringBound { line, max })
            .is_err()
        {
            return Err(JostleError::Usage(format!(
                "--fire {f}: at most {} interrupts can be bounded",
                jostle_kernel::config::MAX_FIRING_BOUNDS
            )));
        }
    }
    Ok(bounds)
}

/// `NAME=N` of `--fire`, N in 0..=255.
fn parse_fire(f: &str) -> Result<(&str, u8), JostleError> {
    f.split_once('=')
        .and_then(|(name, n)| Some((name, n.parse().ok()?)))
        .filter(|(name, _)| !name.is_empty())
        .ok_or_else(|| {
            JostleError::Usage(format!(
                "--fire {f}: expected NAME=N, an interrupt's name and at most 255 firings"
            ))
        })
}

/// Every refusal of the campaign's command line (exit 2), before anything is made.
pub(crate) fn check(args: &CampaignArgs) -> Result<Checked, JostleError> {
    use jostle_host_tools::engine::campaign::Budget;
    let budget = match &args.budget {
        Some(b) => parse_budget(b)?,
        None => Budget::Unlimited,
    };
    if budget == Budget::Runs(0) {
        return Err(JostleError::Usage(
            "--budget 0: a campaign of no runs tests nothing".into(),
        ));
    }
    if args.phase1_runs == 0 {
        return Err(JostleError::Usage(
            "--phase1-runs 0: Phase I is what predicts the candidates and shows the first failures; give at least 1".into(),
        ));
    }
    if args.runs_per_candidate == 0 {
        return Err(JostleError::Usage(
            "--runs-per-candidate 0: no candidate would be tried (Phase II is what confirms them); give at least 1".into(),
        ));
    }
    let portfolio = parse_search(&args.search)?;
    for f in &args.fire {
        parse_fire(f)?;
    }
    let shard = match &args.shard {
        Some(s) => parse_shard(s)?,
        None => (0, 1),
    };
    let base = base_config(args.seed, args.step_limit, &args.args, TraceLevel::Full)?;
    // The report's replay commands name the firmware and the report directory.
    if let Some(elf) = &args.firmware.elf {
        utf8_path("the firmware", elf)?;
    }
    utf8_path("--out", &args.out)?;
    Ok(Checked {
        budget,
        portfolio,
        shard,
        base,
        jobs: jobs(args)?,
    })
}

pub(crate) fn campaign(args: CampaignArgs) -> Result<u8, JostleError> {
    use std::sync::atomic::Ordering;
    let Checked {
        budget,
        portfolio,
        shard,
        mut base,
        jobs,
    } = check(&args)?;
    // The signals are ours before the lock is taken: a Ctrl-C while the firmware is built
    // or QEMU is looked for still ends in exit 130 with the lock removed, never in a death
    // by SIGINT that leaves the lock behind (seen in CI: killed between lock and handler).
    let stop = on_signals("the report holds what was written before");
    // One campaign per report directory (two would overwrite each other's files), taken
    // before the firmware is built; released when the campaign returns.
    let _lock = jostle_host_tools::output::lock::lock(&args.out)?;
    let path = args.via.firmware(&args.firmware)?;
    // A firmware of declared tests, none chosen: cargo test's runner (libtest's lines).
    let declared = jostle_host_tools::trace::declared::declared_tests(&path)?;
    if let (None, Some(tests)) = (&args.firmware.test, &declared) {
        return crate::cli::harness::run_tests(
            &args, &path, tests, base, budget, portfolio, jobs, &stop,
        );
    }
    if let Some(extra) = args.test_args.first() {
        return Err(JostleError::Usage(format!(
            "unexpected argument `{extra}`: only a firmware that declares tests (jostle::tests!) takes test filters and libtest options"
        )));
    }
    base.test = args.firmware.selected_test(&path)?;
    base.firing_bounds = firing_bounds(&args.fire, &path)?;
    let runner = args.via.runner(path.clone(), args.timeout)?;
    let settings = Settings {
        phase1_runs: args.phase1_runs,
        runs_per_candidate: args.runs_per_candidate,
        jobs,
        budget,
        seed: args.seed,
        base,
        shard,
        options: jostle_checker::Options::default(),
        max_rounds: args.max_rounds,
        firmware_command: firmware_command(
            &args.firmware,
            &path,
            &args.via,
            args.firmware.test.as_deref(),
        ),
        report_dir: args.out.clone(),
        livelock_bound: args.livelock_bound,
        portfolio,
        until_failure: args.until_failure,
        shrink: !args.no_shrink,
    };
    let progress = Progress::new();
    let mut c = Campaign::new(&*runner, settings, stop.clone());
    let result = c.run(&|s| progress.update(s));
    progress.finish(&c.status());
    let report = c.report().clone();
    if let Some(junit) = &args.junit {
        jostle_host_tools::output::report::write_atomic(junit, report.junit().as_bytes())?;
    }
    print_report(&report, args.json)?;
    // Only a report that is there (a full disk may have refused it).
    if c.written() {
        eprintln!(
            "jostle: report in {} (report.json, report.html)",
            args.out.display()
        );
    }
    let interrupted = stop.load(Ordering::SeqCst);
    match result {
        // A run in flight killed by the stop: what finished is in the report.
        Err(JostleError::Interrupted) if interrupted => {}
        result => result?,
    }
    Ok(if interrupted {
        EXIT_INTERRUPTED
    } else if report.any_failure() {
        EXIT_HARMFUL
    } else {
        0
    })
}

/// Workers per core at most: each worker is a QEMU making runs without pause, so more than
/// a few per core only wait for the cores (and each holds a QEMU's memory).
pub(crate) const JOBS_PER_CORE: usize = 4;

/// `-j`, or the number of cores: at least 1, and at most [`JOBS_PER_CORE`] per core (a
/// larger `-j` is capped, and stderr says so).
pub(crate) fn jobs(args: &CampaignArgs) -> Result<usize, JostleError> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let jobs = args.jobs.unwrap_or(cores);
    if jobs == 0 {
        return Err(JostleError::Usage("-j 0: give at least 1 worker".into()));
    }
    let most = cores.saturating_mul(JOBS_PER_CORE);
    if jobs > most {
        eprintln!(
            "jostle: note: -j {jobs} capped at {most} ({JOBS_PER_CORE} workers per core, {cores} cores here): each worker is a QEMU, and more only wait for the cores"
        );
        return Ok(most);
    }
    Ok(jobs)
}
