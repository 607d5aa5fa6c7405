//! Faults and inputs that used to crash, hang or lose results (issue 36): counts of any size
//! plan nothing ahead and a budget or a signal ends them; what finished is printed or kept
//! when a signal stops `run`, `predict` or `confirm`, and their temporary files go; a QEMU
//! that dies in a run has the run made again, whatever its stream showed; a full disk gets
//! no "report in" and keeps no half-written file; a path a replay command cannot carry is
//! refused; `-j` past the cores is capped, and says so.
//!
//! `JOSTLE_BIN=path cargo test -p jostle-tests --test e2e reliability::` runs them against another
//! build of `jostle` (the one before the fixes fails each).
#![cfg(target_os = "linux")]

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// Most address space `jostle` may take in these tests (QEMU needs about 1.2 GiB of its
/// own): a count that reserves memory ahead fails at once instead of eating the machine.
const ADDRESS_SPACE_KIB: u64 = 3_000_000;

/// `jostle args` in `dir`, its temporary files in `tmp`, its address space bounded, its
/// stdout into `dir/stdout` (read while it runs) and its stderr piped.
fn spawn_bounded(dir: &Path, tmp: &Path, args: &[&std::ffi::OsStr]) -> Child {
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {ADDRESS_SPACE_KIB}; exec \"$0\" \"$@\" > stdout"
        ))
        .arg(jostle())
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// As [`spawn_bounded`], waited for.
fn bounded(dir: &Path, tmp: &Path, args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let mut child = spawn_bounded(dir, tmp, args);
    let code = exit_code_within(&mut child, Duration::from_secs(300));
    (code, stderr_of(&mut child))
}

fn os(words: &[&str]) -> Vec<std::ffi::OsString> {
    words.iter().map(Into::into).collect()
}

fn args_of(words: &[std::ffi::OsString]) -> Vec<&std::ffi::OsStr> {
    words.iter().map(|w| w.as_os_str()).collect()
}

/// The lines `jostle` has printed on stdout so far (see [`spawn_bounded`]).
fn stdout_lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("stdout"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Waits until `child` has printed `n` lines, failing at once if it exits first.
fn wait_for_lines(child: &mut Child, dir: &Path, n: usize) {
    wait_until("runs printed", Duration::from_secs(120), || {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "jostle exited ({status}) after {} lines: {}",
                stdout_lines(dir).len(),
                stderr_of(child)
            );
        }
        stdout_lines(dir).len() >= n
    });
}

/// Runs made by a report: Phase I, Phase II and search.
fn runs_made(r: &serde_json::Value) -> u64 {
    ["phase1", "phase2", "search"]
        .iter()
        .map(|k| r["runs"][k].as_u64().unwrap())
        .sum()
}

#[test]
fn run_runs_of_any_count_print_each_run_as_it_ends_and_a_signal_keeps_them() {
    for (runs, sig, json) in [("4294967295", "INT", false), ("100000", "TERM", true)] {
        let dir = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let fw = own_copy(dir.path(), "rf_fig2");
        let mut words = vec!["run".into(), fw.clone().into_os_string()];
        words.extend(os(&["--runs", runs]));
        if json {
            words.push("--json".into());
        }
        let mut child = spawn_bounded(dir.path(), tmp.path(), &args_of(&words));
        // Lines come as runs end, long before the last.
        wait_for_lines(&mut child, dir.path(), 20);
        signal(&child, sig);
        let code = exit_code_within(&mut child, Duration::from_secs(60));
        let err = stderr_of(&mut child);
        assert_eq!(code, Some(130), "--runs {runs}, SIG{sig}: {err}");
        let lines = stdout_lines(dir.path());
        assert!(lines.len() >= 20, "{lines:?}");
        for (k, line) in lines.iter().enumerate() {
            if json {
                let v: serde_json::Value = serde_json::from_str(line).expect("a JSON summary");
                assert_eq!(v["seed"], k as u64, "{line}");
            } else {
                assert!(line.starts_with(&format!("seed {k}: verdict: ")), "{line}");
            }
        }
        assert!(
            err.contains(&format!(
                "stopped by a signal: {} of {runs} runs made",
                lines.len()
            )),
            "{err}"
        );
        assert_clean(&fw, tmp.path());
    }
}

