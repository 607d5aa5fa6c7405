//! `jostle predict`: Phase I runs (or saved traces) through the checker's analyses, into
//! the prediction file.

use crate::cli::args::{EachRun, FirmwareArgs};
use clap::Args;
use jostle_host_tools::JostleError;
use jostle_kernel::{Config, TraceLevel};
use std::io::Write;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct PredictArgs {
    #[command(flatten)]
    pub(crate) firmware: FirmwareArgs,
    /// Random-strategy runs to analyse (seeds --seed, --seed+1, ...).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) runs: u32,
    #[command(flatten)]
    pub(crate) each: EachRun,
    /// Analyse saved `jostle run --json` output instead of running (repeat for more files).
    #[arg(long = "trace-file", value_name = "FILE", conflicts_with_all = ["elf", "package", "host"])]
    pub(crate) traces: Vec<PathBuf>,
    /// Where to write the prediction.
    #[arg(long, default_value = "jostle-report/prediction.json")]
    pub(crate) out: PathBuf,
    /// Print the prediction as JSON instead of the listing.
    #[arg(long)]
    pub(crate) json: bool,
    /// Longest deadlock cycle searched (iGoodlock's k).
    #[arg(long, default_value_t = 4, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub(crate) cycle_len: usize,
    /// DrFinder may-trigger depth d.
    #[arg(long, default_value_t = jostle_checker::drfinder::DEFAULT_DEPTH)]
    pub(crate) mt_depth: usize,
    /// Also run the precise lockset detector (noisier than hybrid).
    #[arg(long)]
    pub(crate) precise_lockset: bool,
    /// Do not treat lock critical sections as atomic blocks when the firmware declares none.
    #[arg(long)]
    pub(crate) no_atomizer: bool,
}

pub(crate) fn predict(args: PredictArgs) -> Result<u8, JostleError> {
    use jostle_host_tools::engine::predict::{
        fingerprint, predict_trace, print_prediction, traces_from_json, write_prediction,
    };
    let options = jostle_checker::Options {
        max_cycle_len: args.cycle_len,
        may_trigger_depth: args.mt_depth,
        precise_lockset: args.precise_lockset,
        atomizer_heuristic: !args.no_atomizer,
        ..jostle_checker::Options::default()
    };
    // Ctrl-C kills the run in flight; the prediction keeps the runs before it.
    crate::cli::on_signals("the prediction file holds the runs written before");
    let mut prediction = jostle_checker::Prediction::new();
    let mut traces = 0u32;
    let mut failure = None;
    if !args.traces.is_empty() {
        for file in &args.traces {
            let text = std::fs::read_to_string(file).map_err(|e| {
                JostleError::BadTrace(format!("{}: cannot be read ({e})", file.display()))
            })?;
            for trace in traces_from_json(&text, &file.display().to_string())? {
                prediction.merge(predict_trace(&trace, traces, &options));
                traces += 1;
            }
        }
    } else {
        let mut base = args.each.config(TraceLevel::Full)?;
        let target = args.each.runner(&args.firmware)?;
        base.test = args.firmware.selected_test(target.path())?;
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
                &jostle_host_tools::engine::predict::Trace::of_run(&outcome),
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
        Some((_, JostleError::Interrupted)) => {
            eprintln!(
                "jostle: stopped by a signal; the prediction holds the {traces} traces before it"
            );
            Ok(crate::cli::EXIT_INTERRUPTED)
        }
        Some((seed, e)) => {
            eprintln!(
                "jostle: the run with seed {seed} failed; the prediction holds the {traces} traces before it"
            );
            Err(e)
        }
        None => Ok(0),
    }
}
