//! The `jostle` command line: verdict exit codes, JSON output, and a clear one-line error
//! with its own exit code for each kind of bad input.

use crate::common;

use common::*;
use jostle_host_tools::error::JostleError;
use jostle_host_tools::trace::decode::FrameDecoder;
use std::process::{Command, Output};

fn jostle_run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(jostle());
    cmd.arg("run").args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("jostle runs")
}

fn stderr_line(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    assert_eq!(text.lines().count(), 1, "one-line error expected: {text}");
    text
}

#[test]
fn verdicts_are_exit_codes_and_json_ends_with_a_summary() {
    let fig1 = elf("rf_fig1");
    let fig1 = fig1.to_str().unwrap();
    let out = jostle_run(&[fig1, "--seed", "3", "--json"], &[]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let summary = lines.last().unwrap();
    assert_eq!(summary["summary"], true);
    assert_eq!(summary["seed"], 3);
    let verdict = summary["verdict"].as_str().unwrap();
    let expected = match verdict {
        "pass" => 0,
        "panic" => 11,
        other => panic!("rf_fig1 gave {other}"),
    };
    assert_eq!(out.status.code(), Some(expected));
    // At full trace every executed step is one event line (exits, results and the values
    // accesses read or wrote are not steps).
    let step_events = lines[..lines.len() - 1]
        .iter()
        .filter(|l| {
            !matches!(
                l["event"].as_str().unwrap(),
                "run_start" | "run_end" | "task_exit" | "task_panic" | "blocked" | "value"
            )
        })
        .count();
    assert_eq!(summary["steps"].as_u64().unwrap() as usize, step_events);
    assert!(
        lines[..lines.len() - 1]
            .iter()
            .all(|l| l["event"].is_string())
    );
    assert!(lines.iter().any(|l| {
        l["event"] == "write"
            && l["site"]
                .as_str()
                .unwrap()
                .starts_with("examples/src/bin/rf_fig1.rs:")
    }));

    // Same seed, same output: replay.
    let again = jostle_run(&[fig1, "--seed", "3", "--json"], &[]);
    assert_eq!(String::from_utf8(again.stdout).unwrap(), stdout);

    let dead = jostle_run(
        &[
            elf("abba_deadlock").to_str().unwrap(),
            "--seed",
            "0",
            "--step-limit",
            "3",
        ],
        &[],
    );
    assert_eq!(dead.status.code(), Some(13), "step limit");
}

/// `jostle run --runs 30 --json` of `fw` with `strategy` (and `extra` options): the exit code
/// and, per run, its seed, verdict, steps and panic message.
fn runs_of(fw: &str, strategy: &str, extra: &[&str]) -> (Option<i32>, Vec<serde_json::Value>) {
    let mut args = vec![fw, "--strategy", strategy, "--runs", "30"];
    args.extend(["--trace", "results", "--json"]);
    args.extend(extra);
    let out = jostle_run(&args, &[]);
    let rows = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let r: serde_json::Value = serde_json::from_str(l).expect("each line is JSON");
            assert_eq!(r["strategy"], strategy);
            serde_json::json!([r["seed"], r["verdict"], r["steps"], r["panic"]["message"]])
        })
        .collect();
    (out.status.code(), rows)
}

/// POS (`--strategy pos`, partial order sampling) on racefuzzer-pldi08's Figure 2: thread2's
/// write of `x` must wait out thread1's 20 filler steps under the lock. Random moves thread2
/// with probability 1/2 at every step and so practically never waits that long; under POS
/// thread2 keeps its priority while thread1 draws a new one at each step, so some of 30 runs
/// panic, on QEMU and on the host port alike, at the same seeds.
#[test]
fn pos_finds_the_hard_race_of_rf_fig2_on_qemu_and_on_the_host_port() {
    let (qemu_elf, host) = (elf("rf_fig2"), host_exe("rf_fig2"));
    let (code, on_qemu) = runs_of(qemu_elf.to_str().unwrap(), "pos", &[]);
    assert_eq!(code, Some(11), "the first failure's code: {on_qemu:?}");
    let panics = on_qemu.iter().filter(|r| r[1] == "panic").count();
    assert!(panics > 0);
    assert!(
        on_qemu
            .iter()
            .all(|r| r[1] == "pass" || (r[1] == "panic" && r[3] == "ERROR")),
        "{on_qemu:?}"
    );
    let (code, on_host) = runs_of(host.to_str().unwrap(), "pos", &["--host"]);
    assert_eq!(code, Some(11));
    assert_eq!(on_qemu, on_host, "the same decisions on both ports");
    // The same 30 seeds under Random: no panic.
    let (code, random) = runs_of(qemu_elf.to_str().unwrap(), "random", &[]);
    assert_eq!(code, Some(0), "{random:?}");
}

