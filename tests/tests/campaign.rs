//! `jostle campaign`, `replay` and `merge` on QEMU, through the command line as users run
//! them: every example gives exactly its known bugs; the report does not depend on the
//! number of workers; every bug replays; the HTML holds one timeline per confirmed bug;
//! shards merge into the unsharded counts; Ctrl-C leaves a valid partial report.

use crate::common;

use common::*;
use jostle_host_tools::RunOutcome;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// The line of `example`'s source whose comment is `// marker` (the paper's statement
/// numbers), as `file:line` without the column.
fn statement(example: &str, marker: &str) -> String {
    let path = format!("examples/src/bin/{example}.rs");
    let text = std::fs::read_to_string(workspace().join(&path)).expect("example source");
    let lines: Vec<&str> = text.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.trim_end().ends_with(&format!("// {marker}")))
        .unwrap_or_else(|| panic!("{path}: no `// {marker}`"));
    // rustfmt moves a comment after `{` to its own line: the statement is the one above.
    let n = if lines[i].trim_start().starts_with("//") {
        i
    } else {
        i + 1
    };
    format!("{path}:{n}:")
}

fn has_site(bug: &Value, prefix: &str) -> bool {
    bug["sites"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s.as_str().unwrap().starts_with(prefix))
}

/// The recorded runs' timelines in report.html (one per confirmed bug and per failure; a
/// shrunk run's comes before it), each with the bug's or failure's steps marked.
/// `jostle campaign EXE --seed SEED ARGS…` in a new directory: its output, and the directory
/// (the report is in `jostle-report` there).
fn seeded_campaign(exe: &Path, seed: u64, args: &[&str]) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let seed = seed.to_string();
    let mut all = vec!["campaign", exe.to_str().unwrap(), "--seed", &seed];
    all.extend(args);
    let out = jostle_in(dir.path(), &all);
    (out, dir)
}

fn html_timelines(dir: &Path) -> usize {
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&html, options).expect("well-formed HTML");
    let class_has = |n: roxmltree::Node<'_, '_>, c: &str| {
        n.attribute("class")
            .is_some_and(|k| k.split(' ').any(|k| k == c))
    };
    doc.descendants()
        .filter(|n| n.tag_name().name() == "table" && class_has(*n, "tl"))
        .filter(|t| !t.attribute("id").unwrap_or_default().contains("-shrunk-"))
        .inspect(|t| {
            assert!(
                t.descendants().any(|n| class_has(n, "hl")),
                "a timeline without the bug's operations highlighted"
            )
        })
        .count()
}

#[test]
fn every_example_gives_exactly_its_known_bugs_and_each_replays() {
    // Per example: the confirmed bugs (kind, status, a site every one of them has), and the
    // candidates that must be predicted but stay unconfirmed. Other candidates may be
    // predicted (e.g. af_fig2's single-location triple) as long as they are not confirmed.
    // af_fig2 has two bugs: T1's block, and T2's block, whose violator T1 would run long
    // before it (the filler) unless AtomFuzzer holds T1 back at its acquire.
    type Expect = (&'static str, &'static str, &'static str);
    let expected: &[(&str, &[Expect], &[&str])] = &[
        ("rf_fig2", &[("race", "harmful", "rf_fig2.rs:")], &[]),
        (
            "af_fig1",
            &[("atomicity", "harmful", "af_fig1.rs:26:")],
            &[],
        ),
        (
            "af_fig2",
            &[
                ("atomicity", "harmful", "af_fig2.rs:"),
                ("atomicity", "harmful", "af_fig2.rs:"),
            ],
            &[],
        ),
        ("af_fig3", &[], &["atomicity"]),
        (
            "two_stage",
            &[("atomicity", "harmful", "two_stage.rs:32:")],
            &[],
        ),
        (
            "abba_deadlock",
            &[("deadlock", "harmful", "abba_deadlock.rs:")],
            &[],
        ),
        (
            "hidden_order",
            &[("race", "harmful", "hidden_order.rs:")],
            &[],
        ),
        ("correct_counter", &[], &[]),
    ];
    for (example, want, unconfirmed) in expected {
        let dir = tempfile::tempdir().unwrap();
        let elf = elf(example);
        let out = jostle_in(
            dir.path(),
            &[
                "campaign",
                elf.to_str().unwrap(),
                "-j",
                "2",
                "--junit",
                "junit.xml",
            ],
        );
        let r = report(&dir.path().join("jostle-report"));
        assert_eq!(r["stopped"], "done", "{example}");
        let confirmed: Vec<&Value> = bugs(&r)
            .iter()
            .filter(|b| b["confirmed"].as_u64().unwrap() > 0)
            .collect();
        assert_eq!(confirmed.len(), want.len(), "{example}: {r:#}");
        for (bug, (kind, status, site)) in confirmed.iter().zip(want.iter()) {
            assert_eq!(bug["kind"], *kind, "{example}");
            assert_eq!(bug["status"], *status, "{example}");
            assert!(
                bug["sites"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|s| s.as_str().unwrap().contains(site)),
                "{example}: {bug:#}"
            );
        }
        for kind in *unconfirmed {
            assert!(
                bugs(&r)
                    .iter()
                    .any(|b| b["kind"] == *kind && b["status"] == "unconfirmed"),
                "{example}: a {kind} candidate predicted and not confirmed: {r:#}"
            );
        }
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(k, s, _)| (k.to_string(), s.to_string()))
            .collect();
        let harmful = want.iter().filter(|(_, st)| st == "harmful").count();
        // Every failing run is a finding: a harmful bug's runs failed, so it has failures;
        // a program without a harmful bug has none.
        let failures = failures(&r);
        assert_eq!(failures.is_empty(), harmful == 0, "{example}: {r:#}");
        assert_eq!(
            out.status.code(),
            Some(if harmful > 0 { 40 } else { 0 }),
            "{example}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
        let doc = roxmltree::Document::parse(&junit).expect("JUnit XML");
        let failing_cases = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "failure")
            .count();
        assert_eq!(failing_cases, harmful + failures.len(), "{example}");
        let confirmed: Vec<&Value> = bugs(&r)
            .iter()
            .filter(|b| b["confirmed"].as_u64().unwrap() > 0)
            .collect();
        assert_eq!(
            html_timelines(&dir.path().join("jostle-report")),
            confirmed.len() + failures.len(),
            "{example}: one timeline per confirmed bug and per failure"
        );
        for f in &failures {
            let id = f["id"].as_str().unwrap();
            let out = replay_bug(dir.path(), &elf, id);
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                text.contains(&format!(
                    "reproduced: {} {id}",
                    f["verdict"].as_str().unwrap()
                )),
                "{example} failure {id}: {text}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        for bug in confirmed {
            let id = bug["id"].as_str().unwrap();
            let out = replay_bug(dir.path(), &elf, id);
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                text.contains(&format!(
                    "reproduced: {} {id}",
                    bug["kind"].as_str().unwrap()
                )),
                "{example} {id}: {text}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(text.contains(">>"), "the bug is marked in the interleaving");
        }
    }
}

