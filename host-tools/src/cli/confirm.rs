//! `jostle confirm`: many seeds of one strategy against each target, one tally row each.

use crate::cli::args::{EachRun, FirmwareArgs, StrategyArgs};
use crate::cli::steer::steer;
use clap::Args;
use jostle_host_tools::JostleError;
use jostle_kernel::TraceLevel;
use jostle_kernel::config::StrategyId;
use std::io::Write;

#[derive(Args)]
pub(crate) struct ConfirmArgs {
    #[command(flatten)]
    pub(crate) firmware: FirmwareArgs,
    #[command(flatten)]
    pub(crate) steer: StrategyArgs,
    /// Runs per target (seeds --seed, --seed+1, ...).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) runs: u32,
    #[command(flatten)]
    pub(crate) each: EachRun,
    /// One JSON object per row.
    #[arg(long)]
    pub(crate) json: bool,
    /// A label printed at the start of each row (e.g. the example and its filler).
    #[arg(long, default_value = "")]
    pub(crate) label: String,
    /// Also count a run as confirmed when the happens-before detector finds the targeted
    /// race in its full trace (DrFinder's measure; use it for the rows beside DrFinder).
    #[arg(long)]
    pub(crate) happened: bool,
}

pub(crate) fn confirm(args: ConfirmArgs) -> Result<u8, JostleError> {
    use jostle_checker::CandidateKind;
    use jostle_host_tools::engine::predict::{read_prediction, site_text};
    use jostle_host_tools::engine::targeting::{strategy_for, strategy_name, untargeted};
    // Ctrl-C kills the run in flight; the row so far is printed.
    crate::cli::on_signals("the rows above are the targets that finished");
    let mut base = args.each.config(TraceLevel::Results)?;
    let runner = args.each.runner(&args.firmware)?;
    base.test = args.firmware.selected_test(runner.path())?;
    let strategy = args.steer.strategy;
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
                    untargeted(strategy)
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
        steer(&mut config, &steer_args, &*runner)?;
        let tally = jostle_host_tools::engine::confirm::tally(
            &*runner,
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
            .and_then(|()| {
                tally
                    .failures
                    .lines()
                    .iter()
                    .try_for_each(|l| writeln!(out, "    {l}"))
            })
        };
        printed.map_err(|e| JostleError::io("writing the output", e))?;
        if tally.interrupted {
            return Ok(crate::cli::EXIT_INTERRUPTED);
        }
    }
    Ok(0)
}

pub(crate) fn label_prefix(label: &str) -> String {
    if label.is_empty() {
        String::new()
    } else {
        format!("{label:<18} ")
    }
}
