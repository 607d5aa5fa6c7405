//! `jostle config`: the configuration block of one run, written to a file.

use crate::cli::args::{FirmwareArgs, StrategyArgs, Trace, base_config, resolve_firmware};
use crate::cli::steer::{steer, steer_untargeted};
use clap::Args;
use jostle_host_tools::JostleError;
use jostle_host_tools::transport::Runner;
use jostle_kernel::config::StrategyId;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct ConfigArgs {
    /// The firmware the block is for (needed to resolve --target sites and for DrFinder).
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
    /// A firmware argument (repeat for more).
    #[arg(long = "arg")]
    pub(crate) args: Vec<u32>,
    /// The firmware is a host-port executable.
    #[arg(long)]
    pub(crate) host: bool,
    /// Where to write the block.
    #[arg(long)]
    pub(crate) out: PathBuf,
}

pub(crate) fn write_config(args: ConfigArgs) -> Result<u8, JostleError> {
    let mut config = base_config(args.seed, args.step_limit, &args.args, args.trace.level())?;
    let f = &args.firmware;
    if f.elf.is_some() || f.package.is_some() {
        let path = resolve_firmware(f, args.host)?;
        config.test = f.selected_test(&path)?;
        let target = Runner::new(path, args.host, 10.0)?;
        steer(&mut config, &args.steer, &*target)?;
        jostle_host_tools::engine::confirm::bound_pct(&*target, &mut config)?;
        // SURW: the seed's choice from a profiling run of the firmware.
        let profile = jostle_host_tools::engine::surw::profile(&*target, &config)?;
        config = jostle_host_tools::engine::surw::with_choice(&config, profile.as_ref());
    } else if args.steer.target.is_some()
        || f.test.is_some()
        || matches!(
            args.steer.strategy,
            StrategyId::Race
                | StrategyId::Deadlock
                | StrategyId::DrFinder
                | StrategyId::Avio
                | StrategyId::Surw
        )
        || (args.steer.strategy == StrategyId::Pct && args.steer.pct_steps == 0)
    {
        return Err(JostleError::Usage(
            "--target, --test, --strategy race|deadlock|drfinder|avio|surw and PCT without --pct-steps need the firmware (ELF or -p/--bin)".into(),
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
        jostle_host_tools::engine::targeting::strategy_name(config.strategy)
    );
    Ok(0)
}
