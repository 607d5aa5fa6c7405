//! The `jostle` command line: parses the arguments and hands them to their command.

use clap::{Parser, Subcommand};
use cli::bench::BenchArgs;
use cli::campaign::CampaignArgs;
use cli::config::ConfigArgs;
use cli::confirm::ConfirmArgs;
use cli::flash_config::FlashConfigArgs;
use cli::merge::MergeArgs;
use cli::predict::PredictArgs;
use cli::replay::ReplayArgs;
use cli::run::RunArgs;
use jostle_host_tools::JostleError;
use std::process::ExitCode;

mod cli;

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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => cli::run::run(args).map_err(anyhow::Error::from),
        Command::Predict(args) => cli::predict::predict(args).map_err(anyhow::Error::from),
        Command::Confirm(args) => cli::confirm::confirm(args).map_err(anyhow::Error::from),
        Command::Bench(args) => cli::bench::bench(args),
        Command::Config(args) => cli::config::write_config(args).map_err(anyhow::Error::from),
        Command::Campaign(args) => cli::campaign::campaign(args).map_err(anyhow::Error::from),
        Command::Replay(args) => cli::replay::replay(args).map_err(anyhow::Error::from),
        Command::Merge(args) => cli::merge::merge(args).map_err(anyhow::Error::from),
        Command::FlashConfig(args) => {
            cli::flash_config::flash_config(args).map_err(anyhow::Error::from)
        }
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
