//! The `jostle` command line.

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use jostle_host_tools::build::{QEMU_TARGET, cargo_build};
use jostle_host_tools::elf::Firmware;
use jostle_host_tools::qemu::Qemu;
use jostle_host_tools::runner::Runner;
use jostle_host_tools::{JostleError, RunOutcome};
use jostle_kernel::config::StrategyId;
use jostle_kernel::{Config, TraceLevel};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

mod progress;

/// Active concurrency testing for Cortex-M firmware.
#[derive(Parser)]
#[command(name = "jostle", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run firmware once under a seeded schedule and show its interleaving and verdict.
    Run(RunArgs),
    /// Phase I: run the firmware under N seeds (or read saved traces) and predict races,
    /// atomicity violations and deadlocks; write the prediction file.
    Predict(PredictArgs),
    /// Phase II: run a strategy against a target (or every fitting candidate of the
    /// prediction file) under many seeds, and tally how often the bug is made real.
    Confirm(ConfirmArgs),
    /// Measure runs per second on QEMU, decode throughput and the kernel's instruction costs.
    Bench(BenchArgs),
    /// Write the configuration block of one run to a file (for `--config-file`, a QEMU
    /// `-device loader`, or a board's flash page).
    Config(ConfigArgs),
    /// The whole loop: Phase I, prediction, Phase II for every candidate, feedback, report.
    Campaign(CampaignArgs),
    /// Run a reported bug (or an explicit seed and target) again and show the interleaving
    /// around it with source lines.
    Replay(ReplayArgs),
    /// Combine shard reports (`campaign --shard I/N`) into one report.
    Merge(MergeArgs),
    /// Flash a board with the firmware and, into its reserved flash page, the configuration
    /// block of one run: the board replays that run at every power-up, no host needed
    /// (`cargo embed` shows the events).
    FlashConfig(FlashConfigArgs),
}

#[derive(Args)]
struct FlashConfigArgs {
    /// The firmware ELF, built for the board.
    elf: PathBuf,
    #[command(flatten)]
    steer: StrategyArgs,
    /// Seed of the scheduler.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Most scheduling steps before the `step_limit` verdict.
    #[arg(long, default_value_t = jostle_kernel::config::DEFAULT_STEP_LIMIT)]
    step_limit: u32,
    /// Which events the firmware emits.
    #[arg(long, value_enum, default_value = "full")]
    trace: Trace,
    /// A firmware argument (repeat for more).
    #[arg(long = "arg")]
    args: Vec<u32>,
    /// The probe (`VID:PID[:SERIAL]`; the only one connected when absent).
    #[arg(long, default_value = "")]
    probe: String,
    /// The board's chip, as probe-rs names it.
    #[arg(long)]
    chip: String,
}

/// Exit code of a campaign or merge that found a harmful bug.
const EXIT_HARMFUL: u8 = 40;
/// Exit code of a campaign stopped by Ctrl-C (its report holds what finished).
const EXIT_INTERRUPTED: u8 = 130;

#[derive(Args)]
struct CampaignArgs {
    #[command(flatten)]
    firmware: FirmwareArgs,
    /// Phase I runs (Random strategy, full trace).
    #[arg(long, default_value_t = 5)]
    phase1_runs: u32,
    /// Phase II runs per candidate (and per strategy tried on it).
    #[arg(long, default_value_t = 50)]
    runs_per_candidate: u32,
    /// Workers: QEMU instances at once (default: the number of cores).
    #[arg(short = 'j', long)]
    jobs: Option<usize>,
    /// Stop after this many runs (`500`) or this much time (`90s`, `10m`, `1h`).
    #[arg(long)]
    budget: Option<String>,
    /// Base seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// A firmware argument for every run (repeat for more).
    #[arg(long = "arg")]
    args: Vec<u32>,
    /// Where report.json, report.html and prediction.json go.
    #[arg(long, default_value = "jostle-report")]
    report: PathBuf,
    /// Run only this slice of the seeds: `I/N` (0-based), then `jostle merge` the N reports.
    #[arg(long)]
    shard: Option<String>,
    /// Print the report as JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write a JUnit XML file (one test case per candidate; harmful ones fail).
    #[arg(long)]
    junit: Option<PathBuf>,
    /// Most Phase II rounds (each round tries the candidates the previous one found).
    #[arg(long, default_value_t = 3)]
    max_rounds: u32,
    /// Most scheduling steps per run.
    #[arg(long, default_value_t = jostle_kernel::config::DEFAULT_STEP_LIMIT)]
    step_limit: u32,
    /// Wall-clock limit of each run, in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    #[command(flatten)]
    via: Via,
}

#[derive(Args)]
struct ReplayArgs {
    #[command(flatten)]
    firmware: FirmwareArgs,
    /// The campaign's report directory (or report.json).
    #[arg(long, requires = "bug")]
    report: Option<PathBuf>,
    /// The bug id (from the report).
    #[arg(long, requires = "report")]
    bug: Option<String>,
    /// Without --report: the run's seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    steer: StrategyArgs,
    /// A firmware argument (repeat for more; without --report).
    #[arg(long = "arg")]
    args: Vec<u32>,
    /// Steps shown before and after the bug.
    #[arg(long, default_value_t = 20)]
    context: usize,
    /// Wall-clock limit of the run, in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    #[command(flatten)]
    via: Via,
}

#[derive(Args)]
struct MergeArgs {
    /// Shard reports (directories or report.json files).
    #[arg(required = true)]
    reports: Vec<PathBuf>,
    /// Where the merged report.json and report.html go.
    #[arg(long, default_value = "jostle-report")]
    report: PathBuf,
    /// Also write a JUnit XML file.
    #[arg(long)]
    junit: Option<PathBuf>,
    /// Print the merged report as JSON instead of the table.
    #[arg(long)]
    json: bool,
}

