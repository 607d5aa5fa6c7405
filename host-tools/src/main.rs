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
    /// Write a firmware project of its own, ready to build, with a first test program.
    New(cli::new::NewArgs),
}

/// A command line clap refuses: one line, `jostle: error: ...`, exit 2 (help and version
/// are printed as clap prints them).
fn usage_error(err: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        err.exit();
    }
    ExitCode::from(one_line_usage(&err.render().to_string()))
}

/// Prints the first paragraph of clap's message on one line; returns the exit code (2).
fn one_line_usage(rendered: &str) -> u8 {
    let first: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    let text = first.join(" ");
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    eprintln!("jostle: error: {text}");
    2
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(err),
    };
    let result = match cli.command {
        Command::Run(args) => cli::run::run(args).map_err(anyhow::Error::from),
        Command::Predict(args) => cli::predict::predict(args).map_err(anyhow::Error::from),
        Command::Confirm(args) => cli::confirm::confirm(args).map_err(anyhow::Error::from),
        Command::Bench(args) => cli::bench::bench(args),
        Command::Config(args) => cli::config::write_config(args).map_err(anyhow::Error::from),
        Command::Campaign(args) => cli::campaign::campaign(args).map_err(anyhow::Error::from),
        Command::Replay(args) => cli::replay::replay(args).map_err(anyhow::Error::from),
        Command::Merge(args) => cli::merge::merge(args).map_err(anyhow::Error::from),
        Command::New(args) => cli::new::new(args).map_err(anyhow::Error::from),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(args: &[&str]) -> clap::Error {
        match Cli::try_parse_from(std::iter::once("jostle").chain(args.iter().copied())) {
            Ok(_) => panic!("{args:?} accepted"),
            Err(e) => e,
        }
    }

    #[test]
    fn every_command_refuses_a_timeout_that_is_not_a_positive_number() {
        for command in ["run", "campaign", "predict", "confirm"] {
            for t in ["NaN", "inf", "-1", "0"] {
                let e = refused(&[command, "fw.elf", &format!("--timeout={t}")]);
                assert_eq!(
                    e.kind(),
                    clap::error::ErrorKind::ValueValidation,
                    "{command} {t}"
                );
            }
        }
    }

    #[test]
    fn usage_errors_are_one_line() {
        let e = refused(&["run", "--host", "--probe"]);
        let text = e.render().to_string();
        assert!(text.lines().count() > 1, "clap's own message: {text}");
        assert_eq!(one_line_usage(&text), 2);
    }
}
