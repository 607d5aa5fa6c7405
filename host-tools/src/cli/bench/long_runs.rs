//! `jostle bench`: what a campaign pays on QEMU. Runs per second in jobs of [`BATCH`]
//! seeds made by the transport (as campaigns make them: served by one QEMU), and one long
//! full-trace run: QEMU's own time against decoding and prediction, at two lengths (the
//! cost must grow linearly with the trace).

use super::BenchArgs;
use anyhow::bail;
use jostle_host_tools::engine::campaign::BATCH;
use jostle_host_tools::trace::elf::Firmware;
use jostle_host_tools::transport::Limits;
use jostle_host_tools::transport::qemu::{Qemu, QemuTransport};
use jostle_host_tools::{JostleError, RunOutcome};
use jostle_kernel::{Config, TraceLevel};
use std::time::{Duration, Instant};

/// The transport a campaign would run `fw` on (runs limited to `timeout_secs` each), and
/// the configuration of one Random run at `trace` with the bench's arguments.
fn transport_and_config(
    fw: &Firmware,
    args: &BenchArgs,
    trace: TraceLevel,
    timeout_secs: u64,
) -> anyhow::Result<(QemuTransport, Config)> {
    let limits = Limits::quiet(Duration::from_secs(timeout_secs));
    let runner = QemuTransport::load_limited(&fw.path, limits)?;
    let config = Config {
        trace,
        runs: 1,
        args: super::bench_args(args)?,
        ..Config::default()
    };
    Ok((runner, config))
}

/// Runs per second of `fw` in jobs of [`BATCH`] seeds, results-level trace, Random, and
/// the QEMU boots they took.
pub(crate) fn batch_runs(fw: &Firmware, args: &BenchArgs) -> anyhow::Result<()> {
    use jostle_host_tools::transport::Transport;
    let (runner, config) = transport_and_config(fw, args, TraceLevel::Results, 20)?;
    let runs = args.runs.max(BATCH as u32);
    let started = Instant::now();
    let mut done = 0;
    while done < runs {
        let n = (runs - done).min(BATCH as u32);
        let first = Config {
            seed: u64::from(done),
            ..config.clone()
        };
        let outcomes = runner.run_batch(&first, n)?;
        if let Some(e) = outcomes.iter().find_map(|o| o.error.as_ref()) {
            bail!("{}: {e}", fw.path.display());
        }
        done += n;
    }
    let boots = runner.sessions.as_ref().map_or_else(
        || format!("a boot per {BATCH}"),
        |s| format!("{} QEMU boot(s), served", s.boots()),
    );
    println!(
        "qemu batch   {:<28} {:>7.1} runs/s on one core ({runs} runs in jobs of {BATCH}, {boots}, trace=results; goal >= 3000)",
        name(fw),
        f64::from(runs) / started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `jostle run --runs N` at full trace for N = 50 to 400: the transport's batches, each
/// run's stream decoded and split off (as `run` makes and reads them). The time must grow
/// with N, not with its square (the whole boot's stream was once decoded at every frame).
pub(crate) fn many_runs(fw: &Firmware, args: &BenchArgs) -> anyhow::Result<()> {
    use jostle_host_tools::transport::Transport;
    let (runner, config) = transport_and_config(fw, args, TraceLevel::Full, 60)?;
    let mut times = Vec::new();
    for n in [50u32, 100, 200, 400] {
        let started = Instant::now();
        let outcomes = runner.run_batch(&config, n)?;
        if let Some(e) = outcomes.iter().find_map(|o| o.error.as_ref()) {
            bail!("{}: {e}", fw.path.display());
        }
        if outcomes.len() != n as usize {
            bail!(
                "{}: {} of {n} runs came back",
                fw.path.display(),
                outcomes.len()
            );
        }
        times.push((n, started.elapsed().as_secs_f64()));
    }
    let text: Vec<String> = times
        .iter()
        .map(|(n, t)| format!("N={n} {t:.2} s"))
        .collect();
    let ((n1, t1), (n4, t4)) = (times[0], times[3]);
    println!(
        "run --runs N {:<28} full trace: {}: {:.0}x the runs took {:.2}x the time (goal: linear, ~{:.0}x)",
        name(fw),
        text.join(", "),
        f64::from(n4) / f64::from(n1),
        t4 / t1,
        f64::from(n4) / f64::from(n1)
    );
    Ok(())
}

/// One long full-trace run of `correct_counter` with `increments` per task, then its
/// prediction: seconds in QEMU (boot and run), decoding, and analysis.
fn long_run(fw: &Firmware, increments: u32) -> anyhow::Result<(usize, f64, f64, f64)> {
    let mut config = Config {
        trace: TraceLevel::Full,
        step_limit: u32::MAX,
        ..Config::default()
    };
    config
        .args
        .push(increments)
        .map_err(|_| JostleError::Usage("no room for an argument".into()))?;
    let qemu = Qemu {
        timeout: Duration::from_secs(120),
        ..Qemu::for_board(&fw.board)?
    };
    let raw = qemu.run(fw, &config)?;
    let qemu_secs = raw.wall.as_secs_f64();
    let started = Instant::now();
    let outcome = RunOutcome::from_qemu(fw, config, raw);
    let decode_secs = started.elapsed().as_secs_f64();
    if let Some(e) = outcome.error {
        bail!("{}: {e}", fw.path.display());
    }
    let started = Instant::now();
    let prediction = jostle_checker::predict(&outcome.events, &jostle_checker::Options::default());
    let predict_secs = started.elapsed().as_secs_f64();
    std::hint::black_box(prediction);
    Ok((outcome.events.len(), qemu_secs, decode_secs, predict_secs))
}

/// The long-run rows for `correct_counter` (`fw`), at `increments` and twice as many.
pub(crate) fn predict_cost(fw: &Firmware, increments: u32) -> anyhow::Result<()> {
    let mut totals = Vec::new();
    for n in [increments, 2 * increments] {
        let (events, qemu, decode, predict) = long_run(fw, n)?;
        let host = decode + predict;
        println!(
            "predict      {:<28} one run of {events} events: QEMU {qemu:.2} s, decode {decode:.2} s, analysis {predict:.2} s: decode + analysis = {:.2}x QEMU (goal <= 2x)",
            name(fw),
            host / qemu
        );
        totals.push((events, host));
    }
    let ((e1, t1), (e2, t2)) = (totals[0], totals[1]);
    println!(
        "predict      {:<28} {:.2}x the events took {:.2}x the time (goal: linear, ~{:.2}x)",
        name(fw),
        e2 as f64 / e1 as f64,
        t2 / t1,
        e2 as f64 / e1 as f64
    );
    Ok(())
}

fn name(fw: &Firmware) -> String {
    fw.path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}