/// Where runs happen: QEMU (default), the host port, or a board through a debug probe.
#[derive(Args, Clone)]
struct Via {
    /// Run on the host port (one OS thread per task) instead of QEMU.
    #[arg(long, conflicts_with = "probe")]
    host: bool,
    /// Run on a board through a debug probe (probe-rs): the only one connected, or the one
    /// `VID:PID[:SERIAL]` selects. Needs --chip and an ELF built for the board.
    #[arg(long, num_args = 0..=1, default_missing_value = "", requires = "chip", value_name = "SELECTOR")]
    probe: Option<String>,
    /// The board's chip, as probe-rs names it (e.g. nRF52840_xxAA, STM32F411RETx, RP2040).
    #[arg(long, requires = "probe")]
    chip: Option<String>,
}

impl Via {
    /// The firmware file for this kind of target (a board needs an ELF built for it).
    fn firmware(&self, fw: &FirmwareArgs) -> Result<PathBuf, JostleError> {
        if self.probe.is_some() && fw.elf.is_none() {
            return Err(JostleError::Usage(
                "--probe runs an ELF built for the board (e.g. `cargo firmware-nrf52840`); give its path".into(),
            ));
        }
        resolve_firmware(fw, self.host)
    }

    /// The runner: QEMU, the host port, or the board (attached and flashed once).
    fn runner(&self, path: PathBuf, timeout: f64) -> Result<Runner, JostleError> {
        match (&self.probe, &self.chip) {
            (Some(selector), Some(chip)) => Runner::probe(path, chip, selector, timeout),
            _ => Runner::new(path, self.host, timeout),
        }
    }

    /// How the command line names this target, for replay commands.
    fn describe(&self) -> String {
        match (&self.probe, &self.chip) {
            (Some(sel), Some(chip)) if sel.is_empty() => format!(" --probe --chip {chip}"),
            (Some(sel), Some(chip)) => format!(" --probe {sel} --chip {chip}"),
            _ if self.host => " --host".into(),
            _ => String::new(),
        }
    }
}