#[test]
fn predict_and_confirm_stopped_by_a_signal_keep_what_finished_and_leave_no_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let fw = own_copy(dir.path(), "rf_fig2");
    let prediction = dir.path().join("prediction.json");
    let words = [
        "predict".into(),
        fw.clone().into_os_string(),
        "--runs".into(),
        "100000".into(),
        "--out".into(),
        prediction.clone().into_os_string(),
    ];
    let mut child = spawn_bounded(dir.path(), tmp.path(), &args_of(&words));
    wait_until("the first prediction", Duration::from_secs(120), || {
        prediction.exists()
    });
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, "TERM");
    let code = exit_code_within(&mut child, Duration::from_secs(60));
    let err = stderr_of(&mut child);
    assert_eq!(code, Some(130), "predict: {err}");
    assert!(err.contains("stopped by a signal"), "{err}");
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&prediction).unwrap()).unwrap();
    assert!(!p["candidates"].as_array().unwrap().is_empty(), "{p}");
    assert_clean(&fw, tmp.path());

    let words = [
        "confirm".into(),
        fw.clone().into_os_string(),
        "--runs".into(),
        "100000".into(),
        "--strategy".into(),
        "random".into(),
    ];
    let mut child = spawn_bounded(dir.path(), tmp.path(), &args_of(&words));
    wait_until("confirm's QEMU", Duration::from_secs(120), || {
        !processes_of(&fw).is_empty()
    });
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, "INT");
    let code = exit_code_within(&mut child, Duration::from_secs(60));
    let err = stderr_of(&mut child);
    assert_eq!(code, Some(130), "confirm: {err}");
    let rows = stdout_lines(dir.path()).join("\n");
    assert!(rows.contains("(stopped by a signal)"), "{rows}");
    assert!(rows.contains("runs "), "{rows}");
    assert_clean(&fw, tmp.path());
}

#[test]
fn campaign_counts_of_any_size_plan_nothing_ahead_and_a_budget_or_a_signal_ends_them() {
    let big = u32::MAX.to_string();
    for count in ["--phase1-runs", "--runs-per-candidate"] {
        let dir = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let fw = own_copy(dir.path(), "rf_fig2");
        let mut words = vec!["campaign".into(), fw.clone().into_os_string()];
        words.extend(os(&[count, &big, "--budget", "200", "-j", "2"]));
        let (code, err) = bounded(dir.path(), tmp.path(), &args_of(&words));
        assert_eq!(code, Some(40), "{count} {big}: {err}");
        let r = report(&dir.path().join("jostle-report"));
        assert_eq!(runs_made(&r), 200, "{r:#}");
        assert_eq!(r["stopped"], "budget");
        assert!(!dir.path().join("jostle-report/report.lock").exists());
        assert_clean(&fw, tmp.path());
    }
    // No budget: Ctrl-C ends it.
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let fw = own_copy(dir.path(), "rf_fig2");
    let mut words = vec!["campaign".into(), fw.clone().into_os_string()];
    words.extend(os(&["--runs-per-candidate", &big, "-j", "1"]));
    let mut child = spawn_bounded(dir.path(), tmp.path(), &args_of(&words));
    let reports = dir.path().join("jostle-report");
    wait_until("Phase I's report", Duration::from_secs(120), || {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("jostle exited ({status}): {}", stderr_of(&mut child));
        }
        reports.join("report.json").exists()
    });
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, "INT");
    let code = exit_code_within(&mut child, Duration::from_secs(60));
    assert_eq!(code, Some(130), "{}", stderr_of(&mut child));
    assert_eq!(report(&reports)["stopped"], "interrupted");
    assert!(!reports.join("report.lock").exists());
    assert_clean(&fw, tmp.path());
}