#[test]
fn an_order_violation_no_analysis_predicts_is_a_finding_that_fails_the_campaign() {
    // Three correctly locked sections; the assertion fails unless `start` runs last.
    let dir = tempfile::tempdir().unwrap();
    let elf = elf("order_violation");
    let out = jostle_in(
        dir.path(),
        &[
            "campaign",
            elf.to_str().unwrap(),
            "--phase1-runs",
            "12",
            "--junit",
            "junit.xml",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(40), "{stdout}");
    let r = report(&dir.path().join("jostle-report"));
    assert!(bugs(&r).is_empty(), "nothing is predicted: {r:#}");
    let failures = failures(&r);
    assert_eq!(failures.len(), 1, "one signature: {r:#}");
    let f = failures[0];
    assert_eq!(f["verdict"], "panic");
    let site = format!(
        "examples/src/bin/order_violation.rs:{}:",
        line_of("examples/src/bin/order_violation.rs", "assert_eq!(*d, 3")
    );
    assert!(f["site"].as_str().unwrap().starts_with(&site), "{f:#}");
    // The numbers differ between runs (left: 0, 1 or 2); the signature masks them.
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("started before configuration and calibration left: N right: N"),
        "{f:#}"
    );
    let count = f["count"].as_u64().unwrap();
    assert!((2..12).contains(&count), "{f:#}");
    assert_eq!(f["phase1"].as_u64(), Some(count));
    assert_eq!(r["runs"]["phase1_verdicts"]["panic"].as_u64(), Some(count));
    assert!(f["during"].as_object().unwrap().is_empty());
    assert!(stdout.contains("failures 1"), "{stdout}");
    assert!(stdout.contains("relation: none (Phase I)"), "{stdout}");
    // JUnit: the failure is a failing test case.
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    let doc = roxmltree::Document::parse(&junit).expect("JUnit XML");
    let failing: Vec<_> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "failure")
        .collect();
    assert_eq!(failing.len(), 1, "{junit}");
    assert!(
        failing[0]
            .attribute("message")
            .unwrap()
            .contains("started before configuration"),
        "{junit}"
    );
    // The HTML shows its timeline; the replay reproduces it, interleaving and all.
    assert_eq!(html_timelines(&dir.path().join("jostle-report")), 1);
    assert!(f["first"]["schedule"].as_str().is_some(), "{f:#}");
    let id = f["id"].as_str().unwrap();
    let out = replay_bug(dir.path(), &elf, id);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("reproduced: panic {id}")), "{text}");
    assert_eq!(
        out.status.code(),
        Some(11),
        "the replay exits with the panic's code"
    );
}