#[test]
fn missing_qemu_is_a_clear_error() {
    let out = jostle_run(
        &[elf("rf_fig1").to_str().unwrap()],
        &[("JOSTLE_QEMU", "/nonexistent/qemu-system-arm")],
    );
    assert_eq!(out.status.code(), Some(20));
    assert!(stderr_line(&out).contains("not found"));
}

#[test]
fn a_file_that_is_not_an_elf_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("firmware.elf");
    std::fs::write(&path, b"this is not an ELF").unwrap();
    let out = jostle_run(&[path.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(21));
    assert!(stderr_line(&out).contains("not an ELF"));
}

#[test]
fn an_elf_without_defmt_data_is_refused() {
    // The host-port build of an example is an ELF, but carries no defmt table.
    let out = jostle_run(&[host_exe("rf_fig1").to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(22));
    assert!(stderr_line(&out).contains("no defmt data"));
}

#[test]
fn a_firmware_that_never_ends_times_out_with_its_partial_trace() {
    // Long enough for QEMU to start and print on a loaded machine (CI runs tests in
    // parallel on two cores); the verdict comes from the limit, not from the firmware.
    let out = jostle_run(
        &[elf("never_ends").to_str().unwrap(), "--timeout", "3"],
        &[],
    );
    assert_eq!(out.status.code(), Some(17));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("never_ends.rs"), "partial trace: {stdout}");
    assert!(stdout.contains("verdict: timeout"));
}

#[test]
fn truncated_and_corrupt_streams_are_detected() {
    let fw = firmware("rf_fig2");
    let raw = qemu().run(&fw, &config(1, &[])).unwrap();
    let good = raw.frames.clone();
    assert!(
        FrameDecoder::new(&fw.table)
            .decode_all(&good)
            .error
            .is_none()
    );

    // Cut inside the last frame.
    let cut = &good[..good.len() - 3];
    let decoded = FrameDecoder::new(&fw.table).decode_all(cut);
    assert!(matches!(
        decoded.error,
        Some(JostleError::StreamTruncated(_))
    ));
    assert!(decoded.frames > 0, "frames before the cut are kept");

    // A frame whose index is in no table.
    let mut bad = good[..good.len() / 2].to_vec();
    let boundary = bad.iter().rposition(|b| *b == 0).unwrap() + 1;
    bad.truncate(boundary);
    bad.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF, 0x00]);
    bad.extend_from_slice(&good[boundary..]);
    let decoded = FrameDecoder::new(&fw.table).decode_all(&bad);
    assert!(
        matches!(decoded.error, Some(JostleError::StreamCorrupt(_))),
        "{:?}",
        decoded.error
    );

    // A stream that ends cleanly between frames but before the verdict.
    let early = &good[..boundary];
    let run = jostle_host_tools::RunOutcome::from_qemu(
        &fw,
        config(1, &[]),
        jostle_host_tools::transport::qemu::RawRun {
            frames: early.to_vec(),
            app_output: Vec::new(),
            exit_code: Some(0),
            timed_out: false,
            stderr: String::new(),
            wall: std::time::Duration::ZERO,
            over_limit: None,
            stuck_pc: None,
        },
    );
    assert!(matches!(run.error, Some(JostleError::StreamTruncated(_))));
    assert!(JostleError::StreamTruncated(String::new()).exit_code() == 23);
    assert!(JostleError::StreamCorrupt(String::new()).exit_code() == 24);
}

#[test]
fn a_bad_command_line_is_a_usage_error() {
    let out = jostle_run(&[], &[]);
    assert_eq!(out.status.code(), Some(2));
}