/// The bytes of `rf_fig1`'s first served run under `jostle run ELF --seed 0`, through the
/// end of its `RunEnd` frame, recorded by a QEMU that copies its frame channel (fd 3). The
/// copier (`tee`) runs in a session of its own and goes on past a closed pipe: jostle kills
/// QEMU's process group once it has the run, and `tee` writes fd 3 before the file, so a
/// `tee` in that group could die before the file had the bytes (seen once in a fresh
/// clone's first run); the file is read once it holds the run's end.
fn recorded_run(dir: &Path, fw: &Path) -> Vec<u8> {
    let rec = dir.join("recorded.bin");
    let recorder = fake_qemu(
        dir,
        "qemu-records",
        &format!(
            "{{ qemu-system-arm \"$@\" 3>&1 1>&4 | setsid tee -p '{}' >&3; }} 4>&1",
            rec.display()
        ),
    );
    let out = Command::new(jostle())
        .args(
            [fw.as_os_str(), "--seed".as_ref(), "0".as_ref()]
                .iter()
                .fold(vec![std::ffi::OsString::from("run")], |mut v, a| {
                    v.push(a.into());
                    v
                }),
        )
        .env("JOSTLE_QEMU", &recorder)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(11), "{}", text(&out));
    let table = jostle_host_tools::trace::elf::Firmware::load(fw)
        .unwrap()
        .table;
    let waited = std::time::Instant::now();
    loop {
        let bytes = std::fs::read(&rec).unwrap_or_default();
        let mut ends = jostle_host_tools::trace::decode::RunStarts::ends(&table).unwrap();
        if let Some(&end) = ends.scan(&bytes).first() {
            return bytes[..end].to_vec();
        }
        assert!(
            waited.elapsed() < Duration::from_secs(10),
            "the recording holds no run's end ({} bytes)",
            bytes.len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A QEMU whose first boot writes `bytes` and dies of SIGKILL (as the OOM killer kills);
/// later boots are the real QEMU's (`always`: every boot dies so).
fn qemu_dying_after(dir: &Path, name: &str, bytes: &[u8], always: bool) -> PathBuf {
    let part = dir.join(format!("{name}.bin"));
    std::fs::write(&part, bytes).unwrap();
    let count = dir.join(format!("{name}.count"));
    let once = if always {
        String::new()
    } else {
        format!(
            "if [ -e '{c}' ]; then exec qemu-system-arm \"$@\"; fi\ntouch '{c}'\n",
            c = count.display()
        )
    };
    fake_qemu(
        dir,
        name,
        &format!("{once}cat '{}' >&3\nkill -9 $$", part.display()),
    )
}

fn jostle_with_qemu(dir: &Path, qemu: &Path, args: &[&std::ffi::OsStr]) -> Output {
    Command::new(jostle())
        .current_dir(dir)
        .args(args)
        .env("JOSTLE_QEMU", qemu)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_qemu_that_dies_in_a_run_has_the_run_made_again_whatever_its_stream_showed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fw = elf("rf_fig1");
    let run = recorded_run(d, &fw);
    let args = [fw.as_os_str(), "--seed".as_ref(), "0".as_ref()];
    let run_args: Vec<&std::ffi::OsStr> = std::iter::once("run".as_ref()).chain(args).collect();
    let reference = Command::new(jostle()).args(&run_args).output().unwrap();
    assert_eq!(reference.status.code(), Some(11), "{}", text(&reference));
    // Dead before any output, in the middle of a frame, and after the whole run (the
    // verdict there, the exit code it needs not).
    for (name, bytes) in [
        ("at-once", &run[..0]),
        ("mid-run", &run[..run.len() / 2]),
        ("after-the-run", &run[..]),
    ] {
        let qemu = qemu_dying_after(d, name, bytes, false);
        let out = jostle_with_qemu(d, &qemu, &run_args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(11), "QEMU dies {name}: {err}");
        assert_eq!(out.stdout, reference.stdout, "QEMU dies {name}");
        assert!(
            err.contains("making it again in a new boot"),
            "{name}: {err}"
        );
    }
    // A QEMU that dies in every boot is an error of its own, after a few boots; the
    // campaign's report says it stopped on an error, not on its budget.
    let qemu = qemu_dying_after(d, "always", &run, true);
    let campaign: Vec<&std::ffi::OsStr> = ["campaign".as_ref(), fw.as_os_str()]
        .into_iter()
        .chain(["--budget", "1", "--out", "dying"].map(AsRef::as_ref))
        .collect();
    let out = jostle_with_qemu(d, &qemu, &campaign);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(27), "{err}");
    assert!(err.contains("boots in a row"), "{err}");
    assert_eq!(report(&d.join("dying"))["stopped"], "error");
}

#[test]
fn a_report_that_cannot_be_written_is_not_claimed_and_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fw = elf("rf_fig2");
    // Files past 1 KiB cannot be written (as on a full disk: EFBIG instead of ENOSPC).
    let full = |args: &[&str]| {
        Command::new("sh")
            .arg("-c")
            .arg("trap '' XFSZ; ulimit -f 2; exec \"$0\" \"$@\"")
            .arg(jostle())
            .args(args)
            .current_dir(d)
            .output()
            .unwrap()
    };
    let fw = fw.to_str().unwrap();
    let out = full(&["campaign", fw, "--out", "reports"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(26), "{err}");
    assert!(!err.contains("report in"), "{err}");
    let out = full(&["predict", fw, "--runs", "5", "--out", "predicted/p.json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(26), "{err}");
    // Nothing half-written, no lock.
    for sub in ["reports", "predicted"] {
        let left: Vec<String> = std::fs::read_dir(d.join(sub))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            left.iter()
                .all(|f| !f.ends_with(".tmp") && !f.ends_with(".partial") && f != "report.lock"),
            "{sub}: {left:?}"
        );
    }
}

#[test]
fn paths_a_replay_command_cannot_name_are_refused_before_anything_runs() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let not_utf8 = std::ffi::OsStr::from_bytes(b"fw-\xff");
    let fw = d.join(not_utf8);
    std::fs::copy(elf("rf_fig2"), &fw).unwrap();
    let good = elf("rf_fig2");
    for (what, args) in [
        (
            "a firmware path",
            vec![
                "campaign".as_ref(),
                fw.as_os_str(),
                "--out".as_ref(),
                "r1".as_ref(),
            ],
        ),
        (
            "a report directory",
            vec![
                "campaign".as_ref(),
                good.as_os_str(),
                "--out".as_ref(),
                std::ffi::OsStr::from_bytes(b"r-\xff"),
            ],
        ),
        (
            "a merge's report directory",
            vec![
                "merge".as_ref(),
                "r1".as_ref(),
                "--out".as_ref(),
                std::ffi::OsStr::from_bytes(b"m-\xff"),
            ],
        ),
    ] {
        let out = Command::new(jostle())
            .current_dir(d)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{what}: {err}");
        assert!(err.contains("not UTF-8"), "{what}: {err}");
    }
    // Nothing was made.
    let made: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.as_os_str() != not_utf8)
        .collect();
    assert!(made.is_empty(), "{made:?}");
}