#[test]
fn a_campaign_that_tests_nothing_is_not_green() {
    let dir = tempfile::tempdir().unwrap();
    let elf = elf("correct_counter");
    let fw = elf.to_str().unwrap();
    // Every run stops at the step limit: no run reached its end.
    let out = jostle_in(dir.path(), &["campaign", fw, "--step-limit", "3"]);
    assert_eq!(
        out.status.code(),
        Some(41),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no run reached its end"), "{err}");
    let r = report(&dir.path().join("jostle-report"));
    assert_eq!(r["failures"][0]["verdict"], "step_limit", "{r:#}");
    assert_eq!(r["failures"][0]["class"], "suspected", "{r:#}");
    for args in [["--phase1-runs", "0"], ["--budget", "0"]] {
        let out = jostle_in(dir.path(), &[&["campaign", fw][..], &args[..]].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
}

#[test]
fn figure_1_confirms_z_and_not_the_false_race_on_x() {
    let dir = tempfile::tempdir().unwrap();
    let elf = elf("rf_fig1");
    jostle_in(dir.path(), &["campaign", elf.to_str().unwrap(), "-j", "2"]);
    let r = report(&dir.path().join("jostle-report"));
    let (z5, z7) = (statement("rf_fig1", "5"), statement("rf_fig1", "7"));
    let (x1, x10) = (statement("rf_fig1", "1"), statement("rf_fig1", "10"));
    let z = bugs(&r)
        .iter()
        .find(|b| has_site(b, &z5) && has_site(b, &z7))
        .expect("the race on z is predicted");
    let x = bugs(&r)
        .iter()
        .find(|b| has_site(b, &x1) && has_site(b, &x10))
        .expect("the race on x is predicted");
    assert_eq!(z["status"], "harmful", "{z:#}");
    assert_eq!(x["status"], "unconfirmed", "{x:#}");
    assert_eq!(x["confirmed"], 0);
    assert_eq!(bugs(&r).len(), 2, "{r:#}");
    // ERROR2 never happens.
    for b in bugs(&r) {
        for a in b["attempts"].as_array().unwrap() {
            assert!(a["panics"].get("ERROR2").is_none(), "{a:#}");
        }
    }
    // The replay is checked event for event: a report whose recorded interleaving differs
    // from what the run gives is refused (exit 32), not passed because the bug happened.
    let id = z["id"].as_str().unwrap().to_owned();
    let recorded = z["first_harmful"]["schedule"]
        .as_str()
        .expect("schedule digest");
    assert_eq!(recorded.len(), 16);
    let path = dir.path().join("jostle-report/report.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace(recorded, "0123456789abcdef")).unwrap();
    let out = replay_bug(dir.path(), &elf, &id);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(32), "{err}");
    assert!(err.contains("interleaving differs"), "{err}");
}

#[test]
fn the_report_does_not_depend_on_the_number_of_workers() {
    let elf = elf("rf_fig1");
    let mut reports = Vec::new();
    for j in ["1", "2"] {
        let dir = tempfile::tempdir().unwrap();
        jostle_in(
            dir.path(),
            &["campaign", elf.to_str().unwrap(), "-j", j, "--seed", "7"],
        );
        let mut r = report(&dir.path().join("jostle-report"));
        r.as_object_mut().unwrap().remove("timing");
        reports.push(r);
    }
    assert_eq!(reports[0], reports[1]);
}

#[test]
fn shards_merge_into_the_unsharded_counts_and_budgets_cut_deterministically() {
    let elf = elf("rf_fig2");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fw = elf.to_str().unwrap();
    // The default runs per candidate: every shard gets its share of Phase II.
    jostle_in(d, &["campaign", fw, "--out", "all"]);
    for i in 0..2 {
        let shard = format!("{i}/2");
        let out = jostle_in(
            d,
            &["campaign", fw, "--shard", &shard, "--out", &format!("s{i}")],
        );
        assert!(out.status.code().is_some());
        let s = report(&d.join(format!("s{i}")));
        assert!(s["runs"]["phase2"].as_u64() > Some(0), "shard {i}: {s:#}");
    }
    let phase2 = |dir: &str| report(&d.join(dir))["runs"]["phase2"].as_u64().unwrap();
    assert_eq!(phase2("s0") + phase2("s1"), phase2("all"));
    // A shard given twice would count its runs twice: refused.
    let out = jostle_in(d, &["merge", "s0", "s0", "--out", "twice"]);
    assert_eq!(out.status.code(), Some(31), "{out:?}");
    let out = jostle_in(d, &["merge", "s0", "s1", "--out", "merged"]);
    assert_eq!(out.status.code(), Some(40), "a harmful bug: {out:?}");
    let (mut all, mut merged) = (report(&d.join("all")), report(&d.join("merged")));
    assert_eq!(merged["shards"], serde_json::json!([[0, 2], [1, 2]]));
    // One timeline for the confirmed bug, one per failure signature.
    assert_eq!(
        html_timelines(&d.join("merged")),
        1 + failures(&merged).len()
    );
    // The merge is the unsharded report (timing, shards and the report directory aside; and
    // the runs to the first failure, which shards have no common order to count).
    assert!(merged["runs"]["first_failure"].is_null());
    assert!(all["runs"]["first_failure"].as_u64().is_some());
    for r in [&mut all, &mut merged] {
        let o = r.as_object_mut().unwrap();
        o.remove("timing");
        o.remove("shards");
        let runs = o["runs"].as_object_mut().unwrap();
        runs.remove("first_failure");
        runs.remove("first_failure_in");
    }
    let text = |r: &Value, dir: &str| r.to_string().replace(&format!("--report {dir} "), "");
    assert_eq!(text(&all, "all"), text(&merged, "merged"));
    assert_eq!(bugs(&all)[0]["runs"].as_u64(), Some(50));
    // A run budget stops at exactly that many runs, and still shows its confirmed bugs'
    // timelines.
    jostle_in(d, &["campaign", fw, "--budget", "23", "--out", "budget"]);
    let b = report(&d.join("budget"));
    assert_eq!(b["stopped"], "budget");
    let runs: u64 = ["phase1", "phase2", "search"]
        .iter()
        .map(|k| b["runs"][k].as_u64().unwrap())
        .sum();
    assert_eq!(runs, 23);
    let confirmed = bugs(&b)
        .iter()
        .filter(|x| x["confirmed"].as_u64() > Some(0))
        .count();
    assert!(confirmed > 0, "{b:#}");
    assert_eq!(
        html_timelines(&d.join("budget")),
        confirmed + failures(&b).len()
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_leaves_a_valid_partial_report() {
    let dir = tempfile::tempdir().unwrap();
    let elf = elf("rf_fig2");
    let mut child = Command::new(jostle())
        .current_dir(dir.path())
        .args([
            "campaign",
            elf.to_str().unwrap(),
            "-j",
            "1",
            "--runs-per-candidate",
            "100000",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until Phase I's report is written (Phase II is then under way).
    let path = dir.path().join("jostle-report").join("report.json");
    let started = std::time::Instant::now();
    while !path.exists() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "no report"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130));
    let r = report(&dir.path().join("jostle-report"));
    assert_eq!(r["stopped"], "interrupted");
    assert_eq!(r["runs"]["phase1"], 5);
    let phase2 = r["runs"]["phase2"].as_u64().unwrap();
    assert!(phase2 < 100_000, "{phase2}");
    assert_eq!(bugs(&r).len(), 1);
    assert_eq!(bugs(&r)[0]["runs"].as_u64().unwrap(), phase2);
    html_timelines(&dir.path().join("jostle-report"));
}

/// Each run of a boot with several runs is the run of its seed alone: same events (but the
/// run index in `RunStart`), same verdict, through passes, panics and deadlocks. Both ways
/// of making several runs in one QEMU: a served boot (each block sent as the last run
/// ends; the transport's way, index 0) and a block of several seeds (the firmware resets
/// itself between them, index `k`).
#[test]
fn several_runs_per_boot_equal_one_run_per_boot() {
    use jostle_host_tools::transport::Runner;
    use jostle_kernel::config::StrategyId;
    use jostle_kernel::{Config, Event};
    let strip = |events: &[Event]| -> Vec<Event> {
        events
            .iter()
            .map(|e| match *e {
                Event::RunStart {
                    seed,
                    strategy,
                    trace,
                    ..
                } => Event::RunStart {
                    seed,
                    strategy,
                    trace,
                    run: 0,
                },
                other => other,
            })
            .collect()
    };
    let index = |o: &RunOutcome| match o.events.first() {
        Some(Event::RunStart { run, .. }) => Some(*run),
        _ => None,
    };
    let mut verdicts = std::collections::BTreeSet::new();
    for (example, strategy) in [
        ("rf_fig2", StrategyId::Random),
        ("abba_deadlock", StrategyId::Random),
        ("af_fig1", StrategyId::Atom),
    ] {
        let runner = Runner::new(elf(example), false, 20.0).unwrap();
        let base = Config {
            seed: 40,
            strategy,
            ..config(40, &[])
        };
        let served = runner.run_batch(&base, 12).unwrap();
        let fw = firmware(example);
        let first = Config {
            runs: 12,
            ..base.clone()
        };
        let booted =
            RunOutcome::batch_from_qemu(&fw, first.clone(), qemu().run(&fw, &first).unwrap());
        assert_eq!((served.len(), booted.len()), (12, 12));
        for (k, (s, b)) in served.iter().zip(&booted).enumerate() {
            assert!(s.error.is_none(), "{example} run {k}: {:?}", s.error);
            assert!(b.error.is_none(), "{example} run {k}: {:?}", b.error);
            let single = run_qemu(
                &fw,
                Config {
                    seed: 40 + k as u64,
                    ..base.clone()
                },
            );
            for o in [s, b] {
                assert_eq!(o.config.seed, 40 + k as u64);
                assert_eq!(strip(&o.events), strip(&single.events), "{example} run {k}");
                assert_eq!(o.outcome, single.outcome);
            }
            verdicts.insert(format!("{:?}", s.outcome));
            assert_eq!((index(s), index(b)), (Some(0), Some(k as u32)));
        }
    }
    assert!(verdicts.len() > 1, "the batches mix verdicts: {verdicts:?}");
}

/// One served QEMU makes run after run: a batch, single runs, another strategy, a failing
/// run; a run that never ends is killed with its QEMU, and the next run boots another.
#[test]
fn one_served_qemu_makes_run_after_run_and_a_hang_costs_one_boot() {
    use jostle_host_tools::Outcome;
    use jostle_host_tools::transport::Transport;
    use jostle_host_tools::transport::qemu::QemuTransport;
    use jostle_kernel::Config;
    use jostle_kernel::config::StrategyId;
    let t = QemuTransport::load(&elf("rf_fig1"), std::time::Duration::from_secs(20)).unwrap();
    let boots = |t: &QemuTransport| t.sessions.as_ref().expect("served").boots();
    let batch = t.run_batch(&config(0, &[]), 20).unwrap();
    let panics = |o: &jostle_host_tools::RunOutcome| o.outcome.is_some_and(|v| v.name() == "panic");
    assert!(batch.iter().any(panics) && !batch.iter().all(panics));
    for seed in 0..5 {
        let pct = Config {
            strategy: StrategyId::Pct,
            ..config(seed, &[])
        };
        let o = t.run(pct, None).unwrap();
        assert!(o.error.is_none() && o.outcome.is_some());
    }
    assert_eq!(boots(&t), 1, "one QEMU for 25 runs");

    let t =
        QemuTransport::load(&elf("hangs_sometimes"), std::time::Duration::from_secs(1)).unwrap();
    let batch = t.run_batch(&config(0, &[]), 8).unwrap();
    let hung = batch
        .iter()
        .filter(|o| o.outcome == Some(Outcome::Timeout))
        .count() as u64;
    assert!(hung > 0 && hung < 8, "{hung} of 8 runs hung");
    // Each hang ends its QEMU; the runs after it are served by the next.
    let last_hung = batch.last().unwrap().outcome == Some(Outcome::Timeout);
    assert_eq!(boots(&t), 1 + hung - u64::from(last_hung));
}

/// A run that never ends, in a boot of several runs: it times out alone (QEMU is killed
/// after the run's limit without output), and the runs after it are made in a new boot.
#[test]
fn a_run_that_never_ends_in_a_boot_of_several_times_out_alone() {
    use jostle_host_tools::Outcome;
    use jostle_host_tools::transport::Runner;
    let runner = Runner::new(elf("hangs_sometimes"), false, 1.0).unwrap();
    let batch = runner.run_batch(&config(0, &[]), 8).unwrap();
    assert_eq!(batch.len(), 8);
    let mut hung = 0;
    for (k, b) in batch.iter().enumerate() {
        assert_eq!(b.config.seed, k as u64);
        let alone = runner.run(config(k as u64, &[]), None).unwrap();
        assert_eq!(b.outcome, alone.outcome, "seed {k}");
        hung += usize::from(b.outcome == Some(Outcome::Timeout));
    }
    assert!(hung > 0 && hung < 8, "{hung} of 8 runs hung");
}

#[test]
fn a_qemu_killed_mid_campaign_is_retried_in_a_new_boot_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let elf = elf("rf_fig2");
    let fw = elf.to_str().unwrap();
    let reference = jostle_in(dir.path(), &["campaign", fw, "-j", "1", "--out", "ref"]);
    assert_eq!(reference.status.code(), Some(40));
    // QEMU killed with SIGKILL (as the OOM killer would): the first boot after it has
    // served ten runs, while it waits for the next block; the second at once.
    let script = dir.path().join("qemu-dies-once");
    std::fs::write(
        &script,
        r#"#!/bin/sh
n=$(cat "$0.count" 2>/dev/null || echo 0)
n=$((n+1))
echo $n > "$0.count"
if [ "$n" = 2 ]; then kill -9 $$; fi
if [ "$n" = 1 ]; then
  rm -f "$0.fifo"; mkfifo "$0.fifo"
  qemu-system-arm "$@" < "$0.fifo" &
  q=$!
  exec 3> "$0.fifo"
  head -c 2200 >&3
  sleep 0.5
  kill -9 $q
  kill -9 $$
fi
exec qemu-system-arm "$@"
"#,
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(jostle())
        .current_dir(dir.path())
        .env("JOSTLE_QEMU", &script)
        .args(["campaign", fw, "-j", "1", "--out", "killed"])
        .output()
        .expect("jostle runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(40), "{err}");
    assert!(err.contains("making it again in a new boot"), "{err}");
    let boots: u32 = std::fs::read_to_string(dir.path().join("qemu-dies-once.count"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The first two boots died; a third served the rest.
    assert_eq!(boots, 3, "the killed boots were replaced");
    // The same report as without the kill, timing aside.
    let strip = |mut r: Value| {
        r["timing"] = Value::Null;
        r["firmware"]["command"] = Value::Null;
        for b in r["bugs"].as_array_mut().unwrap() {
            for k in ["first_confirmed", "first_harmful"] {
                if b[k].is_object() {
                    b[k]["command"] = Value::Null;
                }
            }
            if b["shrunk"]["replay"].is_object() {
                b["shrunk"]["replay"]["command"] = Value::Null;
            }
        }
        for f in r["failures"].as_array_mut().unwrap() {
            f["first"]["command"] = Value::Null;
            if f["shrunk"]["replay"].is_object() {
                f["shrunk"]["replay"]["command"] = Value::Null;
            }
        }
        r
    };
    assert_eq!(
        strip(report(&dir.path().join("killed"))),
        strip(report(&dir.path().join("ref")))
    );
}

#[test]
fn the_livelock_bound_is_derived_from_phase_one_or_given() {
    // rf_fig2 with 2000 filler statements: the racing access comes after ~2000 steps, past
    // the kernel's default bound of 1000.
    let dir = tempfile::tempdir().unwrap();
    let elf = elf("rf_fig2");
    let fw = elf.to_str().unwrap();
    let confirmed = |report_dir: &str, extra: &[&str]| {
        let args = [
            &["campaign", fw, "--arg", "2000", "--out", report_dir][..],
            extra,
        ]
        .concat();
        jostle_in(dir.path(), &args);
        let r = report(&dir.path().join(report_dir));
        let bound = r["settings"]["livelock_bound"].as_u64().unwrap();
        let race = bugs(&r)
            .iter()
            .find(|b| b["kind"] == "race")
            .expect("the race is predicted")
            .clone();
        (race["confirmed"].as_u64().unwrap(), bound)
    };
    let (derived, bound) = confirmed("derived", &[]);
    assert!(bound > 4000, "twice the longest Phase I run: {bound}");
    assert!(
        derived >= 45,
        "{derived}/50 confirmed with the derived bound"
    );
    let (given, bound) = confirmed("given", &["--livelock-bound", "1000"]);
    assert_eq!(bound, 1000);
    assert_eq!(given, 0, "released before the other side can arrive");
}

#[test]
fn interrupt_examples_fail_as_described_on_both_ports_and_every_finding_replays() {
    // (example, does it have a bug): the four with a bug end in a failure (exit 40) and a
    // confirmed candidate where an analysis predicts one; the masked one never fails.
    let cases = [
        ("irq_counter", true),
        ("irq_ringbuf", true),
        ("irq_flag", true),
        ("irq_nested", true),
        ("irq_masked_ok", false),
    ];
    for host in [false, true] {
        for (example, buggy) in cases {
            let dir = tempfile::tempdir().unwrap();
            let fw = if host {
                host_exe(example)
            } else {
                elf(example)
            };
            let fw = fw.to_str().unwrap();
            let out = jostle_on(
                dir.path(),
                host,
                &["campaign", fw, "-j", "2", "--runs-per-candidate", "20"],
            );
            let what = format!("{example} (host port: {host})");
            assert_eq!(
                out.status.code(),
                Some(if buggy { 40 } else { 0 }),
                "{what}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let r = report(&dir.path().join("jostle-report"));
            let failures = failures(&r);
            assert_eq!(failures.is_empty(), !buggy, "{what}: {r:#}");
            let confirmed: Vec<&Value> = bugs(&r)
                .iter()
                .filter(|b| b["confirmed"].as_u64().unwrap() > 0)
                .collect();
            if !buggy {
                assert!(confirmed.is_empty(), "{what}: {r:#}");
            }
            if example == "irq_counter" {
                // The lost update is predicted (race and access atomicity) and confirmed.
                assert!(
                    confirmed.iter().any(|b| b["kind"] == "access_atomicity"),
                    "{what}: {r:#}"
                );
                assert!(confirmed.iter().any(|b| b["kind"] == "race"), "{what}");
            }
            if host {
                continue;
            }
            // Every finding replays, its interleaving checked step for step.
            let ids = confirmed
                .iter()
                .map(|b| (b["kind"].as_str().unwrap(), b["id"].as_str().unwrap()))
                .chain(
                    failures
                        .iter()
                        .map(|f| (f["verdict"].as_str().unwrap(), f["id"].as_str().unwrap())),
                );
            for (kind, id) in ids {
                let out = replay_bug(dir.path(), Path::new(fw), id);
                let text = String::from_utf8_lossy(&out.stdout);
                assert!(
                    text.contains(&format!("reproduced: {kind} {id}")),
                    "{what} {id}: {text}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}

#[test]
fn faults_and_stack_overflows_nothing_predicts_fail_the_campaign_everywhere() {
    for (bin, args, verdict, words) in [
        (
            "hard_fault",
            &["--arg", "0"][..],
            "hard_fault",
            "precise data bus error at 0x60000000",
        ),
        (
            "hard_fault",
            &["--arg", "1"][..],
            "hard_fault",
            "undefined instruction",
        ),
        (
            "stack_overflow",
            &[][..],
            "stack_overflow",
            "overflowed its stack",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let elf = elf(bin);
        let run = [
            &["campaign", elf.to_str().unwrap(), "--junit", "junit.xml"][..],
            args,
        ]
        .concat();
        let out = jostle_in(dir.path(), &run);
        assert_eq!(out.status.code(), Some(40), "{bin} {args:?}: {out:?}");
        let r = report(&dir.path().join("jostle-report"));
        let failures = failures(&r);
        assert_eq!(failures.len(), 1, "{bin} {args:?}: {r:#}");
        assert_eq!(failures[0]["verdict"], verdict);
        assert!(
            failures[0]["example"].as_str().unwrap().contains(words),
            "{:#}",
            failures[0]
        );
        let id = failures[0]["id"].as_str().unwrap();
        let html = std::fs::read_to_string(dir.path().join("jostle-report/report.html")).unwrap();
        assert!(
            html.contains(&format!("id=\"failure-{id}\"")),
            "{bin}: HTML"
        );
        let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
        assert_eq!(junit.matches("<failure ").count(), 1, "{bin}: {junit}");
    }
}

#[test]
fn replay_commands_are_shell_quoted_and_run_as_printed() {
    let dir = tempfile::tempdir().unwrap();
    // A firmware path and a report directory a shell would split or expand.
    let odd = dir.path().join("it's a $firmware");
    std::fs::create_dir(&odd).unwrap();
    let fw = odd.join("order violation");
    std::fs::copy(elf("order_violation"), &fw).unwrap();
    let out = jostle_in(
        dir.path(),
        &[
            "campaign",
            fw.to_str().unwrap(),
            "--out",
            "my report",
            "--phase1-runs",
            "12",
        ],
    );
    assert_eq!(out.status.code(), Some(40), "{out:?}");
    let r = report(&dir.path().join("my report"));
    let command = failures(&r)[0]["first"]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(command.contains("'my report'"), "{command}");
    // Run it as a user would paste it, with this build's jostle first on PATH.
    let bin = jostle().parent().unwrap().to_owned();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .current_dir(dir.path())
        .env("PATH", path)
        .args(["-c", &command])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("reproduced: panic"),
        "{command}\n{text}\n{out:?}"
    );
}

#[test]
fn until_failure_counts_the_runs_to_the_first_bug_whatever_the_workers() {
    let exe = host_exe("rf_fig1");
    let fw = exe.to_str().unwrap();
    let mut counts = Vec::new();
    for j in ["1", "2"] {
        let dir = tempfile::tempdir().unwrap();
        // POS alone: one Phase I run, no candidates, the search until the first failure.
        let out = jostle_in(
            dir.path(),
            &[
                "campaign",
                fw,
                "--host",
                "--until-failure",
                "--budget",
                "1000",
                "-j",
                j,
                "--seed",
                "7",
                "--phase1-runs",
                "1",
                "--max-rounds",
                "0",
                "--search",
                "pos",
            ],
        );
        assert_eq!(out.status.code(), Some(40), "-j {j}: {out:?}");
        let r = report(&dir.path().join("jostle-report"));
        assert_eq!(r["stopped"], "failure", "-j {j}");
        assert_eq!(
            r["runs"]["phase2"], 0,
            "-j {j}: no candidates with --max-rounds 0"
        );
        let first = r["runs"]["first_failure"].as_u64().expect("first_failure");
        let made: u64 = ["phase1", "phase2", "search"]
            .iter()
            .map(|k| r["runs"][k].as_u64().unwrap())
            .sum();
        assert!(first >= 1 && first <= made, "-j {j}: {first} of {made}");
        assert!(made < 1000, "-j {j}: it stopped before the budget");
        counts.push(first);
    }
    assert_eq!(counts[0], counts[1], "the count does not depend on -j");

    // A correct program: the budget ends it, no first failure, and the search ran each of
    // the default portfolio's strategies.
    let dir = tempfile::tempdir().unwrap();
    let exe = host_exe("correct_counter");
    let out = jostle_in(
        dir.path(),
        &[
            "campaign",
            exe.to_str().unwrap(),
            "--host",
            "--until-failure",
            "--budget",
            "400",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let r = report(&dir.path().join("jostle-report"));
    assert_eq!(r["stopped"], "budget");
    assert!(r["runs"]["first_failure"].is_null());
    assert!(
        r["runs"]["search"].as_u64().unwrap() >= 150,
        "{}",
        r["runs"]
    );
}

#[test]
fn a_harmful_candidate_is_tried_before_the_quota_of_the_harmless_ones_queued_before_it() {
    // Races on statistics counters (harmless) come before the deadlock in the queue; Random
    // (Phase I) all but never deadlocks here. Before tiers, each race's 50 runs came first
    // (first failure at run 106 with seed 0); now every candidate's first run comes first,
    // right after Phase I's first run (the rest of Phase I comes after them: 8 -> 4).
    let exe = host_test_exe("benign_races_then_deadlock");
    let dir = tempfile::tempdir().unwrap();
    let out = jostle_in(
        dir.path(),
        &[
            "campaign",
            exe.to_str().unwrap(),
            "--host",
            "--until-failure",
            "--seed",
            "0",
        ],
    );
    assert_eq!(out.status.code(), Some(40), "{out:?}");
    let r = report(&dir.path().join("jostle-report"));
    let phase1 = r["runs"]["phase1"].as_u64().unwrap();
    assert_eq!(
        r["runs"]["phase1_verdicts"]["pass"], phase1,
        "{}",
        r["runs"]
    );
    let candidates = r["bugs"].as_array().unwrap().len() as u64;
    assert!(candidates >= 3, "harmless candidates queued: {}", r["bugs"]);
    let first = r["runs"]["first_failure"].as_u64().expect("a deadlock");
    assert!(
        first <= 1 + candidates,
        "first failure at run {first}: Phase I's first run and each candidate's first run at most"
    );
}

#[test]
fn redundant_write_races_are_tried_after_every_other_candidate() {
    // redundant_writes: the two setters' stores of one value (READY = 1, LEVEL = 3) race, and
    // so do their stores of two values (OWNER) and a read against a store (LEVEL). By id, a
    // redundant race comes second in the queue; with a budget of Phase I's first run and one
    // run for each race that is not redundant, only those are tried.
    let exe = host_test_exe("redundant_writes");
    for seed in 0..3 {
        let (out, dir) = seeded_campaign(
            &exe,
            seed,
            &[
                "--host",
                "--phase1-runs",
                "1",
                "--max-rounds",
                "1",
                "--runs-per-candidate",
                "1",
                "--no-shrink",
                "--budget",
                "3",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "seed {seed}: {out:?}");
        let report_dir = dir.path().join("jostle-report");
        let r = report(&report_dir);
        let prediction: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(report_dir.join("prediction.json")).unwrap(),
        )
        .unwrap();
        let mut redundant = Vec::new();
        let mut others = Vec::new();
        for c in prediction["candidates"].as_array().unwrap() {
            assert_eq!(c["kind"], "race", "{c}");
            let values = &c["evidence"]["written_values"];
            let id = c["id"].as_str().unwrap().to_owned();
            if values.as_array().is_some_and(|v| v.len() == 1) {
                redundant.push((id, values.clone()));
            } else {
                others.push(id);
            }
        }
        let mut values: Vec<String> = redundant.iter().map(|(_, v)| v.to_string()).collect();
        values.sort();
        assert_eq!(
            values,
            ["[1]", "[3]"],
            "seed {seed}: READY's and LEVEL's stores"
        );
        assert_eq!(
            others.len(),
            2,
            "seed {seed}: OWNER's stores and LEVEL's read"
        );
        let runs_of = |id: &str| {
            bugs(&r)
                .iter()
                .find(|b| b["id"] == id)
                .map_or(0, |b| b["runs"].as_u64().unwrap())
        };
        for id in &others {
            assert_eq!(runs_of(id), 1, "seed {seed}: {id} tried");
        }
        for (id, _) in &redundant {
            assert_eq!(runs_of(id), 0, "seed {seed}: redundant {id} tried first");
        }
    }
}

#[test]
fn racefuzzer_tries_the_order_the_predicting_trace_did_not_show_first() {
    // unseen_order: Phase I's first run stores the configuration before the reader reads it
    // (it passes); the race's first RaceFuzzer run sends the read first and fails, for every
    // seed. With the paper's coin from the first run, seeds 0-7 first failed at runs 7, 2,
    // 10, 2, 12, 7, 7 and 9. The same on QEMU for seeds 0-2.
    let host = host_test_exe("unseen_order");
    let qemu = elf("unseen_order");
    let runs = (0..8)
        .map(|seed| (&host, true, seed))
        .chain((0..3).map(|seed| (&qemu, false, seed)));
    for (exe, on_host, seed) in runs {
        let mut args = vec!["--until-failure", "--no-shrink"];
        if on_host {
            args.push("--host");
        }
        let (out, dir) = seeded_campaign(exe, seed, &args);
        assert_eq!(out.status.code(), Some(40), "seed {seed}: {out:?}");
        let r = report(&dir.path().join("jostle-report"));
        assert_eq!(
            r["runs"]["phase1_verdicts"]["pass"], 1,
            "seed {seed}: {}",
            r["runs"]
        );
        assert_eq!(r["runs"]["first_failure"], 2, "seed {seed}: {}", r["runs"]);
        let race = &bugs(&r)[0];
        assert_eq!((&race["kind"], &race["runs"]), (&"race".into(), &1.into()));
        let first = &race["first_harmful"];
        assert_eq!(first["strategy"], "race", "{race}");
        assert_ne!(first["params"][0], 0, "a side was named: {race}");
    }
}

#[test]
fn under_a_budget_search_runs_between_the_candidates_later_runs() {
    // benign_races_then_deadlock's candidates want 200 Phase II runs; a budget of 150 used
    // to go to Phase II alone. Past each candidate's first run, every Phase II job is now
    // followed by as many search runs, so the search has its share before the quotas end;
    // without a budget there is no search, and Phase II makes its whole quota.
    let exe = host_test_exe("benign_races_then_deadlock");
    let runs = |budget: Option<&str>| {
        let mut args = vec![
            "--host",
            "--phase1-runs",
            "1",
            "--max-rounds",
            "1",
            "--no-shrink",
        ];
        if let Some(b) = budget {
            args.extend(["--budget", b]);
        }
        let (out, dir) = seeded_campaign(&exe, 0, &args);
        assert!(matches!(out.status.code(), Some(0 | 40)), "{out:?}");
        let r = report(&dir.path().join("jostle-report"));
        let n = |k: &str| r["runs"][k].as_u64().unwrap();
        let tried = bugs(&r).iter().filter(|b| b["runs"] != 0).count() as u64;
        (n("phase1"), n("phase2"), n("search"), tried)
    };
    let (phase1, phase2, search, tried) = runs(None);
    assert_eq!((phase1, phase2, search), (1, 50 * tried, 0));
    let (phase1, phase2, search, tried) = runs(Some("150"));
    assert_eq!(phase1 + phase2 + search, 150);
    let later = phase2 - tried;
    assert!(
        search > 0 && search <= later,
        "phase2 {phase2} ({later} past the first run of {tried}), search {search}"
    );
}

#[test]
fn a_predicted_block_fails_in_its_first_atomfuzzer_run() {
    // two_stage: Phase I's first run predicts the sampler's block; the candidate's first run
    // pauses it surely (q = 1 in the first tiers) and holds the reporter back until then,
    // so the first failing run is the second or earlier for every seed. With the paper's
    // q = 0.5 throughout, seeds 0-5 took 3, 1, 13, 7, 7 and 6 runs.
    let exe = host_exe("two_stage");
    for seed in 0..6 {
        let (out, dir) = seeded_campaign(
            &exe,
            seed,
            &[
                "--host",
                "--until-failure",
                "--budget",
                "2000",
                "--no-shrink",
            ],
        );
        assert_eq!(out.status.code(), Some(40), "seed {seed}: {out:?}");
        let r = report(&dir.path().join("jostle-report"));
        let first = r["runs"]["first_failure"].as_u64().unwrap();
        assert!(first <= 2, "seed {seed}: first failure at run {first}");
    }
}

#[test]
fn an_interleaver_that_would_come_too_early_is_held_back_until_the_block_pauses() {
    // two_stage with 12 calibration writes first: the reporter takes RAW_LOCK at once, the
    // sampler's two stages come late. Pausing the sampler between its stages waits for
    // nobody unless the reporter is held at that acquire (the candidate's interleaver) until
    // then: without the hold, 1, 0 and 0 of the 50 runs of seeds 0-2 confirmed the block.
    let exe = host_exe("two_stage");
    for seed in 0..2 {
        let (out, dir) = seeded_campaign(&exe, seed, &["--host", "--arg", "0", "--arg", "12"]);
        assert_eq!(out.status.code(), Some(40), "seed {seed}: {out:?}");
        let r = report(&dir.path().join("jostle-report"));
        let atomicity: Vec<&Value> = bugs(&r)
            .iter()
            .filter(|b| b["kind"] == "atomicity")
            .collect();
        assert_eq!(atomicity.len(), 1, "seed {seed}: {r:#}");
        let b = atomicity[0];
        assert_eq!(b["status"], "harmful", "seed {seed}: {b:#}");
        let attempt = &b["attempts"][0];
        assert_eq!(attempt["strategy"], "atom", "seed {seed}: {b:#}");
        let confirmed = attempt["confirmed"].as_u64().unwrap();
        assert!(
            confirmed >= 10,
            "seed {seed}: {confirmed} of 50 runs confirmed"
        );
    }
}

#[test]
fn a_block_taking_two_locks_in_turn_is_predicted_and_atomfuzzer_makes_it_fail() {
    // two_stage: every access locked, no race; the sampler's two stages (RAW_LOCK, then
    // SCALED_LOCK) are the block. Without annotation the Atomizer heuristic pairs the two
    // sections (a common location, written in the first); with `--arg 1` they are an
    // `atomic` block. Either way AtomFuzzer pauses the sampler before its second acquire
    // and the reporter's assertion fails.
    let exe = host_exe("two_stage");
    for (arg, analysis) in [("0", "AtomizerHeuristic"), ("1", "AtomicityPattern")] {
        let dir = tempfile::tempdir().unwrap();
        let out = jostle_in(
            dir.path(),
            &["campaign", exe.to_str().unwrap(), "--host", "--arg", arg],
        );
        assert_eq!(out.status.code(), Some(40), "--arg {arg}: {out:?}");
        let r = report(&dir.path().join("jostle-report"));
        let atomicity: Vec<&Value> = bugs(&r)
            .iter()
            .filter(|b| b["kind"] == "atomicity")
            .collect();
        assert_eq!(atomicity.len(), 1, "--arg {arg}: {r:#}");
        let b = atomicity[0];
        assert_eq!(b["status"], "harmful", "--arg {arg}: {b:#}");
        assert_eq!(b["predicted_by"][0], analysis, "--arg {arg}: {b:#}");
        assert_eq!(b["attempts"][0]["strategy"], "atom", "--arg {arg}: {b:#}");
        let harmful = b["attempts"][0]["harmful"].as_u64().unwrap();
        assert!(harmful >= 5, "--arg {arg}: {harmful} harmful runs of 50");
    }
}

/// A real starvation (issue 35): two workers lose an increment and main spins alone on the
/// count, with nothing able to change it. The run ends at once with the `starvation` verdict
/// (not at the step limit), the campaign fails (exit 40) with the spinning task, its site and
/// what it reads in report.json, report.html and the JUnit file; it is shrunk, and replays.
#[test]
fn a_task_that_spins_on_what_nothing_can_change_is_a_starvation_reported_at_once() {
    let elf = elf("lost_update_spin");
    let (out, dir) = seeded_campaign(&elf, 0, &["-j", "2", "--junit", "junit.xml"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(40), "{stdout}\n{out:?}");
    let report_dir = dir.path().join("jostle-report");
    let r = report(&report_dir);
    let starved: Vec<&Value> = failures(&r)
        .into_iter()
        .filter(|f| f["verdict"] == "starvation")
        .collect();
    assert_eq!(starved.len(), 1, "{r:#}");
    let f = starved[0];
    let spin = format!(
        "tests/firmware/src/bin/lost_update_spin.rs:{}:",
        line_of(
            "tests/firmware/src/bin/lost_update_spin.rs",
            "while DONE.read()"
        )
    );
    assert!(f["site"].as_str().unwrap().starts_with(&spin), "{f:#}");
    let example = f["example"].as_str().unwrap();
    assert!(
        example.contains("task t0 spins reading lost_update_spin::DONE")
            && example.contains("nothing can change it"),
        "{f:#}"
    );
    // No run went to the step limit: the starving ones ended at the starvation bound.
    let suspected: Vec<&Value> = r["failures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == "suspected")
        .collect();
    assert!(suspected.is_empty(), "{suspected:#?}");
    let s = &f["shrunk"];
    assert!(s["replay"].is_object(), "{s:#}");
    assert!(s["steps"].as_u64() <= s["original_steps"].as_u64(), "{s:#}");
    // The JUnit file and the HTML show it.
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains("spins reading lost_update_spin::DONE"),
        "{junit}"
    );
    let html = std::fs::read_to_string(report_dir.join("report.html")).unwrap();
    assert!(
        html.contains("starvation") && html.contains("starved"),
        "{html}"
    );
    // The replay reproduces it, with the starvation's exit code.
    let id = f["id"].as_str().unwrap();
    let out = replay_bug(dir.path(), &elf, id);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("reproduced: starvation {id}")),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(45), "{text}");
}

/// A correct spin-wait ring (issue 35): RaceFuzzer holds one side at its slot access while the
/// other spins for it; the held task is released as soon as the other only spins, so no run
/// waits for the livelock bound and none is reported as a suspected livelock.
#[test]
fn a_spin_wait_the_strategy_starves_is_released_at_once_and_not_reported() {
    let elf = elf("spin_wait_ring");
    let (out, dir) = seeded_campaign(&elf, 0, &["-j", "2"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{out:?}");
    let r = report(&dir.path().join("jostle-report"));
    assert!(
        r["failures"].as_array().unwrap().is_empty(),
        "{:#}",
        r["failures"]
    );
    // Aimed at the race on the slots (the write and the read of RING), RaceFuzzer's runs
    // hold one side at its slot while the other spins for it: the held side is released as
    // soon as the other spins, never by the livelock bound.
    let file = "tests/firmware/src/bin/spin_wait_ring.rs";
    let (write, read) = (
        format!("{file}:{}:", line_of(file, "].write(item)")),
        format!("{file}:{}:", line_of(file, "assert_eq!(RING[")),
    );
    let race = bugs(&r)
        .iter()
        .find(|b| b["kind"] == "race" && has_site(b, &write) && has_site(b, &read))
        .unwrap_or_else(|| panic!("the race on the slots is predicted: {r:#}"));
    assert_eq!(race["status"], "unconfirmed", "{race:#}");
    let id = race["id"].as_str().unwrap();
    let prediction = dir.path().join("jostle-report").join("prediction.json");
    let mut released = 0;
    for seed in 0..8 {
        let out = jostle_in(
            dir.path(),
            &[
                "run",
                elf.to_str().unwrap(),
                "--strategy",
                "race",
                "--target",
                id,
                "--prediction",
                prediction.to_str().unwrap(),
                "--seed",
                &seed.to_string(),
            ],
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{text}");
        assert!(!text.contains("livelock-release"), "{text}");
        released += usize::from(text.contains("spin-release"));
    }
    assert!(released > 0, "no run held a side back");
}