/// `--timeout NaN` (and inf, negative, 0) once panicked in every command: each refuses it
/// with one line and exit 2.
#[test]
fn a_timeout_that_is_not_a_positive_number_is_refused_by_every_command() {
    let fw = elf("rf_fig1");
    let fw = fw.to_str().unwrap();
    for command in ["run", "campaign", "predict", "confirm", "replay"] {
        for t in ["NaN", "inf", "-1", "0", "-inf"] {
            let out = Command::new(jostle())
                .args([command, fw, &format!("--timeout={t}")])
                .output()
                .unwrap();
            let err = stderr_line(&out);
            assert_eq!(out.status.code(), Some(2), "{command} --timeout {t}: {err}");
            assert!(err.contains("--timeout"), "{command} --timeout {t}: {err}");
            assert!(!err.contains("panicked"), "{command} --timeout {t}: {err}");
        }
    }
}

/// Runs `cmd`, killing it after `limit` (a test of a limit must fail, not hang, when the
/// limit does not work).
fn output_within(cmd: &mut Command, limit: std::time::Duration) -> (Output, std::time::Duration) {
    use std::io::Read;
    use std::process::Stdio;
    let started = std::time::Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("jostle runs");
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            // jostle's QEMU dies with it.
            let _ = child.kill();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let took = started.elapsed();
    let out = Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    (out, took)
}

