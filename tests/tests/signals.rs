//! Signals and `jostle campaign`: SIGTERM and SIGHUP stop it like Ctrl-C (exit 130, a report
//! of what finished), a second Ctrl-C quits at once, runs in flight are killed rather than
//! waited for, and no QEMU outlives the tool, however it ends; the runs' temporary files go
//! with it.
#![cfg(target_os = "linux")]

use crate::common;

use common::*;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A campaign in `dir` on `fw` (run indefinitely long), its temporary files in `tmp`.
fn campaign(dir: &Path, tmp: &Path, fw: &Path, extra: &[&str]) -> Child {
    Command::new(jostle())
        .current_dir(dir)
        .env("TMPDIR", tmp)
        .arg("campaign")
        .arg(fw)
        .args(["-j", "2", "--runs-per-candidate", "100000"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn sigterm_and_sighup_stop_a_campaign_like_ctrl_c() {
    for sig in ["TERM", "HUP"] {
        let dir = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let fw = own_copy(dir.path(), "rf_fig2");
        let mut child = campaign(dir.path(), tmp.path(), &fw, &[]);
        let report = dir.path().join("jostle-report").join("report.json");
        // Phase II under way: Phase I's report is written and QEMUs are running.
        wait_until("Phase I's report", Duration::from_secs(120), || {
            report.exists()
        });
        wait_until("a QEMU of Phase II", Duration::from_secs(60), || {
            !processes_of(&fw).is_empty()
        });
        signal(&child, sig);
        let code = exit_code_within(&mut child, Duration::from_secs(60));
        assert_eq!(code, Some(130), "SIG{sig}: {}", stderr_of(&mut child));
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(r["stopped"], "interrupted", "SIG{sig}");
        assert_clean(&fw, tmp.path());
    }
}

/// The first Ctrl-C kills the runs in flight instead of waiting for them: a run that never
/// ends (here for a minute) does not hold the campaign up.
#[test]
fn ctrl_c_kills_the_runs_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let fw = own_copy(dir.path(), "never_ends");
    let mut child = campaign(
        dir.path(),
        tmp.path(),
        &fw,
        &["--phase1-runs", "2", "--timeout", "60"],
    );
    wait_until("QEMU running", Duration::from_secs(60), || {
        !processes_of(&fw).is_empty()
    });
    std::thread::sleep(Duration::from_millis(300));
    let stopped = Instant::now();
    signal(&child, "INT");
    let code = exit_code_within(&mut child, Duration::from_secs(120));
    assert_eq!(code, Some(130), "{}", stderr_of(&mut child));
    assert!(
        stopped.elapsed() < Duration::from_secs(20),
        "{:?}",
        stopped.elapsed()
    );
    let report = dir.path().join("jostle-report").join("report.json");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    assert_eq!(r["stopped"], "interrupted");
    assert_clean(&fw, tmp.path());
}

/// A second Ctrl-C quits at once (exit 130), whatever the first one waits for: here the
/// report's write, which blocks on a FIFO that nobody reads.
#[test]
fn a_second_ctrl_c_quits_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let fw = own_copy(dir.path(), "rf_fig2");
    let reports = dir.path().join("jostle-report");
    std::fs::create_dir(&reports).unwrap();
    let fifo = reports.join("report.json.tmp");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let mut child = campaign(dir.path(), tmp.path(), &fw, &["--phase1-runs", "1"]);
    // Phase I done, its report's write blocked.
    std::thread::sleep(Duration::from_secs(5));
    assert!(child.try_wait().unwrap().is_none(), "the campaign ended");
    signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(1000));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the write is blocked: the first Ctrl-C cannot end the campaign"
    );
    signal(&child, "INT");
    let code = exit_code_within(&mut child, Duration::from_secs(30));
    let err = stderr_of(&mut child);
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("stopped at once"), "{err}");
    assert!(
        !reports.join("report.lock").exists(),
        "the report directory's lock is removed"
    );
    assert_clean(&fw, tmp.path());
}

/// However `jostle` ends (here SIGKILL, which no handler sees), its QEMUs end with it:
/// they run in process groups of their own, out of reach of the terminal's signals.
#[test]
fn no_qemu_outlives_a_killed_jostle() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let fw = own_copy(dir.path(), "never_ends");
    let mut child = campaign(dir.path(), tmp.path(), &fw, &["--timeout", "60"]);
    wait_until("QEMU running", Duration::from_secs(60), || {
        !processes_of(&fw).is_empty()
    });
    signal(&child, "KILL");
    assert_eq!(exit_code_within(&mut child, Duration::from_secs(10)), None);
    wait_until("QEMU killed with jostle", Duration::from_secs(5), || {
        processes_of(&fw).is_empty()
    });
}
