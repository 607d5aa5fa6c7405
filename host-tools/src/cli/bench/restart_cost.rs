//! `jostle bench`: the instructions between two runs of one QEMU boot (the warm restart).

use super::BenchArgs;
use anyhow::Context;
use jostle_host_tools::RunOutcome;
use jostle_host_tools::transport::qemu::Qemu;
use jostle_kernel::{Config, TraceLevel};

/// Prints the restart's cost in instructions, from the `restart_cost` test firmware (see
/// its documentation): two runs in one boot, the second reports the SysTick ticks since the
/// first ended, calibrated against a known loop.
pub(crate) fn restart_cost(args: &BenchArgs) -> anyhow::Result<()> {
    let fw = super::measuring_firmware(args, "restart_cost")?;
    let config = Config {
        trace: TraceLevel::Results,
        runs: 2,
        ..Config::default()
    };
    let raw = Qemu::default().run(&fw, &config)?;
    let runs = RunOutcome::batch_from_qemu(&fw, config, raw);
    if let Some(e) = runs.iter().find_map(|o| o.error.as_ref()) {
        anyhow::bail!("restart_cost: {e}");
    }
    let line = runs
        .get(1)
        .and_then(|o| o.logs.iter().find(|l| l.starts_with("cost restart")))
        .context("restart_cost's second run printed no `cost restart` line")?;
    // `ticks=` twice: the restart's, then the calibration loop's.
    let mut ticks = super::fields(line, "ticks");
    let (Some(ticks), Some(cal_ticks), Some(instructions)) = (
        ticks.next(),
        ticks.next(),
        super::fields(line, "instructions").next(),
    ) else {
        anyhow::bail!("restart_cost: unreadable `{line}`");
    };
    let per_tick = instructions / cal_ticks;
    println!(
        "restart      {:.0} instructions from one run's end to the next run's main task, one boot (goal <= 5000)",
        ticks * per_tick
    );
    Ok(())
}