/// A host-port "firmware" (any executable: the host port runs it with `JOSTLE_CONFIG` set).
fn script(dir: &std::path::Path, name: &str, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `--timeout` is a limit on silence: a run that never stops writing once grew the host
/// tool's memory without end. `--run-limit` ends it (verdict timeout, exit 17), on QEMU and
/// on the host port.
#[test]
fn a_run_that_never_stops_writing_ends_at_its_run_limit() {
    let secs = std::time::Duration::from_secs;
    let fw = elf("step_forever");
    let (out, took) = output_within(
        Command::new(jostle()).arg("run").arg(&fw).args([
            "--step-limit",
            "4000000000",
            "--timeout",
            "5",
            "--run-limit",
            "3",
        ]),
        secs(90),
    );
    assert_eq!(out.status.code(), Some(17), "{out:?}");
    assert!(took < secs(60), "{took:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("step_forever.rs"), "partial trace");
    assert!(
        stdout.contains("verdict: timeout"),
        "{}",
        &stdout[stdout.len().saturating_sub(300)..]
    );

    let dir = tempfile::tempdir().unwrap();
    let chatty = script(
        dir.path(),
        "chatty",
        "while :; do echo tick; sleep 0.05; done",
    );
    let (out, took) = output_within(
        Command::new(jostle()).arg("run").arg(&chatty).args([
            "--host",
            "--timeout",
            "60",
            "--run-limit",
            "2",
        ]),
        secs(90),
    );
    assert_eq!(out.status.code(), Some(17), "{out:?}");
    assert!(took < secs(30), "{took:?}");
}

/// A run may write at most `--max-output` bytes: past it the run is killed and the command
/// fails with one line and exit 42, on QEMU and on the host port.
#[test]
fn a_run_that_writes_too_much_is_stopped_with_its_own_exit_code() {
    let secs = std::time::Duration::from_secs;
    let fw = elf("step_forever");
    let (out, took) = output_within(
        Command::new(jostle()).arg("run").arg(&fw).args([
            "--step-limit",
            "4000000000",
            "--max-output",
            "200000",
            "--json",
        ]),
        secs(90),
    );
    assert_eq!(
        out.status.code(),
        Some(42),
        "{:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took < secs(60), "{took:?}");
    let err = stderr_line(&out);
    assert!(err.contains("more than 200000 bytes"), "{err}");
    assert!(err.contains("--max-output"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let flood = script(dir.path(), "flood", "yes 'J not an event'");
    let (out, took) = output_within(
        Command::new(jostle()).arg("run").arg(&flood).args([
            "--host",
            "--max-output",
            "1000000",
            "--json",
        ]),
        secs(90),
    );
    assert_eq!(
        out.status.code(),
        Some(42),
        "{:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took < secs(30), "{took:?}");
    assert!(stderr_line(&out).contains("more than 1000000 bytes"));
}

/// A garbage, empty or oversized `--config-file` (or `--flash-config`) was silently replaced
/// by the firmware's defaults while the summary printed the options' seed: it is refused
/// (exit 15, one line), and a good one's run reports the block's own seed.
#[test]
fn a_config_file_that_holds_no_valid_block_is_refused_and_a_good_one_reports_its_seed() {
    let dir = tempfile::tempdir().unwrap();
    let fw = elf("rf_fig2");
    let fw = fw.to_str().unwrap();
    let block = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_owned()
    };
    let good = jostle_kernel::Config {
        seed: 77,
        ..jostle_kernel::Config::default()
    };
    let mut corrupt = good.encode();
    corrupt[40] ^= 0x10;
    for (name, bytes) in [
        ("garbage.bin", b"garbage".repeat(40)),
        ("empty.bin", Vec::new()),
        ("oversized.bin", vec![0x5a; 1 << 20]),
        ("corrupt.bin", corrupt.to_vec()),
    ] {
        let path = block(name, &bytes);
        for option in ["--config-file", "--flash-config"] {
            let out = jostle_run(&[fw, "--seed", "3", option, &path], &[]);
            let err = stderr_line(&out);
            assert_eq!(out.status.code(), Some(15), "{option} {name}: {err}");
            assert!(err.contains(name), "{err}");
            assert!(out.stdout.is_empty(), "{option} {name}: no run is made");
        }
    }
    let path = block("good.bin", &good.encode());
    let out = jostle_run(&[fw, "--seed", "3", "--json", "--config-file", &path], &[]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let summary: serde_json::Value =
        serde_json::from_str(stdout.lines().last().expect("a summary")).unwrap();
    assert_eq!(summary["seed"], 77, "{summary}");
    let first: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["event"], "run_start");
    assert_eq!(first["seed"], 77);
}

/// Options that were silently ignored or accepted are refused with one line and exit 2:
/// `--flash-config` with `--runs`, `--probe` or `--host`, and counts of zero.
#[test]
fn ignored_and_zero_options_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fw = elf("rf_fig2");
    let fw = fw.to_str().unwrap();
    let page = dir.path().join("page.bin");
    let mut bytes = vec![0u8; 4096];
    jostle_kernel::Config::default().encode_page(&mut bytes);
    std::fs::write(&page, bytes).unwrap();
    let page = page.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", fw, "--flash-config", page, "--runs", "3"],
            "--runs",
        ),
        (
            &["run", fw, "--flash-config", page, "--runs", "1"],
            "--runs",
        ),
        (
            &[
                "run",
                fw,
                "--flash-config",
                page,
                "--probe",
                "--chip",
                "RP2040",
            ],
            "--probe",
        ),
        (&["run", fw, "--flash-config", page, "--host"], "--host"),
        (&["run", fw, "--runs", "0"], "--runs"),
        (&["predict", fw, "--runs", "0"], "--runs"),
        (&["confirm", fw, "--runs", "0"], "--runs"),
        (
            &["run", fw, "--strategy", "pct", "--pct-depth", "0"],
            "--pct-depth",
        ),
        (
            &["confirm", fw, "--strategy", "pct", "--pct-depth", "0"],
            "--pct-depth",
        ),
        (&["predict", fw, "--cycle-len", "0"], "--cycle-len"),
        (&["run", fw, "--max-output", "0"], "--max-output"),
        (&["run", fw, "--run-limit", "NaN"], "--run-limit"),
    ];
    for (args, option) in cases {
        let out = Command::new(jostle()).args(*args).output().unwrap();
        let err = stderr_line(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(option), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing runs");
    }
    // The flash block alone still boots.
    let out = Command::new(jostle())
        .args(["run", fw, "--flash-config", page])
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 11)), "{out:?}");
}

/// A prediction file of another schema version is refused (exit 30), before its fields.
#[test]
fn a_prediction_of_an_unknown_schema_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prediction.json");
    std::fs::write(
        &path,
        r#"{"schema_version": 99, "candidates": [], "relations": []}"#,
    )
    .unwrap();
    let out = jostle_run(
        &[
            elf("rf_fig2").to_str().unwrap(),
            "--strategy",
            "race",
            "--target",
            "0123456789abcdef",
            "--prediction",
            path.to_str().unwrap(),
        ],
        &[],
    );
    let err = stderr_line(&out);
    assert_eq!(out.status.code(), Some(30), "{err}");
    assert!(err.contains("schema version 99"), "{err}");
}

