//! Applications that own their own ends, as RTIC and Embassy apps do (`tests/apps/app-endings`:
//! its own memory layout and panic handler, the QEMU board without its memory.x and panic
//! handler): the first block of each boot comes over standard input, frames go to their own
//! channel so that the app's printing does not corrupt them, and a run the app ends through
//! semihosting or its own panic handler has a verdict: a pass, `app_failure`, or a panic at
//! the app's line with its message — a finding in a campaign, replayable.

use crate::common;

use common::*;

fn app() -> std::path::PathBuf {
    test_app("app-endings")
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn each_way_the_app_ends_a_run_is_its_verdict_with_its_own_output_beside_the_frames() {
    let fw = app();
    let fw = fw.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let panic_line = line_of("tests/apps/app-endings/src/app.rs", "panic!(");
    for (arg, code, verdict) in [
        ("0", 0, "verdict: pass after 7 steps"),
        ("1", 0, "verdict: pass after 7 steps"),
        (
            "2",
            46,
            "verdict: app_failure after 7 steps (seed 0): the application exited reporting failure (exit code 1)",
        ),
        (
            "3",
            11,
            "verdict: panic after 8 steps (seed 0): task t0 panicked at src/app.rs:",
        ),
    ] {
        let out = jostle_in(dir.path(), &["run", fw, "--arg", arg]);
        let shown = stdout(&out);
        assert_eq!(out.status.code(), Some(code), "--arg {arg}: {}", text(&out));
        assert!(shown.contains(verdict), "--arg {arg}: {shown}");
        // The app's own line, printed on QEMU's stdout, and the frames around it, whole.
        assert!(
            shown.contains("app: the app says: count = 2"),
            "--arg {arg}: {shown}"
        );
        assert!(
            shown.contains("update app_endings::COUNT"),
            "--arg {arg}: {shown}"
        );
    }
    let out = jostle_in(dir.path(), &["run", fw, "--arg", "3"]);
    assert!(
        stdout(&out).contains(&format!(
            "panicked at src/app.rs:{panic_line}:14: the app gave up at count 2"
        )),
        "{}",
        text(&out)
    );
}

#[test]
fn every_boot_takes_its_first_block_over_standard_input_served_or_not() {
    let fw = app();
    let fw = fw.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for serve in ["1", "0"] {
        let out = std::process::Command::new(jostle())
            .current_dir(dir.path())
            .env("JOSTLE_SERVE", serve)
            .args(["run", fw, "--runs", "4", "--seed", "7"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "serve {serve}: {}", text(&out));
        let shown = stdout(&out);
        for seed in 7..11 {
            assert!(
                shown.contains(&format!(
                    "seed {seed}: verdict: pass after 7 steps (seed {seed})"
                )),
                "serve {serve}, seed {seed}: {shown}"
            );
        }
    }
}

#[test]
fn a_campaign_finds_the_apps_failure_and_panic_and_replays_them() {
    let fw = app();
    let fw_text = fw.to_str().unwrap();
    for (arg, kind, says) in [
        (
            "2",
            "app_failure",
            "the application exited reporting failure",
        ),
        ("3", "panic", "the app gave up at count 2"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        // Every run of these ends its QEMU (the app's exit): few per candidate suffice.
        let out = jostle_in(
            dir.path(),
            &[
                "campaign",
                fw_text,
                "--arg",
                arg,
                "--runs-per-candidate",
                "4",
            ],
        );
        assert_eq!(out.status.code(), Some(40), "--arg {arg}: {}", text(&out));
        let r = report(&dir.path().join("jostle-report"));
        let found = failures(&r);
        assert_eq!(found.len(), 1, "--arg {arg}: {r:#}");
        assert_eq!(found[0]["verdict"], kind, "--arg {arg}: {r:#}");
        let id = found[0]["id"].as_str().unwrap();
        let replay = replay_bug(dir.path(), &fw, id);
        let shown = stdout(&replay);
        assert!(
            shown.contains(&format!("reproduced: {kind} {id}")) && shown.contains(says),
            "--arg {arg}: {}",
            text(&replay)
        );
    }
    // An app that exits reporting success passes.
    let dir = tempfile::tempdir().unwrap();
    let out = jostle_in(
        dir.path(),
        &[
            "campaign",
            fw_text,
            "--arg",
            "1",
            "--runs-per-candidate",
            "4",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// An app whose panic handler spins in silence (panic-halt, not patched): the run goes quiet
/// until the silence limit, and QEMU, asked where its CPU is before it is killed, says the
/// panic handler: a panic, never a suspected timeout that a campaign would pass.
#[test]
fn an_app_that_halts_in_its_panic_handler_panicked_and_its_campaign_fails() {
    let fw = test_app_bin("app-endings", "app-halts");
    let fw_text = fw.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Three seconds of silence: the other tests of this binary run campaigns beside it, and
    // a QEMU starved of CPU may not have reached the panic within one (seen in a fresh
    // clone's first run: "timeout after 0 steps").
    let out = jostle_in(
        dir.path(),
        &["run", fw_text, "--arg", "3", "--timeout", "3"],
    );
    let shown = stdout(&out);
    assert_eq!(out.status.code(), Some(11), "{}", text(&out));
    assert!(
        shown.contains("verdict: panic") && shown.contains("panic handler spins silently"),
        "{shown}"
    );
    // The same app that does not panic passes; one that exits reporting failure fails.
    for (arg, code) in [("1", 0), ("2", 46)] {
        let out = jostle_in(dir.path(), &["run", fw_text, "--arg", arg]);
        assert_eq!(out.status.code(), Some(code), "--arg {arg}: {}", text(&out));
    }
    let out = jostle_in(
        dir.path(),
        &[
            "campaign",
            fw_text,
            "--arg",
            "3",
            "--timeout",
            "3",
            "--phase1-runs",
            "2",
            "--runs-per-candidate",
            "1",
            "--no-shrink",
        ],
    );
    assert_eq!(out.status.code(), Some(40), "{}", text(&out));
    let r = report(&dir.path().join("jostle-report"));
    let found = failures(&r);
    assert_eq!(found.len(), 1, "{r:#}");
    assert_eq!(found[0]["verdict"], "panic", "{r:#}");
}
