//! `jostle bench --only shrink`: what shrinking adds to a campaign. The default campaign on
//! an example and on a noisy program (`noisy_wronglock`: a wronglock behind six noise tasks,
//! runs of some 3,600 steps), made by this `jostle` as a user makes them, with and
//! without `--no-shrink` (each three times, the fastest kept): the shrink share (shrinking's
//! wall time over the campaign's) and the campaign's wall time over the one without
//! shrinking, each beside its goal.

use super::BenchArgs;
use anyhow::Context;
use jostle_host_tools::output::report::Report;
use jostle_host_tools::transport::build::{QEMU_TARGET, cargo_build};
use std::path::Path;

/// The programs measured: an example of the papers, and the noisy one.
const PROGRAMS: [&str; 2] = ["rf_fig1", "noisy_wronglock"];

/// Goal of the shrink share (issue 35): a campaign at most 1.25 times as long as without
/// shrinking leaves shrinking at most a fifth of it.
const SHARE_GOAL: f64 = 0.20;
const RATIO_GOAL: f64 = 1.25;
/// Campaigns made of each kind, the fastest kept.
const REPEAT: usize = 3;

pub(crate) fn shrink_share(args: &BenchArgs) -> anyhow::Result<()> {
    let jostle = std::env::current_exe().context("the jostle executable")?;
    let dir = tempfile::tempdir()?;
    for program in PROGRAMS {
        let elf = cargo_build(
            "jostle-examples",
            program,
            Some(QEMU_TARGET),
            args.firmware.target_dir.as_deref(),
        )
        .with_context(|| format!("{program}: the shrink rows need the Jostle workspace"))?;
        // Each campaign REPEAT times, in turns, the one of least wall time kept: a campaign
        // of a second or two is at the mercy of whatever else the machine runs.
        let (mut with, mut without): (Option<Report>, Option<Report>) = (None, None);
        for k in 0..REPEAT {
            for (no_shrink, best) in [(false, &mut with), (true, &mut without)] {
                let out = dir.path().join(format!("{program}-{no_shrink}-{k}"));
                let r = campaign(&jostle, &elf, &out, no_shrink)?;
                if best
                    .as_ref()
                    .is_none_or(|b| r.timing.wall_seconds < b.timing.wall_seconds)
                {
                    *best = Some(r);
                }
            }
        }
        let (with, without) = (with.expect("REPEAT > 0"), without.expect("REPEAT > 0"));
        let (wall, bare) = (with.timing.wall_seconds, without.timing.wall_seconds);
        let shrink = with.timing.shrink_seconds;
        let findings: Vec<bool> = with
            .failures
            .iter()
            .filter(|f| f.is_failure())
            .map(|f| f.shrunk.as_ref().is_some_and(|s| s.replay.is_some()))
            .chain(
                with.bugs
                    .iter()
                    .filter(|b| b.confirmed > 0)
                    .map(|b| b.shrunk.as_ref().is_some_and(|s| s.replay.is_some())),
            )
            .collect();
        println!(
            "shrink share {program:<16} {:>5.1} % ({shrink:.2} s of {wall:.2} s, {} shrink runs; goal <= {:.0} %); campaign / --no-shrink {:.2}x ({wall:.2} s / {bare:.2} s; goal <= {RATIO_GOAL}x); {} of {} findings shrunk",
            100.0 * shrink / wall.max(1e-9),
            with.runs.shrink,
            100.0 * SHARE_GOAL,
            wall / bare.max(1e-9),
            findings.iter().filter(|&&s| s).count(),
            findings.len(),
        );
    }
    Ok(())
}

/// `jostle campaign ELF -j 2 --out DIR [--no-shrink]`: its report, once it ended with a
/// verdict (0 or 40).
fn campaign(jostle: &Path, elf: &Path, out: &Path, no_shrink: bool) -> anyhow::Result<Report> {
    let mut cmd = std::process::Command::new(jostle);
    cmd.arg("campaign")
        .arg(elf)
        .args(["-j", "2", "--out"])
        .arg(out);
    if no_shrink {
        cmd.arg("--no-shrink");
    }
    let done = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .context("jostle campaign")?;
    if !matches!(done.code(), Some(0 | 40)) {
        anyhow::bail!("jostle campaign {} ended with {done}", elf.display());
    }
    Ok(Report::read(out)?)
}
