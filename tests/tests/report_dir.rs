//! One writer per report directory: a second campaign into a directory in use is refused
//! (exit 43) while a lock left by a dead process is taken over, and `jostle merge` never
//! writes its merge over one of its inputs.

use crate::common;

use common::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn one_line(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    assert_eq!(text.lines().count(), 1, "one line expected: {text}");
    text
}

/// A short campaign of `bin` into `dir/report`.
fn small_campaign(dir: &Path, bin: &str, report: &str) -> Output {
    let fw = elf(bin);
    jostle_in(
        dir,
        &[
            "campaign",
            fw.to_str().unwrap(),
            "--phase1-runs",
            "2",
            "--runs-per-candidate",
            "2",
            "--max-rounds",
            "1",
            "-j",
            "1",
            "--out",
            report,
        ],
    )
}

#[cfg(unix)]
#[test]
fn a_second_campaign_into_a_report_directory_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fw = elf("rf_fig2");
    let mut first = Command::new(jostle())
        .current_dir(dir.path())
        .args(["campaign", fw.to_str().unwrap(), "-j", "1"])
        .args(["--runs-per-candidate", "100000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = dir.path().join("jostle-report").join("report.lock");
    let started = Instant::now();
    while !lock.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "no lock taken");
        std::thread::sleep(Duration::from_millis(50));
    }
    let holder = std::fs::read_to_string(&lock).unwrap();
    assert_eq!(holder.trim(), first.id().to_string());

    let second = small_campaign(dir.path(), "rf_fig2", "jostle-report");
    let err = one_line(&second);
    assert_eq!(second.status.code(), Some(43), "{err}");
    assert!(err.contains("in use by another jostle"), "{err}");
    assert!(err.contains(&format!("pid {}", first.id())), "{err}");
    // Nor may a merge write there meanwhile.
    let merge = jostle_in(
        dir.path(),
        &["merge", "elsewhere", "--out", "jostle-report"],
    );
    assert_eq!(merge.status.code(), Some(43), "{}", one_line(&merge));

    let status = Command::new("kill")
        .args(["-INT", &first.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(first.wait().unwrap().code(), Some(130));
    assert!(!lock.exists(), "the lock is removed when the campaign ends");

    // A lock whose holder died without removing it is taken over.
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    std::fs::write(&lock, format!("{pid}\n")).unwrap();
    let again = small_campaign(dir.path(), "rf_fig2", "jostle-report");
    assert!(
        matches!(again.status.code(), Some(0 | 40)),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(!lock.exists());
}

#[test]
fn merge_refuses_to_write_over_one_of_its_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = small_campaign(dir.path(), "rf_fig2", "shard");
    assert!(
        matches!(out.status.code(), Some(0 | 40)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = dir.path().join("shard").join("report.json");
    let before = std::fs::read(&report).unwrap();
    for (input, output) in [
        ("shard", "shard"),
        ("shard/report.json", "shard"),
        ("shard", "./shard/"),
        ("./shard/report.json", "shard/../shard"),
    ] {
        let out = jostle_in(dir.path(), &["merge", input, "--out", output]);
        let err = one_line(&out);
        assert_eq!(
            out.status.code(),
            Some(2),
            "merge {input} --out {output}: {err}"
        );
        assert!(err.contains("is one of the reports being merged"), "{err}");
        assert_eq!(
            std::fs::read(&report).unwrap(),
            before,
            "the input was overwritten"
        );
    }
    let out = jostle_in(dir.path(), &["merge", "shard", "--out", "merged"]);
    assert!(
        matches!(out.status.code(), Some(0 | 40)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("merged").join("report.json").exists());
}
