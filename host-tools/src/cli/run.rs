//! `jostle run`: one run (or `--runs N` consecutive seeds) with its interleaving and
//! verdict, or JSON; the exit code is the verdict's.

use crate::cli::args::{FirmwareArgs, StrategyArgs, Trace, Via, base_config};
use crate::cli::steer::steer;
use clap::Args;
use jostle_host_tools::JostleError;
use jostle_host_tools::engine::surw;
use jostle_host_tools::transport::Transport;
use jostle_kernel::Config;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) firmware: FirmwareArgs,
    #[command(flatten)]
    pub(crate) steer: StrategyArgs,
    /// Seed of the scheduler.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Most scheduling steps before the `step_limit` verdict.
    #[arg(long, default_value_t = jostle_kernel::config::DEFAULT_STEP_LIMIT)]
    pub(crate) step_limit: u32,
    /// Which events the firmware emits.
    #[arg(long, value_enum, default_value = "full")]
    pub(crate) trace: Trace,
    /// A firmware argument (repeat for more; read with `arg(i)`).
    #[arg(long = "arg")]
    pub(crate) args: Vec<u32>,
    /// One JSON object per event, then a summary object.
    #[arg(long)]
    pub(crate) json: bool,
    /// Seconds the run may go without output before it is killed (verdict timeout; on the
    /// host port, the run's wall-clock limit).
    #[arg(long, default_value_t = 10.0, value_parser = crate::cli::args::seconds, value_name = "SECS")]
    pub(crate) timeout: f64,
    #[command(flatten)]
    pub(crate) via: Via,
    /// Use this raw configuration block file instead of building one from the options.
    #[arg(long)]
    pub(crate) config_file: Option<PathBuf>,
    /// QEMU: boot with this block file in the board's flash page and no RAM block, as a
    /// board does at power-up after `jostle flash-config` (the options' block is not used).
    #[arg(long, conflicts_with_all = ["config_file", "host", "runs", "probe"])]
    pub(crate) flash_config: Option<PathBuf>,
    /// Run this many consecutive seeds (one QEMU serves them all) and print one verdict line
    /// (or, with --json, one summary object) per run; exits with the first failure's code.
    #[arg(long, default_value_t = 1, conflicts_with = "config_file", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) runs: u32,
}

pub(crate) fn config_of(args: &RunArgs) -> Result<Config, JostleError> {
    base_config(args.seed, args.step_limit, &args.args, args.trace.level())
}

pub(crate) fn run(args: RunArgs) -> Result<u8, JostleError> {
    let mut config = config_of(&args)?;
    // Ctrl-C kills the runs in flight; `--runs N` then prints what finished.
    let stop = crate::cli::on_signals("the lines above are the runs that finished");
    let path = args.via.firmware(&args.firmware)?;
    config.test = args.firmware.selected_test(&path)?;
    let target = args.via.runner(path, args.timeout)?;
    steer(&mut config, &args.steer, &*target)?;
    jostle_host_tools::engine::confirm::bound_pct(&*target, &mut config)?;
    // SURW's estimates come from a profiling run (a block file or the flash page brings its
    // own configuration).
    let profile = if args.config_file.is_none() && args.flash_config.is_none() {
        surw::profile(&*target, &config)?
    } else {
        None
    };
    if let Some(p) = &profile {
        let choice = p.choose(config.seed, surw_room(&config));
        eprintln!(
            "jostle: surw: {}{}",
            p.describe(choice.as_ref()),
            if args.runs > 1 {
                "; each run draws its own location"
            } else {
                ""
            }
        );
        eprintln!(
            "jostle: surw: {} runs in all (the profiling run counts)",
            u64::from(args.runs) + 1
        );
    }
    if args.runs > 1 {
        let code = run_several(&*target, &config, args.runs, args.json, profile.as_ref())?;
        return Ok(if stop.load(std::sync::atomic::Ordering::SeqCst) {
            crate::cli::EXIT_INTERRUPTED
        } else {
            code
        });
    }
    let config = surw::with_choice(&config, profile.as_ref());
    // A boot from the flash page where the transport has one (QEMU), else the options' run.
    let flashed = args
        .flash_config
        .as_deref()
        .and_then(|flash| target.run_from_flash(flash));
    let outcome = match flashed {
        Some(outcome) => outcome?,
        None => target.run(config, args.config_file.as_deref())?,
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

/// The room SURW's breakpoints have in `config`'s block (what the target leaves).
fn surw_room(config: &Config) -> usize {
    let target = config.breakpoints.iter().filter(|b| !surw::is_surw(b));
    jostle_kernel::config::MAX_BREAKPOINTS - target.count()
}

/// `jostle run --runs N`: one line (or summary object) per run as it finishes (under SURW,
/// each with its seed's choice from `profile`), then the failures by signature; stopped by a
/// signal, the lines of the runs that finished and their failures, and a note of how many.
pub(crate) fn run_several(
    target: &dyn Transport,
    config: &Config,
    runs: u32,
    json: bool,
    profile: Option<&surw::Profile>,
) -> Result<u8, JostleError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut code = 0;
    let mut made = 0u32;
    let mut seen = jostle_host_tools::trace::failure::Seen::default();
    let mut failed = Ok(());
    surw::run_each(target, config, runs, profile, &mut |o| {
        seen.count(&o);
        made += 1;
        let line = if json {
            o.summary().to_string()
        } else {
            format!("seed {}: {}", o.config.seed, o.verdict_line())
        };
        let written = writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| JostleError::io("writing the output", e));
        failed = match (written, o.error) {
            (Err(e), _) | (Ok(()), Some(e)) => Err(e),
            (Ok(()), None) => Ok(()),
        };
        if failed.is_ok() && code == 0 {
            code = o.outcome.map_or(23, |v| v.exit_code());
        }
        failed.is_ok()
    })?;
    failed?;
    // The failures beside the per-run lines, grouped (not with --json: one object per run).
    if !json {
        for l in seen.lines() {
            writeln!(out, "{l}").map_err(|e| JostleError::io("writing the output", e))?;
        }
    }
    if made < runs {
        eprintln!("jostle: stopped by a signal: {made} of {runs} runs made");
    }
    Ok(code)
}
