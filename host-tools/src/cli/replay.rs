//! `jostle replay`: a reported bug (or an explicit seed and target) run again, the steps
//! around it shown with source lines, and checked against the report.

use crate::cli::args::{FirmwareArgs, StrategyArgs, Via, base_config};
use crate::cli::steer::steer;
use clap::Args;
use jostle_host_tools::JostleError;
use jostle_kernel::TraceLevel;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct ReplayArgs {
    #[command(flatten)]
    pub(crate) firmware: FirmwareArgs,
    /// The campaign's report directory (or report.json).
    #[arg(long, requires = "bug")]
    pub(crate) report: Option<PathBuf>,
    /// The id of a bug or a failure (from the report).
    #[arg(long, requires = "report")]
    pub(crate) bug: Option<String>,
    /// Without --report: the run's seed.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    #[command(flatten)]
    pub(crate) steer: StrategyArgs,
    /// A firmware argument (repeat for more; without --report).
    #[arg(long = "arg")]
    pub(crate) args: Vec<u32>,
    /// Steps shown before and after the bug.
    #[arg(long, default_value_t = 20)]
    pub(crate) context: usize,
    /// Wall-clock limit of the run, in seconds.
    #[arg(long, default_value_t = 10.0)]
    pub(crate) timeout: f64,
    #[command(flatten)]
    pub(crate) via: Via,
}

pub(crate) fn replay(args: ReplayArgs) -> Result<u8, JostleError> {
    use jostle_host_tools::engine::replay::{check_reproduced, config_for, find_finding};
    use jostle_host_tools::output::replay_print::print_around;
    let path = args.via.firmware(&args.firmware)?;
    let runner = args.via.runner(path, args.timeout)?;
    let (config, recorded) = match (&args.report, &args.bug) {
        (Some(dir), Some(id)) => {
            let report = jostle_host_tools::output::report::Report::read(dir)?;
            let (bug, r) = find_finding(&report, id)?;
            let config = config_for(&report, r, &*runner)?;
            let same_image = jostle_host_tools::engine::predict::fingerprint(runner.path())
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
            steer(&mut config, &args.steer, &*runner)?;
            jostle_host_tools::engine::confirm::bound_pct(&*runner, &mut config)?;
            let profile = jostle_host_tools::engine::surw::profile(&*runner, &config)?;
            config = jostle_host_tools::engine::surw::with_choice(&config, profile.as_ref());
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
        let _ = writeln!(
            out,
            "reproduced: {} {} (seed {})",
            bug.kind(),
            bug.id(),
            r.seed
        );
    }
    Ok(outcome.outcome.map_or(23, |o| o.exit_code()))
}