/// Which firmware: an ELF path, or a package and binary to build (as `cargo embed` does).
#[derive(Args, Clone)]
struct FirmwareArgs {
    /// Firmware ELF (or, with --host, a host-port executable).
    elf: Option<PathBuf>,
    /// Package to build the firmware from.
    #[arg(short = 'p', long, requires = "bin")]
    package: Option<String>,
    /// Binary of that package.
    #[arg(long, requires = "package")]
    bin: Option<String>,
    /// Cargo target directory for the build.
    #[arg(long, env = "JOSTLE_TARGET_DIR")]
    target_dir: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Trace {
    Full,
    Sync,
    Results,
}

#[derive(Clone, Copy, ValueEnum)]
enum StrategyArg {
    /// Uniform among enabled tasks.
    Random,
    /// RaceFuzzer: make a predicted race real.
    Race,
    /// AtomFuzzer: make an atomicity violation real.
    Atom,
    /// DeadlockFuzzer: close a predicted lock cycle.
    Deadlock,
    /// DrFinder: reverse lock hand-offs along may-trigger relations.
    Drfinder,
    /// PCT (probabilistic concurrency testing): random priorities and change points.
    Pct,
}

impl StrategyArg {
    fn id(self) -> StrategyId {
        match self {
            StrategyArg::Random => StrategyId::Random,
            StrategyArg::Race => StrategyId::Race,
            StrategyArg::Atom => StrategyId::Atom,
            StrategyArg::Deadlock => StrategyId::Deadlock,
            StrategyArg::Drfinder => StrategyId::DrFinder,
            StrategyArg::Pct => StrategyId::Pct,
        }
    }
}

/// How an active run is steered.
#[derive(Args, Clone)]
struct StrategyArgs {
    /// The scheduling strategy.
    #[arg(long, value_enum, default_value = "random")]
    strategy: StrategyArg,
    /// What to aim at: a candidate id from the prediction file, or sites
    /// `file.rs:LINE:COL,file.rs:LINE:COL`.
    #[arg(long)]
    target: Option<String>,
    /// The prediction file that candidate ids come from.
    #[arg(long, default_value = "jostle-report/prediction.json")]
    prediction: PathBuf,
    /// AtomFuzzer's pause probability q.
    #[arg(long, default_value_t = 0.5)]
    q: f64,
    /// PCT's depth d (bugs of depth d are found with probability >= 1/(n k^(d-1))).
    #[arg(long, default_value_t = 3)]
    pct_depth: u32,
    /// PCT's step bound k, in scheduling steps (0: the length of a Random run of the same
    /// seed, measured first).
    #[arg(long, default_value_t = 0)]
    pct_steps: u32,
    /// Scheduling steps a postponed task may wait before it is released.
    #[arg(long, default_value_t = jostle_kernel::config::DEFAULT_LIVELOCK_BOUND)]
    livelock_bound: u32,
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    firmware: FirmwareArgs,
    #[command(flatten)]
    steer: StrategyArgs,
    /// Seed of the scheduler.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Most scheduling steps before the `step_limit` verdict.
    #[arg(long, default_value_t = jostle_kernel::config::DEFAULT_STEP_LIMIT)]
    step_limit: u32,
    /// Which events the firmware emits.
    #[arg(long, value_enum, default_value = "full")]
    trace: Trace,
    /// A firmware argument (repeat for more; read with `arg(i)`).
    #[arg(long = "arg")]
    args: Vec<u32>,
    /// One JSON object per event, then a summary object.
    #[arg(long)]
    json: bool,
    /// Wall-clock limit of the run, in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    #[command(flatten)]
    via: Via,
    /// Use this raw configuration block file instead of building one from the options.
    #[arg(long)]
    config_file: Option<PathBuf>,
    /// QEMU: boot with this block file in the board's flash page and no RAM block, as a
    /// board does at power-up after `jostle flash-config` (the options' block is not used).
    #[arg(long, conflicts_with_all = ["config_file", "host"])]
    flash_config: Option<PathBuf>,
    /// Run this many consecutive seeds (several per QEMU boot) and print one verdict line
    /// (or, with --json, one summary object) per run; exits with the first failure's code.
    #[arg(long, default_value_t = 1, conflicts_with = "config_file")]
    runs: u32,
}

/// What every run of a multi-run command shares.
#[derive(Args, Clone)]
struct EachRun {
    /// First seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// A firmware argument (repeat for more).
    #[arg(long = "arg")]
    args: Vec<u32>,
    /// Most scheduling steps per run.
    #[arg(long, default_value_t = jostle_kernel::config::DEFAULT_STEP_LIMIT)]
    step_limit: u32,
    /// Wall-clock limit of each run, in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Run on the host port instead of QEMU.
    #[arg(long)]
    host: bool,
}

#[derive(Args)]
struct PredictArgs {
    #[command(flatten)]
    firmware: FirmwareArgs,
    /// Random-strategy runs to analyse (seeds --seed, --seed+1, ...).
    #[arg(long, default_value_t = 10)]
    runs: u32,
    #[command(flatten)]
    each: EachRun,
    /// Analyse saved `jostle run --json` output instead of running (repeat for more files).
    #[arg(long = "trace", conflicts_with_all = ["elf", "package", "host"])]
    traces: Vec<PathBuf>,
    /// Where to write the prediction.
    #[arg(long, default_value = "jostle-report/prediction.json")]
    out: PathBuf,
    /// Print the prediction as JSON instead of the listing.
    #[arg(long)]
    json: bool,
    /// Longest deadlock cycle searched (iGoodlock's k).
    #[arg(long, default_value_t = 4)]
    cycle_len: usize,
    /// DrFinder may-trigger depth d.
    #[arg(long, default_value_t = jostle_checker::drfinder::DEFAULT_DEPTH)]
    mt_depth: usize,
    /// Also run the precise lockset detector (noisier than hybrid).
    #[arg(long)]
    precise_lockset: bool,
    /// Do not treat lock critical sections as atomic blocks when the firmware declares none.
    #[arg(long)]
    no_atomizer: bool,
}

#[derive(Args)]
struct ConfirmArgs {
    #[command(flatten)]
    firmware: FirmwareArgs,
    #[command(flatten)]
    steer: StrategyArgs,
    /// Runs per target (seeds --seed, --seed+1, ...).
    #[arg(long, default_value_t = 200)]
    runs: u32,
    #[command(flatten)]
    each: EachRun,
    /// One JSON object per row.
    #[arg(long)]
    json: bool,
    /// A label printed at the start of each row (e.g. the example and its filler).
    #[arg(long, default_value = "")]
    label: String,
    /// Also count a run as confirmed when the happens-before detector finds the targeted
    /// race in its full trace (DrFinder's measure; use it for the rows beside DrFinder).
    #[arg(long)]
    happened: bool,
}

#[derive(Args)]
struct ConfigArgs {
    /// The firmware the block is for (needed to resolve --target sites and for DrFinder).
    #[command(flatten)]
    firmware: FirmwareArgs,
    #[command(flatten)]
    steer: StrategyArgs,
    /// Seed of the scheduler.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Most scheduling steps before the `step_limit` verdict.
    #[arg(long, default_value_t = jostle_kernel::config::DEFAULT_STEP_LIMIT)]
    step_limit: u32,
    /// Which events the firmware emits.
    #[arg(long, value_enum, default_value = "full")]
    trace: Trace,
    /// A firmware argument (repeat for more).
    #[arg(long = "arg")]
    args: Vec<u32>,
    /// The firmware is a host-port executable.
    #[arg(long)]
    host: bool,
    /// Where to write the block.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
struct BenchArgs {
    #[command(flatten)]
    firmware: FirmwareArgs,
    /// Runs to time.
    #[arg(long, default_value_t = 100)]
    runs: u32,
    /// A firmware argument for every run (repeat for more).
    #[arg(long = "arg")]
    args: Vec<u32>,
}

fn resolve_firmware(fw: &FirmwareArgs, host: bool) -> Result<PathBuf, JostleError> {
    match (&fw.elf, &fw.package, &fw.bin) {
        (Some(path), None, None) => Ok(path.clone()),
        (None, Some(p), Some(b)) => {
            let target = if host { None } else { Some(QEMU_TARGET) };
            cargo_build(p, b, target, fw.target_dir.as_deref())
        }
        _ => Err(JostleError::Usage(
            "give a firmware ELF, or -p PACKAGE --bin BIN (not both)".into(),
        )),
    }
}

impl Trace {
    fn level(self) -> TraceLevel {
        match self {
            Trace::Full => TraceLevel::Full,
            Trace::Sync => TraceLevel::Sync,
            Trace::Results => TraceLevel::Results,
        }
    }
}

fn config_of(args: &RunArgs) -> Result<Config, JostleError> {
    base_config(args.seed, args.step_limit, &args.args, args.trace.level())
}

/// A Random-strategy configuration with these settings, checked.
fn base_config(
    seed: u64,
    step_limit: u32,
    args: &[u32],
    trace: TraceLevel,
) -> Result<Config, JostleError> {
    if step_limit == 0 {
        return Err(JostleError::Usage("--step-limit must be at least 1".into()));
    }
    let args = heapless::Vec::from_slice(args).map_err(|()| {
        JostleError::Usage(format!(
            "at most {} --arg values",
            jostle_kernel::config::MAX_ARGS
        ))
    })?;
    Ok(Config {
        seed,
        step_limit,
        trace,
        args,
        ..Config::default()
    })
}

impl EachRun {
    /// The configuration every run starts from (the seed is set per run).
    fn config(&self, trace: TraceLevel) -> Result<Config, JostleError> {
        base_config(self.seed, self.step_limit, &self.args, trace)
    }

