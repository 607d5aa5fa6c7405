//! Lock-free code and third-party crates (`examples/crates`, a project of its own with the
//! portable-atomic shim patched in, and `cs_refcell`): a check-then-act on atomics and an
//! index published before its slot are predicted, confirmed and replayed; heapless's spsc
//! queue is scheduled at each of its atomic operations and a long campaign finds nothing
//! wrong with it; a
//! check-then-act through `critical_section::Mutex<RefCell<_>>` or embassy-sync's blocking
//! mutex is found and replays; QEMU and the host port make the same decisions.

use crate::common;

use common::*;
use jostle_kernel::{Config, TraceLevel};

fn full(seed: u64) -> Config {
    Config {
        seed,
        trace: TraceLevel::Full,
        ..Config::default()
    }
}

#[test]
fn heapless_spsc_is_scheduled_at_its_atomics_and_ten_thousand_runs_find_nothing() {
    for host in [false, true] {
        let fw = crate_example("heapless_spsc", host);
        let fw = fw.to_str().unwrap();
        let what = format!("heapless_spsc (host port: {host})");
        // The instrumentation is active: the queue's own loads and stores, inside heapless's
        // source, are steps of the interleaving.
        let dir = tempfile::tempdir().unwrap();
        let out = jostle_on(dir.path(), host, &["run", fw, "--seed", "1"]);
        let shown = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out));
        for op in ["atomic-load", "atomic-store"] {
            assert!(
                shown
                    .lines()
                    .any(|l| l.contains(op) && l.contains("heapless-0.8.0/src/spsc.rs")),
                "{what}: no {op} in heapless's spsc.rs: {shown}"
            );
        }
        // The queue is correct: 10,000 runs (candidates, then search) and no failure.
        let out = jostle_on(
            dir.path(),
            host,
            &["campaign", fw, "--budget", "10000", "-j", "2"],
        );
        assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out));
        let r = report(&dir.path().join("jostle-report"));
        let runs = &r["runs"];
        let total: u64 = ["phase1", "phase2", "search"]
            .iter()
            .map(|k| runs[k].as_u64().unwrap())
            .sum();
        assert_eq!(total, 10_000, "{what}: {runs}");
        assert!(runs["search"].as_u64().unwrap() > 9_000, "{what}: {runs}");
        assert!(failures(&r).is_empty(), "{what}: {r:#}");
        assert_eq!(r["stopped"], "budget", "{what}");
    }
}

#[test]
fn check_then_act_through_critical_section_and_embassy_sync_is_found_and_replays() {
    for host in [false, true] {
        for (fw, source) in [
            (
                if host {
                    host_exe("cs_refcell")
                } else {
                    elf("cs_refcell")
                },
                "examples/src/bin/cs_refcell.rs",
            ),
            (
                crate_example("embassy_blocking_mutex", host),
                "src/bin/embassy_blocking_mutex.rs",
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let fw = fw.to_str().unwrap();
            let what = format!("{fw} (host port: {host})");
            let out = jostle_on(dir.path(), host, &["campaign", fw, "-j", "2"]);
            assert_eq!(out.status.code(), Some(40), "{what}: {}", text(&out));
            if host {
                // Their balance is a static Jostle does not reset: the host port noticed and
                // made one process per run, as a device resets for each.
                assert!(
                    String::from_utf8_lossy(&out.stderr).contains("one process per run"),
                    "{what}: {}",
                    text(&out)
                );
            }
            let r = report(&dir.path().join("jostle-report"));
            let found = failures(&r);
            assert_eq!(found.len(), 1, "{what}: {r:#}");
            let f = found[0];
            assert_eq!(f["verdict"], "panic", "{what}");
            assert!(
                f["example"].as_str().unwrap().starts_with("overdrawn"),
                "{what}: {f}"
            );
            assert!(f["site"].as_str().unwrap().contains(source), "{what}: {f}");
            let id = f["id"].as_str().unwrap();
            let out = jostle_on(
                dir.path(),
                host,
                &["replay", fw, "--report", "jostle-report", "--bug", id],
            );
            assert!(
                String::from_utf8_lossy(&out.stdout).contains(&format!("reproduced: panic {id}")),
                "{what}: {}",
                text(&out)
            );
        }
    }
}

#[test]
fn crates_make_the_same_decisions_on_qemu_and_the_host_port() {
    for (elf_path, exe) in [
        (
            crate_example("heapless_spsc", false),
            crate_example("heapless_spsc", true),
        ),
        (
            crate_example("embassy_blocking_mutex", false),
            crate_example("embassy_blocking_mutex", true),
        ),
        (elf("cs_refcell"), host_exe("cs_refcell")),
    ] {
        let fw = jostle_host_tools::trace::elf::Firmware::load(&elf_path).expect("firmware");
        for seed in 0..8 {
            let q = run_qemu(&fw, full(seed));
            let h = run_host_exe(&exe, full(seed));
            assert_same_decisions(&q, &h, &format!("{} seed {seed}", exe.display()));
        }
    }
}

#[test]
fn lock_free_bugs_are_predicted_confirmed_and_replayed_on_both_ports() {
    // (example, the kind of candidate that must be confirmed and harmful, the failure's words)
    let cases = [
        (
            "atomic_check_then_act",
            "access_atomicity",
            "two tasks claimed the same slot",
        ),
        (
            "spsc_publish_order",
            "race",
            "consumed a slot before it was written",
        ),
    ];
    for host in [false, true] {
        for (example, kind, words) in cases {
            let dir = tempfile::tempdir().unwrap();
            let fw = if host {
                host_exe(example)
            } else {
                elf(example)
            };
            let fw = fw.to_str().unwrap();
            let what = format!("{example} (host port: {host})");
            let out = jostle_on(dir.path(), host, &["campaign", fw, "-j", "2"]);
            assert_eq!(out.status.code(), Some(40), "{what}: {}", text(&out));
            let r = report(&dir.path().join("jostle-report"));
            let bug = bugs(&r)
                .iter()
                .find(|b| b["kind"] == kind && b["harmful"].as_u64().unwrap() > 0)
                .unwrap_or_else(|| panic!("{what}: no harmful {kind}: {r:#}"));
            let f = failures(&r);
            assert_eq!(f.len(), 1, "{what}: {r:#}");
            assert!(
                f[0]["example"].as_str().unwrap().contains(words),
                "{what}: {}",
                f[0]
            );
            // The failure follows the confirmation: the predicted bug made it happen.
            assert!(
                f[0]["after_confirming"]
                    .as_object()
                    .unwrap()
                    .contains_key(bug["id"].as_str().unwrap()),
                "{what}: {}",
                f[0]
            );
            for (kind, id) in [
                (kind, bug["id"].as_str().unwrap()),
                ("panic", f[0]["id"].as_str().unwrap()),
            ] {
                let out = jostle_on(
                    dir.path(),
                    host,
                    &["replay", fw, "--report", "jostle-report", "--bug", id],
                );
                assert!(
                    String::from_utf8_lossy(&out.stdout)
                        .contains(&format!("reproduced: {kind} {id}")),
                    "{what} {id}: {}",
                    text(&out)
                );
            }
        }
    }
}
