//! `jostle flash-config`: a board flashed with the firmware and, in its reserved flash
//! page, the block of one run it replays at every power-up.

use crate::cli::args::{StrategyArgs, Trace, base_config};
use crate::cli::steer::steer;
use clap::Args;
use jostle_host_tools::JostleError;
use jostle_host_tools::transport::limit;
use jostle_host_tools::transport::probe::ProbeTransport;
use jostle_kernel::config::StrategyId;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct FlashConfigArgs {
    /// The firmware ELF, built for the board.
    pub(crate) elf: PathBuf,
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
    /// A firmware argument (repeat for more).
    #[arg(long = "arg")]
    pub(crate) args: Vec<u32>,
    /// The probe (`VID:PID[:SERIAL]`; the only one connected when absent).
    #[arg(long, default_value = "", value_name = "SELECTOR")]
    pub(crate) probe: String,
    /// The board's chip, as probe-rs names it.
    #[arg(long)]
    pub(crate) chip: String,
}

pub(crate) fn flash_config(args: FlashConfigArgs) -> Result<u8, JostleError> {
    let mut config = base_config(args.seed, args.step_limit, &args.args, args.trace.level())?;
    // Chip first: an unknown name is reported without looking for a probe.
    jostle_host_tools::transport::probe::chip(&args.chip)?;
    let board = ProbeTransport::load(&args.elf, &args.chip, &args.probe, limit(10.0)?)?;
    steer(&mut config, &args.steer, &board)?;
    if config.strategy == StrategyId::Pct && config.params[1] == 0 {
        return Err(JostleError::Usage(
            "flash-config with --strategy pct needs --pct-steps (no run to measure it from)".into(),
        ));
    }
    let addr = board.flash_config(&config)?;
    println!(
        "{}: flashed, with the block of seed {} ({}) at {addr:#010x}: the board replays this run at every power-up; `cargo embed` shows its events",
        args.elf.display(),
        config.seed,
        jostle_host_tools::engine::targeting::strategy_name(config.strategy)
    );
    Ok(0)
}