    /// Builds or loads the firmware and the runner for it.
    fn runner(&self, firmware: &FirmwareArgs) -> Result<Runner, JostleError> {
        let path = resolve_firmware(firmware, self.host)?;
        Runner::new(path, self.host, self.timeout)
    }
}

/// Sets the strategy and its parameters (no breakpoints).
fn steer_untargeted(config: &mut Config, args: &StrategyArgs) -> Result<(), JostleError> {
    let strategy = args.strategy.id();
    config.strategy = strategy;
    config.livelock_bound = args.livelock_bound.max(1);
    config.params = match strategy {
        StrategyId::Atom => {
            if !(0.0..=1.0).contains(&args.q) || args.q == 0.0 {
                return Err(JostleError::Usage("--q must be in (0, 1]".into()));
            }
            let one = f64::from(jostle_kernel::strategy::Q_ONE);
            [(args.q * one).round().max(1.0) as u32, 0, 0, 0]
        }
        StrategyId::Pct => [args.pct_depth.max(1), args.pct_steps, 0, 0],
        _ => [0; 4],
    };
    Ok(())
}

/// Sets the strategy, its parameters and the target's breakpoints.
fn steer(config: &mut Config, args: &StrategyArgs, target: &Runner) -> Result<(), JostleError> {
    use jostle_host_tools::predict::{fingerprint, read_prediction};
    use jostle_host_tools::targeting::{
        candidate, candidate_breakpoints, is_candidate_id, site_breakpoints, strategy_name,
    };
    steer_untargeted(config, args)?;
    let strategy = config.strategy;
    let space = target.space();
    // The prediction file, and whether its site ids are this image's: read once, when a
    // candidate id or DrFinder's relations need it.
    let by_id = args.target.as_deref().is_some_and(is_candidate_id);
    let loaded = if by_id || strategy == StrategyId::DrFinder {
        match read_prediction(&args.prediction) {
            Ok(p) => {
                let same_image =
                    p.firmware.as_deref() == Some(fingerprint(target.path())?.as_str());
                Some((p, same_image))
            }
            Err(e) if by_id => return Err(e),
            Err(e) => {
                return Err(JostleError::BadPrediction(format!(
                    "--strategy drfinder needs the relations of a previous run ({e}); run `jostle predict` first"
                )));
            }
        }
    } else {
        None
    };
    let mut breakpoints = match &args.target {
        None if matches!(strategy, StrategyId::Race | StrategyId::Deadlock) => {
            return Err(JostleError::Usage(format!(
                "--strategy {} needs --target (a candidate id or sites)",
                strategy_name(strategy)
            )));
        }
        None => Vec::new(),
        Some(spec) if is_candidate_id(spec) => {
            let (p, same_image) = loaded.as_ref().expect("read for a candidate id");
            candidate_breakpoints(candidate(p, spec)?, p, strategy, &space, *same_image)?
        }
        Some(spec) => {
            let sites: Vec<&str> = spec.split(',').collect();
            site_breakpoints(&sites, strategy, &space)?
        }
    };
    if strategy == StrategyId::DrFinder {
        // The may-trigger relations of a previous run of this image (lock classes are
        // addresses of one image, so they are not carried across builds).
        let (p, same_image) = loaded.as_ref().expect("read for DrFinder");
        if !same_image {
            return Err(JostleError::BadPrediction(format!(
                "{}: made on another image; DrFinder's relations name lock classes of one image",
                args.prediction.display()
            )));
        }
        let (bps, kept) =
            jostle_host_tools::targeting::relation_breakpoints(&p.relations, breakpoints.len());
        if kept < p.relations.len() {
            eprintln!(
                "jostle: note: {kept} of {} may-trigger relations fit in the configuration block",
                p.relations.len()
            );
        }
        breakpoints.extend(bps);
        // DrFinder's confirmation is the happens-before detector's, over the full trace.
        config.trace = TraceLevel::Full;
    }
    config.breakpoints = heapless::Vec::from_slice(&breakpoints)
        .map_err(|()| JostleError::Usage("too many breakpoints".into()))?;
    Ok(())
}

fn run(args: RunArgs) -> Result<u8, JostleError> {
    let mut config = config_of(&args)?;
    let path = args.via.firmware(&args.firmware)?;
    let target = args.via.runner(path, args.timeout)?;
    steer(&mut config, &args.steer, &target)?;
    jostle_host_tools::confirm::bound_pct(&target, &mut config)?;
    if args.runs > 1 {
        return run_several(&target, &config, args.runs, args.json);
    }
    let outcome = match (&args.flash_config, &target) {
        (Some(flash), Runner::Qemu(fw, qemu)) => {
            // What the flash block says, for the report of this run.
            let bytes = std::fs::read(flash)
                .map_err(|e| JostleError::io(format!("reading {}", flash.display()), e))?;
            let config = Config::decode(&bytes).ok().flatten().unwrap_or_default();
            let raw = qemu.run_with_blocks(fw, None, Some(flash))?;
            jostle_host_tools::RunOutcome::from_qemu(fw, config, raw)
        }
        _ => target.run(config, args.config_file.as_ref())?,
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let printed = if args.json {
        outcome.print_json(&mut out)
    } else {
        outcome.print_human(&mut out)
    };
    printed.map_err(|e| JostleError::io("writing the output", e))?;
    let _ = out.flush();
    if let Some(err) = outcome.error {
        return Err(err);
    }
    Ok(outcome.outcome.map_or(23, |o| o.exit_code()))
}

/// `jostle run --runs N`: one line (or summary object) per run.
fn run_several(target: &Runner, config: &Config, runs: u32, json: bool) -> Result<u8, JostleError> {
    let outcomes = target.run_batch(config, runs)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut code = 0;
    for o in outcomes {
        let line = if json {
            o.summary().to_string()
        } else {
            format!("seed {}: {}", o.config.seed, o.verdict_line())
        };
        writeln!(out, "{line}").map_err(|e| JostleError::io("writing the output", e))?;
        if let Some(err) = o.error {
            return Err(err);
        }
        let c = o.outcome.map_or(23, |v| v.exit_code());
        if code == 0 {
            code = c;
        }
    }
    Ok(code)
}

fn write_config(args: ConfigArgs) -> Result<u8, JostleError> {
    let mut config = base_config(args.seed, args.step_limit, &args.args, args.trace.level())?;
    let f = &args.firmware;
    if f.elf.is_some() || f.package.is_some() {
        let path = resolve_firmware(f, args.host)?;
        let target = Runner::new(path, args.host, 10.0)?;
        steer(&mut config, &args.steer, &target)?;
        jostle_host_tools::confirm::bound_pct(&target, &mut config)?;
    } else if args.steer.target.is_some()
        || matches!(
            args.steer.strategy,
            StrategyArg::Race | StrategyArg::Deadlock | StrategyArg::Drfinder
        )
        || (matches!(args.steer.strategy, StrategyArg::Pct) && args.steer.pct_steps == 0)
    {
        return Err(JostleError::Usage(
            "--target, --strategy race|deadlock|drfinder and PCT without --pct-steps need the firmware (ELF or -p/--bin)".into(),
        ));
    } else {
        steer_untargeted(&mut config, &args.steer)?;
    }
    let block = config.encode();
    std::fs::write(&args.out, block)
        .map_err(|e| JostleError::io(format!("writing {}", args.out.display()), e))?;
    println!(
        "{}: {} bytes, seed {}, strategy {}",
        args.out.display(),
        block.len(),
        config.seed,
        jostle_host_tools::targeting::strategy_name(config.strategy)
    );
    Ok(0)
}

fn predict(args: PredictArgs) -> Result<u8, JostleError> {
    use jostle_host_tools::predict::{
        fingerprint, predict_trace, print_prediction, traces_from_json, write_prediction,
    };
    let options = jostle_checker::Options {
        max_cycle_len: args.cycle_len,
        may_trigger_depth: args.mt_depth,
        precise_lockset: args.precise_lockset,
        atomizer_heuristic: !args.no_atomizer,
        ..jostle_checker::Options::default()
    };
    let mut prediction = jostle_checker::Prediction::new();
    let mut traces = 0u32;
    let mut failure = None;
    if !args.traces.is_empty() {
        for file in &args.traces {
            let text = std::fs::read_to_string(file)
                .map_err(|e| JostleError::io(format!("reading {}", file.display()), e))?;
            for trace in traces_from_json(&text, &file.display().to_string())? {
                prediction.merge(predict_trace(&trace, traces, &options));
                traces += 1;
            }
        }
    } else {
        if args.runs == 0 {
            return Err(JostleError::Usage("--runs must be at least 1".into()));
        }
        let base = args.each.config(TraceLevel::Full)?;
        let target = args.each.runner(&args.firmware)?;
        prediction.firmware = Some(fingerprint(target.path())?);
        for i in 0..args.runs {
            let seed = args.each.seed.wrapping_add(u64::from(i));
            let config = Config {
                seed,
                ..base.clone()
            };
            let outcome = match target.run(config, None) {
                Ok(o) => o,
                Err(e) => {
                    failure = Some((seed, e));
                    break;
                }
            };
            prediction.merge(predict_trace(
                &jostle_host_tools::predict::Trace::of_run(&outcome),
                i,
                &options,
            ));
            traces += 1;
            if let Some(e) = outcome.error {
                failure = Some((seed, e));
                break;
            }
            // After every run, so that an interrupted prediction keeps what it found.
            write_prediction(&prediction, &args.out)?;
        }
    }
    write_prediction(&prediction, &args.out)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let printed = if args.json {
        writeln!(out, "{}", prediction.to_json())
    } else {
        print_prediction(&prediction, &mut out)
            .and_then(|()| writeln!(out, "from {traces} traces; wrote {}", args.out.display()))
    };
    printed.map_err(|e| JostleError::io("writing the output", e))?;
    match failure {
        Some((seed, e)) => {
            eprintln!(
                "jostle: the run with seed {seed} failed; the prediction holds the {traces} traces before it"
            );
            Err(e)
        }
        None => Ok(0),
    }
}

fn confirm(args: ConfirmArgs) -> Result<u8, JostleError> {
    use jostle_checker::CandidateKind;
    use jostle_host_tools::predict::{read_prediction, site_text};
    use jostle_host_tools::targeting::{strategy_for, strategy_name};
    let base = args.each.config(TraceLevel::Results)?;
    let runner = args.each.runner(&args.firmware)?;
    let strategy = args.steer.strategy.id();
    // (what the row is about, the steering for it)
    let mut targets: Vec<(String, StrategyArgs)> = Vec::new();
    if let Some(spec) = &args.steer.target {
        targets.push((spec.clone(), args.steer.clone()));
    } else {
        let prediction = if args.steer.prediction.exists() {
            Some(read_prediction(&args.steer.prediction)?)
        } else {
            None
        };
        for c in prediction.iter().flat_map(|p| {
            p.candidates
                .iter()
                .filter(|c| {
                    matches!(strategy, StrategyId::Random | StrategyId::Pct)
                        || strategy_for(c.kind) == strategy
                        || (strategy == StrategyId::DrFinder && c.kind == CandidateKind::Race)
                })
                .map(move |c| (p, c))
        }) {
            let (p, c) = c;
            let sites: Vec<String> = c.sites.iter().map(|s| site_text(p, *s)).collect();
            let steer = StrategyArgs {
                target: Some(c.id.clone()),
                ..args.steer.clone()
            };
            targets.push((
                format!("{} {} {}", c.kind.name(), c.id, sites.join(" ")),
                steer,
            ));
        }
        if targets.is_empty() {
            if matches!(strategy, StrategyId::Race | StrategyId::Deadlock) {
                return Err(JostleError::BadPrediction(format!(
                    "{}: no candidate for --strategy {} (run `jostle predict` first, or give --target)",
                    args.steer.prediction.display(),
                    strategy_name(strategy)
                )));
            }
            targets.push(("untargeted".into(), args.steer.clone()));
        }
    }
    let stdout = std::io::stdout();
    for (what, steer_args) in targets {
        let mut config = base.clone();
        steer(&mut config, &steer_args, &runner)?;
        let tally = jostle_host_tools::confirm::tally(
            &runner,
            &config,
            args.each.seed,
            args.runs,
            args.happened,
        )?;
        let mut out = stdout.lock();
        let mut name = strategy_name(strategy).to_owned();
        if strategy == StrategyId::Atom {
            name += &format!(" q={}", args.steer.q);
        }
        if args.happened {
            name += " (hb)";
        }
        let printed = if args.json {
            writeln!(
                out,
                "{}",
                serde_json::json!({
                    "label": args.label,
                    "strategy": name,
                    "target": what,
                    "args": args.each.args,
                    "first_seed": args.each.seed,
                    "tally": tally,
                })
            )
        } else {
            writeln!(
                out,
                "{}{name:<10} {what}\n    {}",
                label_prefix(&args.label),
                tally.line()
            )
        };
        printed.map_err(|e| JostleError::io("writing the output", e))?;
    }
    Ok(0)
}

fn label_prefix(label: &str) -> String {
    if label.is_empty() {
        String::new()
    } else {
        format!("{label:<18} ")
    }
}

fn bench(args: BenchArgs) -> anyhow::Result<u8> {
    let path = match (&args.firmware.elf, &args.firmware.package) {
        (None, None) => cargo_build(
            "jostle-examples",
            "correct_counter",
            Some(QEMU_TARGET),
            args.firmware.target_dir.as_deref(),
        )?,
        _ => resolve_firmware(&args.firmware, false)?,
    };
    let fw = Firmware::load(&path)?;
    let qemu = Qemu::default();
    for trace in [TraceLevel::Full, TraceLevel::Results] {
        let started = Instant::now();
        let mut frames = 0;
        for seed in 0..args.runs as u64 {
            let config = Config {
                seed,
                trace,
                args: bench_args(&args)?,
                ..Config::default()
            };
            let raw = qemu.run(&fw, &config)?;
            let outcome = RunOutcome::from_qemu(&fw, config, raw);
            if let Some(e) = outcome.error {
                return Err(e).context(format!("seed {seed}"));
            }
            frames += outcome.frames;
        }
        let secs = started.elapsed().as_secs_f64();
        println!(
            "qemu runs/s  {:<28} trace={:<7} {:>7.1} runs/s  ({} runs, {:.0} frames/s decoded)",
            fw.path.file_name().unwrap_or_default().to_string_lossy(),
            format!("{trace:?}").to_lowercase(),
            args.runs as f64 / secs,
            args.runs,
            frames as f64 / secs
        );
    }
    strategy_runs(&fw, &qemu, &args)?;
    decode_throughput(&fw, &qemu, bench_args(&args)?)?;
    kernel_costs(&args)?;
    Ok(0)
}

/// Runs per second under each strategy (results-only trace, untargeted: the cost of the
/// strategy's own bookkeeping on a whole run).
fn strategy_runs(fw: &Firmware, qemu: &Qemu, args: &BenchArgs) -> anyhow::Result<()> {
    for (strategy, params) in [
        (StrategyId::Random, [0; 4]),
        (
            StrategyId::Atom,
            [jostle_kernel::strategy::Q_ONE / 2, 0, 0, 0],
        ),
        (StrategyId::Pct, [3, 1000, 0, 0]),
    ] {
        let started = Instant::now();
        for seed in 0..u64::from(args.runs) {
            let config = Config {
                seed,
                strategy,
                params,
                trace: TraceLevel::Results,
                args: bench_args(args)?,
                ..Config::default()
            };
            let outcome = RunOutcome::from_qemu(fw, config.clone(), qemu.run(fw, &config)?);
            if let Some(e) = outcome.error {
                return Err(e).context(format!("seed {seed}"));
            }
        }
        println!(
            "qemu runs/s  {:<28} strategy={:<8} {:>7.1} runs/s",
            fw.path.file_name().unwrap_or_default().to_string_lossy(),
            jostle_host_tools::targeting::strategy_name(strategy),
            f64::from(args.runs) / started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn bench_args(
    args: &BenchArgs,
) -> Result<heapless::Vec<u32, { jostle_kernel::config::MAX_ARGS }>, JostleError> {
    heapless::Vec::from_slice(&args.args).map_err(|()| {
        JostleError::Usage(format!(
            "at most {} --arg values",
            jostle_kernel::config::MAX_ARGS
        ))
    })
}

/// Frames per second from raw defmt bytes to typed events (what Phase I pays per trace):
/// one full-trace QEMU stream, decoded again and again for about a second.
fn decode_throughput(
    fw: &Firmware,
    qemu: &Qemu,
    args: heapless::Vec<u32, { jostle_kernel::config::MAX_ARGS }>,
) -> anyhow::Result<()> {
    let config = Config {
        trace: TraceLevel::Full,
        args,
        ..Config::default()
    };
    let raw = qemu.run(fw, &config)?;
    let mut decoder = jostle_host_tools::decode::FrameDecoder::new(&fw.table);
    let (mut frames, mut events, mut rounds) = (0usize, 0usize, 0u32);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(1) || rounds < 3 {
        let decoded = decoder.decode_all(&raw.stdout);
        if let Some(e) = decoded.error {
            return Err(e.into());
        }
        frames += decoded.frames;
        events += decoded
            .items
            .iter()
            .filter(|i| matches!(i, jostle_host_tools::decode::Item::Event(_)))
            .count();
        rounds += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "decode       defmt frames -> typed events: {:.0} frames/s, {:.0} events/s, {:.1} MB/s ({} bytes x {rounds})",
        frames as f64 / secs,
        events as f64 / secs,
        (raw.stdout.len() as f64 * f64::from(rounds)) / secs / 1e6,
        raw.stdout.len()
    );
    Ok(())
}

/// Instructions per scheduling point and per switch under each strategy, from the
/// `sched_cost` test firmware: SysTick under `-icount` counts instructions; a known
/// two-instruction loop calibrates it. Active strategies get breakpoints that the measured
/// sites never match, so this is their non-breakpoint path.
fn kernel_costs(args: &BenchArgs) -> anyhow::Result<()> {
    use jostle_kernel::config::Breakpoint;
    use jostle_kernel::targets::{aux, role};
    let path = cargo_build(
        "jostle-test-firmware",
        "sched_cost",
        Some(QEMU_TARGET),
        args.firmware.target_dir.as_deref(),
    )
    .context("the kernel-cost benchmark needs the Jostle workspace (jostle-test-firmware)")?;
    let fw = Firmware::load(&path)?;
    let elsewhere = |r: u8, i: u8| Breakpoint {
        site: 1,
        aux: aux(r, i),
    };
    let strategies = [
        (StrategyId::Random, vec![], [0; 4]),
        (
            StrategyId::Race,
            vec![elsewhere(role::RACE, 0), elsewhere(role::RACE, 1)],
            [0; 4],
        ),
        (
            StrategyId::Atom,
            vec![],
            [jostle_kernel::strategy::Q_ONE / 2, 0, 0, 0],
        ),
        (
            StrategyId::Deadlock,
            vec![elsewhere(role::ACQUIRE, 0), elsewhere(role::CONTEXT, 0)],
            [0; 4],
        ),
        (StrategyId::Pct, vec![], [3, 10_000, 0, 0]),
    ];
    println!("kernel cost  (instructions, trace=results, -icount shift=0; non-breakpoint sites)");
    for (strategy, bps, params) in strategies {
        let config = Config {
            trace: TraceLevel::Results,
            strategy,
            params,
            breakpoints: heapless::Vec::from_slice(&bps).unwrap_or_default(),
            ..Config::default()
        };
        let raw = Qemu::default().run(&fw, &config)?;
        let outcome = RunOutcome::from_qemu(&fw, config, raw);
        if let Some(e) = outcome.error {
            return Err(e.into());
        }
        let field = |line: &str, name: &str| -> Option<f64> {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))?
                .parse()
                .ok()
        };
        let find = |prefix: &str| {
            outcome
                .logs
                .iter()
                .find(|l| l.starts_with(prefix))
                .cloned()
                .with_context(|| format!("sched_cost printed no `{prefix}` line"))
        };
        let cal = find("cost calibration")?;
        let per_tick =
            field(&cal, "instructions").unwrap_or(0.0) / field(&cal, "ticks").unwrap_or(1.0);
        let per_point = |line: &str| {
            field(line, "ticks").unwrap_or(0.0) * per_tick / field(line, "points").unwrap_or(1.0)
        };
        let point_cost = per_point(&find("cost point")?);
        let access_cost = per_point(&find("cost access")?);
        let ping = find("cost pingpong")?;
        let (points, switches) = (
            field(&ping, "points").unwrap_or(1.0),
            field(&ping, "switches").unwrap_or(1.0),
        );
        let total = field(&ping, "ticks").unwrap_or(0.0) * per_tick;
        // Points that did not switch cost what a lone task's point costs (measured above;
        // with two tasks the strategy has two candidates, which is charged to the switch).
        // PCT runs the higher-priority task to its end: too few switches to measure one.
        let switch_cost = if switches * 10.0 >= points {
            format!(
                "{:>6.1}",
                (total - (points - switches) * point_cost) / switches
            )
        } else {
            format!("{:>6}", "-")
        };
        println!(
            "kernel cost  {:<9} yield point {point_cost:>6.1}  access (not a breakpoint) {access_cost:>6.1}  two tasks: mean point {:>6.1}, point with switch {switch_cost}  ({per_tick:.0} instr/tick)",
            jostle_host_tools::targeting::strategy_name(strategy),
            total / points
        );
    }
    Ok(())
}

/// `--budget`: a run count, or a duration with a unit (s, m, h).
fn parse_budget(text: &str) -> Result<jostle_host_tools::campaign::Budget, JostleError> {
    use jostle_host_tools::campaign::Budget;
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
fn parse_shard(text: &str) -> Result<(u32, u32), JostleError> {
    let bad = || JostleError::Usage(format!("--shard {text}: expected I/N with 0 <= I < N"));
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (u32, u32) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// How the command line named the firmware, for the replay commands in the report.
fn firmware_command(fw: &FirmwareArgs, path: &std::path::Path, via: &Via) -> String {
    let c = match (&fw.package, &fw.bin) {
        (Some(p), Some(b)) => format!("-p {p} --bin {b}"),
        _ => path.display().to_string(),
    };
    format!("{c}{}", via.describe())
}

fn campaign(args: CampaignArgs) -> Result<u8, JostleError> {
    use jostle_host_tools::campaign::{Budget, Campaign, Settings};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let budget = match &args.budget {
        Some(b) => parse_budget(b)?,
        None => Budget::Unlimited,
    };
    let shard = match &args.shard {
        Some(s) => parse_shard(s)?,
        None => (0, 1),
    };
    let base = base_config(args.seed, args.step_limit, &args.args, TraceLevel::Full)?;
    let path = args.via.firmware(&args.firmware)?;
    let runner = args.via.runner(path.clone(), args.timeout)?;
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    if jobs == 0 {
        return Err(JostleError::Usage("-j must be at least 1".into()));
    }
    // One board, one run at a time (shard across boards with --shard instead).
    let jobs = if args.via.probe.is_some() { 1 } else { jobs };
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
        firmware_command: firmware_command(&args.firmware, &path, &args.via),
        report_dir: args.report.clone(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // A second Ctrl-C while the report is written is ignored: it is written quickly.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let progress = progress::Progress::new();
    let mut c = Campaign::new(&runner, settings, stop.clone());
    let result = c.run(&|s| progress.update(s));
    progress.finish(&c.status());
    let report = c.report().clone();
    if let Some(junit) = &args.junit {
        jostle_host_tools::report::write_atomic(junit, report.junit().as_bytes())?;
    }
    print_report(&report, args.json)?;
    eprintln!(
        "jostle: report in {} (report.json, report.html)",
        args.report.display()
    );
    result?;
    Ok(if stop.load(Ordering::SeqCst) {
        EXIT_INTERRUPTED
    } else if report.any_harmful() {
        EXIT_HARMFUL
    } else {
        0
    })
}

fn print_report(report: &jostle_host_tools::report::Report, json: bool) -> Result<(), JostleError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let printed = if json {
        serde_json::to_writer_pretty(&mut out, report)
            .map_err(std::io::Error::other)
            .and_then(|()| writeln!(out))
    } else {
        report.print_table(&mut out)
    };
    printed.map_err(|e| JostleError::io("writing the output", e))
}

fn replay(args: ReplayArgs) -> Result<u8, JostleError> {
    use jostle_host_tools::replay::{check_reproduced, config_for, find_bug, print_around};
    let path = args.via.firmware(&args.firmware)?;
    let runner = args.via.runner(path, args.timeout)?;
    let (config, recorded) = match (&args.report, &args.bug) {
        (Some(dir), Some(id)) => {
            let report = jostle_host_tools::report::Report::read(dir)?;
            let (bug, r) = find_bug(&report, id)?;
            let config = config_for(&report, r, &runner)?;
            let same_image = jostle_host_tools::predict::fingerprint(runner.path())
                .is_ok_and(|f| f == report.firmware.fingerprint);
            (config, Some((bug.clone(), r.clone(), same_image)))
        }
        _ => {
            let mut config = base_config(
                args.seed,
                jostle_kernel::config::DEFAULT_STEP_LIMIT,
                &args.args,
                TraceLevel::Full,
            )?;
            steer(&mut config, &args.steer, &runner)?;
            jostle_host_tools::confirm::bound_pct(&runner, &mut config)?;
            config.trace = TraceLevel::Full;
            (config, None)
        }
    };
    let outcome = runner.run(config, None)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    print_around(&outcome, args.context, &mut out)
        .map_err(|e| JostleError::io("writing the output", e))?;
    if let Some(err) = outcome.error {
        return Err(err);
    }
    if let Some((bug, r, same_image)) = recorded {
        check_reproduced(&bug, &r, &outcome, same_image)?;
        let _ = writeln!(out, "reproduced: {} {} (seed {})", bug.kind, bug.id, r.seed);
    }
    Ok(outcome.outcome.map_or(23, |o| o.exit_code()))
}

fn flash_config(args: FlashConfigArgs) -> Result<u8, JostleError> {
    let mut config = base_config(args.seed, args.step_limit, &args.args, args.trace.level())?;
    // Chip first: an unknown name is reported without looking for a probe.
    jostle_host_tools::probe::chip(&args.chip)?;
    let target = Runner::probe(args.elf.clone(), &args.chip, &args.probe, 10.0)?;
    steer(&mut config, &args.steer, &target)?;
    if config.strategy == StrategyId::Pct && config.params[1] == 0 {
        return Err(JostleError::Usage(
            "flash-config with --strategy pct needs --pct-steps (no run to measure it from)".into(),
        ));
    }
    let Runner::Probe(board) = &target else {
        unreachable!("Runner::probe gives a probe runner")
    };
    let addr = board.flash_config(&config)?;
    println!(
        "{}: flashed, with the block of seed {} ({}) at {addr:#010x}: the board replays this run at every power-up; `cargo embed` shows its events",
        args.elf.display(),
        config.seed,
        jostle_host_tools::targeting::strategy_name(config.strategy)
    );
    Ok(0)
}

fn merge(args: MergeArgs) -> Result<u8, JostleError> {
    use jostle_host_tools::report::{Report, merge, write_atomic};
    let reports = args
        .reports
        .iter()
        .map(|p| Report::read(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut merged = merge(&reports)?;
    merged.set_report_dir(&args.report);
    std::fs::create_dir_all(&args.report)
        .map_err(|e| JostleError::io(format!("creating {}", args.report.display()), e))?;
    merged.write_json(&args.report)?;
    write_atomic(
        &args.report.join("report.html"),
        jostle_host_tools::html::render(&merged).as_bytes(),
    )?;
    if let Some(junit) = &args.junit {
        write_atomic(junit, merged.junit().as_bytes())?;
    }
    print_report(&merged, args.json)?;
    Ok(if merged.any_harmful() {
        EXIT_HARMFUL
    } else {
        0
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run(args).map_err(anyhow::Error::from),
        Command::Predict(args) => predict(args).map_err(anyhow::Error::from),
        Command::Confirm(args) => confirm(args).map_err(anyhow::Error::from),
        Command::Bench(args) => bench(args),
        Command::Config(args) => write_config(args).map_err(anyhow::Error::from),
        Command::Campaign(args) => campaign(args).map_err(anyhow::Error::from),
        Command::Replay(args) => replay(args).map_err(anyhow::Error::from),
        Command::Merge(args) => merge(args).map_err(anyhow::Error::from),
        Command::FlashConfig(args) => flash_config(args).map_err(anyhow::Error::from),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let code = err
                .downcast_ref::<JostleError>()
                .map_or(1, JostleError::exit_code);
            eprintln!("jostle: error: {err:#}");
            ExitCode::from(code)
        }
    }
}
