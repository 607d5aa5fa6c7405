//! `jostle bench`: the instructions between two runs of one QEMU boot (the warm restart).

use super::BenchArgs;
use anyhow::Context;
use jostle_host_tools::RunOutcome;
use jostle_host_tools::transport::build::{QEMU_TARGET, cargo_build};
use jostle_host_tools::transport::qemu::Qemu;
use jostle_kernel::{Config, TraceLevel};

/// Prints the restart's cost in instructions, from the `restart_cost` test firmware (see
/// its documentation): two runs in one boot, the second reports the SysTick ticks since the
/// first ended, calibrated against a known loop.
pub(crate) fn restart_cost(args: &BenchArgs) -> anyhow::Result<()> {
    let path = cargo_build(
        "jostle-test-firmware",
        "restart_cost",
        Some(QEMU_TARGET),
        args.firmware.target_dir.as_deref(),
    )
    .context("the restart benchmark needs the Jostle workspace (jostle-test-firmware)")?;
    let fw = jostle_host_tools::transport::load_firmware(&path)?;
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
    let field = |name: &str| -> anyhow::Result<f64> {
        line.split_whitespace()
            .filter_map(|w| w.split_once('='))
            .filter(|(k, _)| *k == name)
            .map(|(_, v)| v.parse::<f64>())
            .next()
            .context(format!("no {name}= in `{line}`"))?
            .context(format!("{name}= in `{line}`"))
    };
    let ticks = field("ticks")?;
    // The calibration's own `ticks=` is the second one on the line.
    let cal_ticks: f64 = line
        .rsplit_once("ticks=")
        .and_then(|(_, v)| v.trim().parse().ok())
        .context(format!("no calibration ticks in `{line}`"))?;
    let per_tick = field("instructions")? / cal_ticks;
    println!(
        "restart      {:.0} instructions from one run's end to the next run's main task, one boot (goal <= 5000)",
        ticks * per_tick
    );
    Ok(())
}
