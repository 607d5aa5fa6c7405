//! Shrinking (issue 17): every finding of a campaign has a shrunk schedule no longer than its
//! first run's that replays to the same finding; rf_fig1's ERROR1 needs at most two
//! preemptions. The `schedule` strategy reproduces a recorded interleaving, with the same
//! decisions on QEMU and on the host port.

use crate::common;
use common::*;
use jostle_host_tools::engine::shrink::{extract, schedule_config};
use jostle_kernel::config::StrategyId;
use jostle_kernel::{Config, TraceLevel};
use std::path::Path;

/// `jostle replay FW --report DIR --bug ID --shrunk` in `dir` (host port when `host`).
fn replay_shrunk(dir: &Path, fw: &Path, host: bool, id: &str) -> std::process::Output {
    jostle_on(
        dir,
        host,
        &[
            "replay",
            fw.to_str().unwrap(),
            "--report",
            "jostle-report",
            "--bug",
            id,
            "--shrunk",
        ],
    )
}

/// Runs a campaign on rf_fig1 and checks every finding's shrunk schedule; returns the report.
fn campaign_shrinks_every_finding(fw: &Path, host: bool, seed: u64) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let seed = seed.to_string();
    let out = jostle_on(
        dir.path(),
        host,
        &["campaign", fw.to_str().unwrap(), "--seed", &seed, "-j", "4"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(40), "{stdout}\n{out:?}");
    let r = report(&dir.path().join("jostle-report"));
    let mut findings: Vec<(String, &serde_json::Value)> = failures(&r)
        .into_iter()
        .map(|f| (f["id"].as_str().unwrap().to_owned(), f))
        .collect();
    findings.extend(
        bugs(&r)
            .iter()
            .filter(|b| b["confirmed"].as_u64().unwrap() > 0)
            .map(|b| (b["id"].as_str().unwrap().to_owned(), b)),
    );
    assert!(findings.len() >= 2, "{r:#}");
    let mut spent = 0;
    for (id, f) in findings {
        let s = &f["shrunk"];
        assert!(s["replay"].is_object(), "{id}: not shrunk: {s:#}");
        let n = |k: &str| s[k].as_u64().unwrap();
        // No longer than the original: fewer or as many steps, preemptions and entries.
        assert!(n("steps") <= n("original_steps"), "{id}: {s:#}");
        assert!(n("preemptions") <= n("original_preemptions"), "{id}: {s:#}");
        let entries = shrunk_entries(s);
        assert!(entries <= n("original_entries"), "{id}: {s:#}");
        assert!(n("runs") >= 1 && n("runs") <= 200, "{id}: {s:#}");
        spent += n("runs");
        // The printed summary shows it before the first run's replay.
        assert!(stdout.contains(id.as_str()), "{stdout}");
        // It replays to the same finding, interleaving included.
        let replay = replay_shrunk(dir.path(), fw, host, &id);
        let text = String::from_utf8_lossy(&replay.stdout);
        assert!(
            text.contains("reproduced: ") && text.contains(&id),
            "{id}\n{text}\n{replay:?}"
        );
    }
    assert_eq!(r["runs"]["shrink"].as_u64().unwrap(), spent, "{r:#}");
    let shortest = stdout
        .find("shortest")
        .expect("the shortest schedule is printed");
    let first = stdout[shortest..].find("first: seed");
    assert!(first.is_some(), "shortest before the first run: {stdout}");
    r
}

/// The ERROR1 failure's shrunk schedule.
fn error1(r: &serde_json::Value) -> &serde_json::Value {
    let f = failures(r)
        .into_iter()
        .find(|f| f["example"].as_str().unwrap().contains("ERROR1"))
        .expect("ERROR1 found");
    &f["shrunk"]
}

#[test]
fn every_finding_of_rf_fig1_shrinks_and_error1_needs_at_most_two_preemptions_host() {
    // Seed 0's recorded ERROR1 run delta-debugs to 3 preemptions; the one-switch search
    // brings it down.
    for seed in [3, 0] {
        let r = campaign_shrinks_every_finding(&host_exe("rf_fig1"), true, seed);
        let s = error1(&r);
        assert!(
            s["preemptions"].as_u64().unwrap() <= 2,
            "seed {seed}: {s:#}"
        );
        println!(
            "seed {seed}: ERROR1: {} preemptions, {} steps (first run {}, {}), schedule {}, {} runs",
            s["preemptions"],
            s["steps"],
            s["original_preemptions"],
            s["original_steps"],
            s["schedule"],
            s["runs"]
        );
    }
}

#[test]
fn every_finding_of_rf_fig1_shrinks_and_error1_needs_at_most_two_preemptions_qemu() {
    let r = campaign_shrinks_every_finding(&elf("rf_fig1"), false, 3);
    assert!(error1(&r)["preemptions"].as_u64().unwrap() <= 2);
}

#[test]
fn a_recorded_schedule_replays_the_same_interleaving_on_qemu_and_the_host_port() {
    // A Random run's schedule, replayed by the `schedule` strategy: the same interleaving
    // (its digest) on both ports, whatever seed the replay carries.
    let mut replayed = Vec::new();
    for &bin in CROSS_PORT_EXAMPLES {
        let fw = firmware(bin);
        for seed in 0..4 {
            let recorded = Config {
                trace: TraceLevel::Full,
                ..config(seed, &[3])
            };
            let original = run_host(bin, recorded.clone());
            let x = extract(&original.events);
            if x.entries.len() > 16 {
                continue;
            }
            replayed.push((bin, seed, x.entries.len()));
            let bps: Vec<_> = x.entries.iter().map(|e| e.bp).collect();
            let replay = Config {
                seed: seed + 1000,
                ..schedule_config(&original.config, &[], &bps)
            };
            assert_eq!(replay.strategy, StrategyId::Schedule);
            let q = run_qemu(&fw, replay.clone());
            let h = run_host(bin, replay);
            let what = format!("{bin} seed {seed}");
            assert_same_decisions(&q, &h, &what);
            assert_eq!(h.schedule_digest(), original.schedule_digest(), "{what}");
            assert_eq!(h.outcome, original.outcome, "{what}");
        }
    }
    // Every run fits, firings inside handlers included.
    assert!(
        replayed.len() == CROSS_PORT_EXAMPLES.len() * 4,
        "{replayed:?}"
    );
}

#[test]
fn no_shrink_leaves_the_findings_as_recorded_and_makes_no_shrink_runs() {
    let fw = host_exe("rf_fig1");
    let campaign = |extra: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["campaign", fw.to_str().unwrap(), "--seed", "3", "-j", "2"];
        args.extend_from_slice(extra);
        let out = jostle_on(dir.path(), true, &args);
        assert_eq!(out.status.code(), Some(40), "{out:?}");
        report(&dir.path().join("jostle-report"))
    };
    let shrunk = campaign(&[]);
    let plain = campaign(&["--no-shrink"]);
    assert!(shrunk["runs"]["shrink"].as_u64().unwrap() > 0, "{shrunk:#}");
    assert_eq!(plain["runs"]["shrink"].as_u64(), Some(0), "{plain:#}");
    let ids = |r: &serde_json::Value| -> Vec<String> {
        failures(r)
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_owned())
            .collect()
    };
    // The same findings, none of them shrunk.
    assert_eq!(ids(&plain), ids(&shrunk));
    for f in failures(&plain).into_iter().chain(bugs(&plain).iter()) {
        assert!(f.get("shrunk").is_none(), "{f:#}");
    }
}
