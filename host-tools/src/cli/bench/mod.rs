//! `jostle bench`: runs per second on QEMU (per trace level and per strategy), then the
//! decode throughput and the kernel's instruction costs; the share of a campaign that
//! shrinking takes.

mod decode_throughput;
mod footprint;
mod host_vs_shuttle;
mod kernel_costs;
mod long_runs;
mod restart_cost;
mod shrink_share;

use crate::cli::args::{FirmwareArgs, resolve_firmware};
use anyhow::Context;
use clap::Args;
use jostle_host_tools::trace::elf::Firmware;
use jostle_host_tools::transport::build::{QEMU_TARGET, cargo_build};
use jostle_host_tools::transport::qemu::Qemu;
use jostle_host_tools::{JostleError, RunOutcome};
use jostle_kernel::config::StrategyId;
use jostle_kernel::{Config, TraceLevel};
use std::time::Instant;

#[derive(Args)]
pub(crate) struct BenchArgs {
    #[command(flatten)]
    pub(crate) firmware: FirmwareArgs,
    /// Runs to time.
    #[arg(long, default_value_t = 100)]
    pub(crate) runs: u32,
    /// A firmware argument for every run (repeat for more).
    #[arg(long = "arg")]
    pub(crate) args: Vec<u32>,
    /// Only these parts (repeat for more; default: all).
    #[arg(long, value_enum)]
    pub(crate) only: Vec<Part>,
    /// The shuttle-baseline executable to compare the host port with (default: beside the
    /// project, ../shared/bench/shuttle-baseline, built when missing).
    #[arg(long)]
    pub(crate) shuttle: Option<std::path::PathBuf>,
    /// Increments per task of the long run `--only predict` times (twice as many next).
    #[arg(long, default_value_t = 30_000)]
    pub(crate) predict_increments: u32,
    /// Runs per program for the host port against shuttle.
    #[arg(long, default_value_t = 20000)]
    pub(crate) host_runs: u32,
}

/// The parts of the benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Part {
    /// QEMU runs per second per trace level and per strategy.
    Qemu,
    /// Decode throughput.
    Decode,
    /// One long full-trace run and its prediction: QEMU, decoding and analysis times.
    Predict,
    /// The kernel's instructions per scheduling point and per switch, its flash and RAM.
    Kernel,
    /// The host port against shuttle on the same five programs.
    Host,
    /// What shrinking adds to a campaign: its share of the wall time, on an example and on
    /// a noisy program.
    Shrink,
}

pub(crate) fn bench(args: BenchArgs) -> anyhow::Result<u8> {
    let wants = |p: Part| args.only.is_empty() || args.only.contains(&p);
    if wants(Part::Host) {
        host_vs_shuttle::host_vs_shuttle(
            args.host_runs,
            args.shuttle.as_deref(),
            args.firmware.target_dir.as_deref(),
        )?;
    }
    if wants(Part::Shrink) {
        shrink_share::shrink_share(&args)?;
    }
    if !(wants(Part::Qemu) || wants(Part::Decode) || wants(Part::Kernel) || wants(Part::Predict)) {
        return Ok(0);
    }
    let path = match (&args.firmware.elf, &args.firmware.package) {
        (None, None) => cargo_build(
            "jostle-examples",
            "correct_counter",
            Some(QEMU_TARGET),
            args.firmware.target_dir.as_deref(),
        )?,
        _ => resolve_firmware(&args.firmware, false)?,
    };
    let fw = jostle_host_tools::transport::load_firmware(&path)?;
    let qemu = Qemu::for_board(&fw.board)?;
    if wants(Part::Qemu) {
        qemu_runs(&fw, &qemu, &args)?;
        strategy_runs(&fw, &qemu, &args)?;
        long_runs::batch_runs(&fw, &args)?;
        long_runs::many_runs(&fw, &args)?;
    }
    if wants(Part::Decode) {
        decode_throughput::decode_throughput(&fw, &qemu, bench_args(&args)?)?;
    }
    if wants(Part::Predict) {
        long_runs::predict_cost(&fw, args.predict_increments)?;
    }
    if wants(Part::Kernel) {
        let task_point = kernel_costs::kernel_costs(&args)?;
        kernel_costs::poll_cost(&args, task_point)?;
        kernel_costs::rtic_cost(&args, task_point)?;
        restart_cost::restart_cost(&args)?;
        footprint::footprint(&fw.path, &fw.board.name)?;
        kernel_costs::core_costs(&args)?;
    }
    Ok(0)
}

/// Runs per second on QEMU, one boot a run, at full and at results-level trace.
fn qemu_runs(fw: &Firmware, qemu: &Qemu, args: &BenchArgs) -> anyhow::Result<()> {
    for trace in [TraceLevel::Full, TraceLevel::Results] {
        let started = Instant::now();
        let mut frames = 0;
        for seed in 0..args.runs as u64 {
            let config = Config {
                seed,
                trace,
                args: bench_args(args)?,
                ..Config::default()
            };
            let raw = qemu.run(fw, &config)?;
            let outcome = RunOutcome::from_qemu(fw, config, raw);
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
    Ok(())
}

/// Runs per second under each strategy (results-only trace, untargeted: the cost of the
/// strategy's own bookkeeping on a whole run).
pub(crate) fn strategy_runs(fw: &Firmware, qemu: &Qemu, args: &BenchArgs) -> anyhow::Result<()> {
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
            jostle_host_tools::engine::targeting::strategy_name(strategy),
            f64::from(args.runs) / started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

pub(crate) fn bench_args(
    args: &BenchArgs,
) -> Result<jostle_kernel::fixed::Vec<u32, { jostle_kernel::config::MAX_ARGS }>, JostleError> {
    jostle_kernel::fixed::Vec::from_slice(&args.args).map_err(|()| {
        JostleError::Usage(format!(
            "at most {} --arg values",
            jostle_kernel::config::MAX_ARGS
        ))
    })
}

/// Builds and loads test firmware `bin` (jostle-test-firmware) for QEMU: the measuring
/// firmware the kernel rows run.
pub(crate) fn measuring_firmware(args: &BenchArgs, bin: &str) -> anyhow::Result<Firmware> {
    let path = cargo_build(
        "jostle-test-firmware",
        bin,
        Some(QEMU_TARGET),
        args.firmware.target_dir.as_deref(),
    )
    .with_context(|| {
        format!("{bin}: the kernel rows need the Jostle workspace (jostle-test-firmware)")
    })?;
    Ok(jostle_host_tools::transport::load_firmware(&path)?)
}

/// The values of `name=` fields on a measuring firmware's log line, in order.
pub(crate) fn fields<'l>(line: &'l str, name: &'l str) -> impl Iterator<Item = f64> + 'l {
    line.split_whitespace()
        .filter_map(move |w| w.strip_prefix(name)?.strip_prefix('='))
        .filter_map(|v| v.parse().ok())
}