/// Each run of a boot of several has its own output limit: the count starts again at each
/// run's start, so a boot of runs that each stay under `--max-output` is not cut, however
/// much they write together.
#[test]
fn each_run_of_a_boot_has_its_own_output_limit() {
    use jostle_host_tools::transport::{Limits, Runner};
    let one = qemu()
        .run(&firmware("rf_fig2"), &config(0, &[]))
        .unwrap()
        .frames
        .len() as u64;
    let limits = Limits {
        output: one * 3 / 2,
        ..Limits::quiet(std::time::Duration::from_secs(20))
    };
    let runner = Runner::with_limits(elf("rf_fig2"), false, limits).unwrap();
    let batch = runner.run_batch(&config(0, &[]), 4).unwrap();
    assert_eq!(batch.len(), 4);
    for (k, run) in batch.iter().enumerate() {
        assert!(run.error.is_none(), "run {k}: {:?}", run.error);
        assert!(run.outcome.is_some(), "run {k}");
    }
    // One run over the limit is cut, alone.
    let tight = Runner::with_limits(
        elf("rf_fig2"),
        false,
        Limits {
            output: one / 2,
            ..limits
        },
    )
    .unwrap();
    let batch = tight.run_batch(&config(0, &[]), 4).unwrap();
    assert_eq!(
        batch.len(),
        1,
        "the boot stops at the run that wrote too much"
    );
    assert_eq!(batch[0].error.as_ref().map(|e| e.exit_code()), Some(42));
}

/// Accesses and locks are named from the image's symbols, not shown as addresses: on QEMU
/// (the ELF's data symbols, built by `jostle run -p`) and on the host port (offsets from the
/// kernel's anchor static, named from the executable's symbols), in the interleaving and
/// in `--json`.
#[test]
fn locations_are_named_from_the_symbols_on_both_ports() {
    let target = target_dir();
    let out = Command::new(jostle())
        .current_dir(workspace())
        .args([
            "run",
            "-p",
            "jostle-examples",
            "--bin",
            "rf_fig1",
            "--seed",
            "3",
        ])
        .arg("--target-dir")
        .arg(&target)
        .output()
        .expect("jostle runs");
    let qemu = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(11), "{qemu}");
    let host_exe = host_exe("rf_fig1");
    let out = jostle_run(&["--host", host_exe.to_str().unwrap(), "--seed", "3"], &[]);
    let host = String::from_utf8_lossy(&out.stdout).into_owned();
    for text in [&qemu, &host] {
        // With the value each access wrote or read (seed 3: z is written, then read as 1).
        assert!(text.contains("write rf_fig1::Z = 1 "), "{text}");
        assert!(text.contains("read rf_fig1::Z = 1 "), "{text}");
        assert!(text.contains("acquire lock rf_fig1::L "), "{text}");
        assert!(!text.contains("0x"), "{text}");
    }
    let fig1 = elf("rf_fig1");
    let out = jostle_run(&[fig1.to_str().unwrap(), "--seed", "3", "--json"], &[]);
    let json = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(json.contains("\"location\":\"rf_fig1::Z\""), "{json}");
    assert!(
        json.contains("\"location\":\"rf_fig1::Z\",\"value\":\"1\""),
        "{json}"
    );
    // The values are events of their own too, one after each access of a primitive.
    let values = json
        .lines()
        .filter(|l| l.contains("\"event\":\"value\""))
        .count();
    let accesses = json
        .lines()
        .filter(|l| l.contains("\"event\":\"read\"") || l.contains("\"event\":\"write\""))
        .count();
    assert!(
        values > 0 && values == accesses,
        "{values} values, {accesses} accesses\n{json}"
    );

    // Atomics too: the first load of the free slot reads 0, on both ports.
    let check_then_act = elf("atomic_check_then_act");
    let cta_host = common::host_exe("atomic_check_then_act");
    for args in [
        vec![check_then_act.to_str().unwrap(), "--seed", "0"],
        vec!["--host", cta_host.to_str().unwrap(), "--seed", "0"],
    ] {
        let out = jostle_run(&args, &[]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            text.contains("atomic-load atomic_check_then_act::OWNER = 0 "),
            "{text}"
        );
    }
}
