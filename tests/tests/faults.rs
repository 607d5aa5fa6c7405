//! Fault injection: QEMU killed with SIGKILL (as the OOM killer kills) at random points of
//! campaigns — while it boots, in the middle of a run, between a run's end and its word that
//! it waits for the next block, while it waits — at least 50 kills across campaigns of
//! several firmware and seeds. Every campaign must finish, and its report must equal the
//! report of the same campaign without kills: the same findings (failures, with their
//! counts, first runs and seeds, timelines and shrunk runs), the same candidates with their
//! attempts, verdicts and seeds, the same run counts and the same stop reason: report.json
//! whole, but for `timing` (wall-clock figures).
//!
//! `JOSTLE_FAULT_KILLS=N` asks for N kills instead of 50 (`scripts/fault-soak` asks for
//! more).
#![cfg(target_os = "linux")]

use crate::common;

use common::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

/// Kills asked for when `JOSTLE_FAULT_KILLS` says nothing.
const KILLS: u32 = 50;

/// Campaigns at most, whatever the kills (each one of these firmware, in turn, with seed
/// `i`): on an idle machine a campaign may end before its QEMU's kill comes (32 kills in 40
/// campaigns on a fresh clone), and a machine so loaded that boots outlive their kill
/// rarely still ends.
const MOST_CAMPAIGNS: u64 = 160;

/// The firmware, each with a filler argument that makes its runs long enough for most
/// kills to land in one (a panic, a deadlock, an atomicity violation, a race behind a lock
/// hand-off).
const FIRMWARE: [(&str, &str); 4] = [
    ("rf_fig2", "200"),
    ("abba_deadlock", "100"),
    ("af_fig2", "100"),
    ("hidden_order", "200"),
];

/// A QEMU whose boots are killed with SIGKILL after 300 to 800 ms (drawn from
/// /dev/urandom), if they live that long; each kill is a line in `kills`. The boot after a
/// kill is spared: on a loaded machine a boot may not make its first run within 300 ms, and
/// four boots killed in a row are a QEMU that always dies (exit 27, tested in
/// `reliability.rs`), not the fault this test injects.
fn killing_qemu(dir: &Path) -> std::path::PathBuf {
    let kills = dir.join("kills");
    let spare = dir.join("spare-next");
    fake_qemu(
        dir,
        "qemu-killed",
        &format!(
            r#"if rm '{spare}' 2>/dev/null; then exec qemu-system-arm "$@"; fi
r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
ms=$((300 + r % 500))
# The killer holds none of QEMU's pipes (its output must end with QEMU's), and kills only
# the QEMU this script becomes.
( sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
  grep -q qemu-system-arm /proc/$$/cmdline 2>/dev/null && kill -9 $$ 2>/dev/null &&
    echo "$ms" >> '{kills}' && : > '{spare}' ) </dev/null >/dev/null 2>&1 3>&- &
exec qemu-system-arm "$@""#,
            kills = kills.display(),
            spare = spare.display()
        ),
    )
}

/// `jostle campaign fw` with `args` in `dir`, its QEMU `qemu` (the real one if `None`).
fn campaign(dir: &Path, fw: &Path, args: &[&str], qemu: Option<&Path>) -> Output {
    let mut cmd = Command::new(jostle());
    cmd.current_dir(dir)
        .arg("campaign")
        .arg(fw)
        .args(args)
        .stdin(Stdio::null());
    if let Some(q) = qemu {
        cmd.env("JOSTLE_QEMU", q);
    }
    cmd.output().unwrap()
}

/// The report in `dir/jostle-report`, wall-clock figures aside.
fn without_timing(dir: &Path) -> serde_json::Value {
    let mut r = report(&dir.join("jostle-report"));
    r.as_object_mut().unwrap().remove("timing");
    r
}

/// Where `a` and `b` differ, as `path: a vs b` (the first few).
fn differences(path: &str, a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    use serde_json::Value;
    let mut out = Vec::new();
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (u, v) = (
                    &x.get(k).cloned().unwrap_or(Value::Null),
                    &y.get(k).cloned().unwrap_or(Value::Null),
                );
                out.extend(differences(&format!("{path}.{k}"), u, v));
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                out.extend(differences(&format!("{path}[{i}]"), u, v));
            }
        }
        (x, y) if x != y => {
            let short = |v: &Value| v.to_string().chars().take(120).collect::<String>();
            out.push(format!("{path}: {} vs {}", short(x), short(y)));
        }
        _ => {}
    }
    out.truncate(12);
    out
}

#[test]
fn campaigns_whose_qemu_is_killed_at_random_points_report_what_campaigns_without_kills_do() {
    let wanted: u32 = std::env::var("JOSTLE_FAULT_KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(KILLS);
    let started = Instant::now();
    let (mut kills, mut campaigns, mut retried) = (0u32, 0u64, 0usize);
    while kills < wanted {
        assert!(
            campaigns < MOST_CAMPAIGNS,
            "{kills} kills in {campaigns} campaigns"
        );
        let (bin, filler) = FIRMWARE[campaigns as usize % FIRMWARE.len()];
        let fw = elf(bin);
        let seed = campaigns.to_string();
        // A budget long enough for several kills; workers 1 or 2 (the report does not
        // depend on them).
        let jobs = if campaigns % 2 == 0 { "2" } else { "1" };
        let args = [
            "--seed", &seed, "--arg", filler, "--budget", "400", "-j", jobs,
        ];
        let whole = tempfile::tempdir().unwrap();
        let killed = tempfile::tempdir().unwrap();
        let qemu = killing_qemu(killed.path());
        // Side by side: the reference does not wait for the killed one.
        let (reference, out) = std::thread::scope(|s| {
            let reference = s.spawn(|| campaign(whole.path(), &fw, &args, None));
            let out = campaign(killed.path(), &fw, &args, Some(&qemu));
            (reference.join().unwrap(), out)
        });
        let what = format!("{} {}", fw.display(), args.join(" "));
        assert_eq!(
            out.status.code(),
            reference.status.code(),
            "{what}: {}",
            text(&out)
        );
        let differ = differences(
            "",
            &without_timing(killed.path()),
            &without_timing(whole.path()),
        );
        assert!(
            differ.is_empty(),
            "{what}: the report with kills differs from the one without (killed vs whole):\n{}",
            differ.join("\n")
        );
        let these = std::fs::read_to_string(killed.path().join("kills"))
            .map_or(0, |k| k.lines().count() as u32);
        let err = String::from_utf8_lossy(&out.stderr);
        retried += err.matches("making it again in a new boot").count();
        kills += these;
        campaigns += 1;
    }
    eprintln!(
        "fault injection: {kills} kills of QEMU in {campaigns} campaigns ({retried} runs made again), each report equal to the campaign's without kills, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // The kills reached runs in flight, not only idle boots.
    assert!(retried > 0, "no kill landed in a run");
}
