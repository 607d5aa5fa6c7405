//! SURW (`--strategy surw`, selectively uniform random walk) end to end: its profiling run,
//! the location it aims at, the bug it finds on QEMU, the same decisions on the host port,
//! and its place in a campaign's search, where Phase I's first run is the profiling run
//! and counts as a run.

use crate::common;

use common::*;
use jostle_host_tools::engine::surw::{Profile, with_choice};
use jostle_kernel::Config;
use jostle_kernel::config::StrategyId;
use serde_json::Value;
use std::process::{Command, Output};

const FW: &str = "one_write_among_many";

fn jostle_run(args: &[&str]) -> Output {
    Command::new(jostle())
        .arg("run")
        .args(args)
        .output()
        .expect("jostle runs")
}

/// `jostle run FW --strategy S --runs 30 --json` (and `extra`): the exit code, per run its
/// seed, verdict, steps and panic message, and the standard error.
fn runs_of(fw: &str, strategy: &str, extra: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    let mut args = vec![fw, "--strategy", strategy, "--runs", "30"];
    args.extend(["--trace", "results", "--json"]);
    args.extend(extra);
    let out = jostle_run(&args);
    let rows = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).expect("each line is JSON");
            assert_eq!(r["strategy"], strategy);
            serde_json::json!([r["seed"], r["verdict"], r["steps"], r["panic"]["message"]])
        })
        .collect();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), rows, stderr)
}