#[test]
fn workers_past_a_few_per_core_are_capped_and_the_cap_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let count = d.join("boots");
    let counting = fake_qemu(
        d,
        "qemu-counts",
        &format!(
            "echo boot >> '{}'\nexec qemu-system-arm \"$@\"",
            count.display()
        ),
    );
    let fw = elf("rf_fig2");
    let campaign: Vec<&std::ffi::OsStr> = ["campaign".as_ref(), fw.as_os_str()]
        .into_iter()
        .chain(["-j", "10000", "--budget", "1500", "--no-shrink"].map(AsRef::as_ref))
        .collect();
    let out = jostle_with_qemu(d, &counting, &campaign);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(40), "{err}");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cap = 4 * cores;
    assert!(err.contains(&format!("-j 10000 capped at {cap}")), "{err}");
    let boots = std::fs::read_to_string(&count).unwrap().lines().count();
    assert!(boots <= cap, "{boots} QEMUs for {cores} cores");
}

#[test]
fn files_whose_paths_are_not_utf8_or_hold_commas_reach_qemu_as_they_are() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join(std::ffi::OsStr::from_bytes(b"t,mp-\xff"));
    std::fs::create_dir(&odd).unwrap();
    let fw = elf("rf_fig2");
    // The run's block goes through TMPDIR; a block file is named by the user.
    let block = odd.join(std::ffi::OsStr::from_bytes(b"block,\xfe.bin"));
    let out = Command::new(jostle())
        .args([
            "config".as_ref(),
            fw.as_os_str(),
            "--seed".as_ref(),
            "5".as_ref(),
        ])
        .arg("--out")
        .arg(&block)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    for extra in [vec![], vec!["--config-file".into(), block.into_os_string()]] {
        let out = Command::new(jostle())
            .arg("run")
            .arg(&fw)
            .args(["--seed", "5"])
            .args(&extra)
            .env("TMPDIR", &odd)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", text(&out));
        assert!(String::from_utf8_lossy(&out.stdout).contains("(seed 5)"));
    }
    let left: Vec<_> = std::fs::read_dir(&odd).unwrap().flatten().collect();
    assert_eq!(left.len(), 1, "only the block file: {left:?}");
}
