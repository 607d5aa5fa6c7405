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
    /// With --bug: replay the finding's shrunk run (its shortest schedule) instead of the
    /// first run that showed it.
    #[arg(long, requires = "bug")]
    pub(crate) shrunk: bool,
    /// Without --report, with --strategy schedule: the schedule's entries, comma-separated:
    /// `A:n>B` (task A, having run n operations, hands over to task B), `A:n!i` (interrupt
    /// source i fires when context A, a task or a handler `128+j`, has run n operations),
    /// `A:n?k` (there, the dispatcher polls async task k next).
    #[arg(long, conflicts_with = "report")]
    pub(crate) schedule: Option<String>,
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
    /// Seconds the run may go without output before it is killed (verdict timeout; on the
    /// host port, the run's wall-clock limit).
    #[arg(long, default_value_t = 10.0, value_parser = crate::cli::args::seconds, value_name = "SECS")]
    pub(crate) timeout: f64,
    #[command(flatten)]
    pub(crate) via: Via,
}

pub(crate) fn replay(args: ReplayArgs) -> Result<u8, JostleError> {
    use jostle_host_tools::engine::replay::{check_reproduced, config_for, find_finding};
    use jostle_host_tools::output::replay_print::print_around;
    // Ctrl-C kills the run (and its temporary files go with it).
    crate::cli::on_signals("nothing was replayed");
    let path = args.via.firmware(&args.firmware)?;
    let test = args.firmware.selected_test(&path)?;
    let runner = args.via.runner(path, args.timeout)?;
    let (mut config, recorded) = match (&args.report, &args.bug) {
        (Some(dir), Some(id)) => {
            let report = jostle_host_tools::output::report::Report::read(dir)?;
            let (bug, r) = find_finding(&report, id)?;
            let r = if args.shrunk { bug.shrunk_run()? } else { r };
            let config = config_for(&report, &bug, r, &*runner)?;
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
            if let Some(text) = &args.schedule {
                if config.strategy != jostle_kernel::config::StrategyId::Schedule {
                    return Err(JostleError::Usage(
                        "--schedule needs --strategy schedule".into(),
                    ));
                }
                for bp in jostle_host_tools::engine::shrink::parse_schedule(text)? {
                    config.breakpoints.push(bp).map_err(|_| {
                        JostleError::Usage(format!(
                            "--schedule: more entries and targets than the {} breakpoints of a configuration block",
                            jostle_kernel::config::MAX_BREAKPOINTS
                        ))
                    })?;
                }
            }
            config.trace = TraceLevel::Full;
            (config, None)
        }
    };
    config.test = test;
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