/// The scheduling steps of one `--json` run at full trace: event, task and
/// `file:line:col` of each (site ids and location ids differ between the ports).
fn steps_of(fw: &str, seed: &str, extra: &[&str]) -> Vec<(String, Value, Value)> {
    let mut args = vec![fw, "--strategy", "surw", "--seed", seed, "--json"];
    args.extend(extra);
    let out = jostle_run(&args);
    assert_eq!(out.status.code(), Some(11), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"].is_string() && e["event"] != "run_start")
        .map(|e| {
            (
                e["event"].as_str().unwrap().to_owned(),
                e["t"].clone(),
                e["site"].clone(),
            )
        })
        .collect()
}

/// The reporter's single write of `STATE` must come before the worker's first access of
/// four. SURW profiles a Random run, aims at `STATE`'s three sites with the weights 1
/// (reporter) and 4 (worker), plus 5 for the main task that spawns both, and holds the
/// worker back in about a fifth of the runs. Random, on the same seeds, never does. QEMU and
/// the host port make the same decisions, run for run.
#[test]
fn surw_finds_the_order_violation_on_qemu_and_the_host_port_makes_the_same_decisions() {
    let (qemu_elf, host) = (elf(FW), host_test_exe(FW));
    let (code, on_qemu, stderr) = runs_of(qemu_elf.to_str().unwrap(), "surw", &[]);
    assert_eq!(
        code,
        Some(11),
        "the first failure's code: {on_qemu:?}\n{stderr}"
    );
    let panics = on_qemu.iter().filter(|r| r[1] == "panic").count();
    assert!(panics > 0);
    assert!(
        on_qemu
            .iter()
            .all(|r| r[1] == "pass" || (r[1] == "panic" && r[3] == "ORDER")),
        "{on_qemu:?}"
    );
    // The profiling run is a real run, said and counted.
    let site = |line: u32| format!("tests/firmware/src/bin/{FW}.rs:{line}:");
    assert!(
        stderr.contains("jostle: surw: profiling run (random, seed 0, pass after"),
        "{stderr}"
    );
    for line in [24, 28, 32] {
        assert!(stderr.contains(&site(line)), "{stderr}");
    }
    assert!(stderr.contains("weights t0 5, t1 1, t2 4"), "{stderr}");
    assert!(stderr.contains("31 runs in all"), "{stderr}");

    let (code, on_host, _) = runs_of(host.to_str().unwrap(), "surw", &["--host"]);
    assert_eq!(code, Some(11));
    assert_eq!(on_qemu, on_host, "the same decisions on both ports");
    // A failing run, step by step.
    let seed = on_qemu.iter().find(|r| r[1] == "panic").unwrap()[0].to_string();
    let q = steps_of(qemu_elf.to_str().unwrap(), &seed, &[]);
    let h = steps_of(host.to_str().unwrap(), &seed, &["--host"]);
    assert!(q.iter().any(|e| e.0 == "task_panic"), "{q:?}");
    assert_eq!(q, h);

    // The same 30 seeds under Random: no panic.
    let (code, random, _) = runs_of(qemu_elf.to_str().unwrap(), "random", &[]);
    assert_eq!(code, Some(0), "{random:?}");
}

/// SURW alone in a campaign (`--phase1-runs 1 --max-rounds 0 --search surw`), as
/// `scripts/cct-bench` runs it: Phase I's single Random run is the profiling run and is
/// counted in the runs to the first bug. The failing search run records its choice (the
/// interesting sites and the weights) and replays from the report.
#[test]
fn a_campaign_searches_with_surw_after_its_profiling_run_and_counts_it() {
    let exe = host_test_exe(FW);
    let fw = exe.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = jostle_in(
        dir.path(),
        &[
            "campaign",
            fw,
            "--host",
            "--until-failure",
            "--budget",
            "1000",
            "--seed",
            "0",
            "--phase1-runs",
            "1",
            "--max-rounds",
            "0",
            "--search",
            "surw",
        ],
    );
    assert_eq!(out.status.code(), Some(40), "{out:?}");
    let r = report(&dir.path().join("jostle-report"));
    assert_eq!(r["runs"]["phase1"], 1);
    assert_eq!(r["runs"]["phase1_verdicts"]["pass"], 1, "{}", r["runs"]);
    let first = r["runs"]["first_failure"].as_u64().expect("a failure");
    assert!((2..1000).contains(&first), "{}", r["runs"]);
    let failure = failures(&r)[0];
    assert_eq!(failure["first"]["strategy"], "surw", "{failure:#}");
    let bps = failure["first"]["breakpoints"].as_array().unwrap();
    let interesting = jostle_kernel::targets::aux(jostle_kernel::targets::role::INTERESTING, 0);
    let sites: Vec<&str> = bps
        .iter()
        .filter(|b| b["aux"] == interesting)
        .map(|b| b["location"].as_str().unwrap())
        .collect();
    assert_eq!(sites.len(), 3, "{bps:?}");
    assert!(sites.iter().all(|s| s.contains(FW)), "{sites:?}");
    let weights = bps.iter().filter(|b| b["aux"] != interesting).count();
    assert_eq!(weights, 3, "{bps:?}");
    let id = failure["id"].as_str().unwrap();
    let out = jostle_on(
        dir.path(),
        true,
        &["replay", fw, "--report", "jostle-report", "--bug", id],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("reproduced: panic"), "{text}\n{out:?}");
}

/// The kernel's SURW makes the same decisions on QEMU and on the host port, on the examples
/// whose decisions the other strategies are compared on (atomics, spinning on a flag,
/// interrupts included). Each port profiles its own Random run. Site ids and location ids
/// differ between the ports, and the choice is the same: the same location drawn, its sites,
/// the same weights.
#[test]
fn host_port_and_qemu_make_the_same_surw_decisions() {
    let mut aimed = 0;
    for &bin in CROSS_PORT_EXAMPLES {
        let fw = firmware(bin);
        let on_qemu = Profile::of(&run_qemu(&fw, config(0, &[3])));
        let on_host = Profile::of(&run_host(bin, config(0, &[3])));
        for seed in 0..8 {
            let c = Config {
                strategy: StrategyId::Surw,
                ..config(seed, &[3])
            };
            let (cq, ch) = (
                with_choice(&c, Some(&on_qemu)),
                with_choice(&c, Some(&on_host)),
            );
            assert_eq!(cq.breakpoints.len(), ch.breakpoints.len(), "{bin} {seed}");
            aimed += usize::from(!cq.breakpoints.is_empty());
            let q = run_qemu(&fw, cq);
            let h = run_host(bin, ch);
            assert_same_decisions(&q, &h, &format!("{bin} surw seed {seed}"));
        }
    }
    // Five of them have a location that several tasks access and one writes (the irq_*
    // examples share theirs with a handler, which is no task).
    assert!(aimed >= 8 * 5, "{aimed} runs aimed at a location");
}
