//! The host port against shuttle 0.9.9 on the same five programs (the seed papers' examples,
//! `../shared/bench/shuttle-baseline`), side by side in one measurement: runs per second
//! under a uniformly random scheduler, one run after another, every run's verdict read.
//!
//! Jostle's figure is end to end: `jostle` writes the block, the host-port process makes the
//! runs (results-level trace) and `jostle` decodes each run's lines into its outcome.
//! Shuttle's is its own `throughput` mode (`Runner::run` in a loop, one thread).

use anyhow::{Context, bail};
use jostle_host_tools::trace::run::Outcome;
use jostle_host_tools::transport::build::cargo_build_host_release;
use jostle_host_tools::transport::hostport::HostTransport;
use jostle_host_tools::transport::{Limits, Transport};
use jostle_kernel::{Config, TraceLevel, Verdict};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The five programs: Jostle's example, shuttle-baseline's name for it.
const PROGRAMS: [(&str, &str); 5] = [
    ("rf_fig1", "rf_fig1"),
    ("rf_fig2", "rf_fig2"),
    ("af_fig2", "af_fig2"),
    ("abba_deadlock", "deadlock"),
    ("hidden_order", "hidden"),
];

/// The filler steps `k` both sides give every program (shuttle-baseline's throughput mode).
const K: u32 = 20;

/// Where shuttle-baseline lives beside a clone of this project.
const BASELINE_DIR: &str = "../shared/bench/shuttle-baseline";

/// Prints the table; `shuttle`: the baseline's executable (else found or built beside the
/// project).
pub(crate) fn host_vs_shuttle(
    runs: u32,
    shuttle: Option<&Path>,
    target_dir: Option<&Path>,
) -> anyhow::Result<()> {
    let baseline = match shuttle {
        Some(p) => Some(p.to_path_buf()),
        None => find_baseline()?,
    };
    let theirs = match &baseline {
        Some(exe) => shuttle_throughput(exe, runs)?,
        None => Vec::new(),
    };
    println!(
        "host port vs shuttle 0.9.9: random scheduler, k={K}, {runs} runs each, one after another"
    );
    println!(
        "  {:<14} {:>12} {:>8} {:>14} {:>8} {:>7}  goal",
        "program", "jostle run/s", "bug hit", "shuttle run/s", "ratio", ""
    );
    let mut ratios = Vec::new();
    for (ours, their_name) in PROGRAMS {
        let exe = cargo_build_host_release("jostle-examples", ours, target_dir)?;
        let (rate, hits) = jostle_throughput(&exe, runs)?;
        let theirs = theirs
            .iter()
            .find(|(n, _)| n == their_name)
            .map(|(_, r)| *r);
        let (their_text, ratio_text) = match theirs {
            Some(t) => {
                ratios.push(rate / t);
                (format!("{t:.0}"), format!("{:.2}x", rate / t))
            }
            None => ("-".into(), "-".into()),
        };
        println!(
            "  {ours:<14} {rate:>12.0} {:>7.1}% {their_text:>14} {ratio_text:>8} {:>7}  >= 1.0x",
            100.0 * hits as f64 / f64::from(runs),
            ""
        );
    }
    match baseline {
        Some(_) if ratios.len() == PROGRAMS.len() => {
            let geo = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
            let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
            println!(
                "  host port / shuttle: geometric mean {geo:.2}x, lowest {min:.2}x   goal >= 1.0x"
            );
        }
        Some(exe) => bail!(
            "{}: its output named {} of the five programs",
            exe.display(),
            ratios.len()
        ),
        None => println!(
            "  shuttle-baseline not found (build it: cd {BASELINE_DIR} && cargo build --release, or pass --shuttle)"
        ),
    }
    Ok(())
}

/// Runs per second of the host-port executable `exe` over `runs` seeds, and the runs that
/// failed.
fn jostle_throughput(exe: &Path, runs: u32) -> anyhow::Result<(f64, u32)> {
    let transport = HostTransport::new(exe.to_path_buf(), Limits::quiet(Duration::from_secs(60)));
    let mut config = Config {
        trace: TraceLevel::Results,
        ..Config::default()
    };
    config.args.push(K).expect("room for one argument");
    let started = Instant::now();
    let outcomes = transport.run_batch(&config, runs)?;
    let secs = started.elapsed().as_secs_f64();
    if outcomes.len() != runs as usize {
        bail!(
            "{}: {} of {runs} runs came back",
            exe.display(),
            outcomes.len()
        );
    }
    if let Some((o, e)) = outcomes
        .iter()
        .find_map(|o| o.error.as_ref().map(|e| (o, e)))
    {
        bail!("{} seed {}: {e}", exe.display(), o.config.seed);
    }
    // A hit is a run whose verdict is not a pass (shuttle: a run that panicked, its
    // deadlocks included).
    let pass = Some(Outcome::Verdict(Verdict::Pass));
    let hits = outcomes.iter().filter(|o| o.outcome != pass).count() as u32;
    Ok((f64::from(runs) / secs, hits))
}

/// The baseline's executable beside the project, built if its sources are there.
fn find_baseline() -> anyhow::Result<Option<PathBuf>> {
    let dir = Path::new(BASELINE_DIR);
    let exe = dir.join("target/release/shuttle-baseline");
    if exe.is_file() {
        return Ok(Some(exe));
    }
    if !dir.join("Cargo.toml").is_file() {
        return Ok(None);
    }
    eprintln!("building {} (once)", dir.display());
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .status()
        .context("running cargo for shuttle-baseline")?;
    if !status.success() {
        bail!("building {} failed ({status})", dir.display());
    }
    Ok(Some(exe))
}

/// Shuttle's runs per second per program, from `shuttle-baseline <runs> throughput`.
fn shuttle_throughput(exe: &Path, runs: u32) -> anyhow::Result<Vec<(String, f64)>> {
    let out = Command::new(exe)
        .args([runs.to_string().as_str(), "throughput"])
        .output()
        .with_context(|| format!("running {}", exe.display()))?;
    if !out.status.success() {
        bail!("{} exited with {}", exe.display(), out.status);
    }
    // Lines: `<program>\tk=20\t<rate> runs/s (random scheduler, one thread)`.
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter_map(|l| {
            let mut cols = l.split('\t');
            let name = cols.next()?;
            let _k = cols.next()?;
            let rate = cols.next()?.split_whitespace().next()?.parse().ok()?;
            Some((name.to_string(), rate))
        })
        .collect())
}
