//! Bad input never panics or hangs the host tool's ELF loading and decoding: single-byte
//! corruptions (proptest) of a firmware ELF and of recorded defmt streams (one run, a boot
//! of several runs, host-port lines) go through the library's entry points — loading the
//! ELF, resolving and finding sites, decoding a stream with the (corrupted) table, splitting
//! a boot into runs, finding run starts as a stream arrives — and each must return, with a
//! value or an error, within its share of the time.

use crate::common;

use common::*;
use jostle_host_tools::RunOutcome;
use jostle_host_tools::trace::decode::{FrameDecoder, RunStarts};
use jostle_host_tools::trace::elf::Firmware;
use jostle_host_tools::transport::load_firmware;
use jostle_host_tools::transport::qemu::RawRun;
use jostle_kernel::Config;
use proptest::prelude::*;
use proptest::test_runner::{Config as Cases, TestCaseError, TestRunner};
use std::time::{Duration, Instant};

/// Runs `body` on a thread of its own and fails if it takes longer than `limit`: a hang
/// is a failure, not a test that never ends.
fn within(limit: Duration, what: &str, body: impl FnOnce() + Send + 'static) {
    let (done, finished) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        body();
        let _ = done.send(());
    });
    match finished.recv_timeout(limit) {
        Ok(()) => worker.join().unwrap(),
        // The body panicked: its message is the failure.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(e) = worker.join() {
                std::panic::resume_unwind(e)
            }
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: not done within {limit:?} (a hang?)")
        }
    }
}

fn cases(n: u32) -> TestRunner {
    TestRunner::new(Cases {
        cases: n,
        failure_persistence: None,
        ..Cases::default()
    })
}

/// An offset into `len` bytes, biased towards where the structure is: the first bytes
/// (ELF header, the first frames), the last ones (section headers, the verdict) and the
/// `hot` ranges, else anywhere.
fn offset(len: usize, hot: Vec<(usize, usize)>) -> BoxedStrategy<usize> {
    let mut choices: Vec<BoxedStrategy<usize>> = vec![
        (0..len.min(64)).boxed(),
        (0..len.min(4096)).boxed(),
        (len.saturating_sub(4096)..len).boxed(),
        (0..len).boxed(),
        (0..len).boxed(),
    ];
    for (from, to) in hot {
        choices.push((from..to.min(len)).boxed());
    }
    proptest::strategy::Union::new(choices).boxed()
}

/// A corruption: the byte at an offset XORed with a non-zero mask (or set to 0 or 0xFF).
fn corruption(len: usize, hot: Vec<(usize, usize)>) -> impl Strategy<Value = (usize, u8)> {
    (
        offset(len, hot),
        prop_oneof![1u8..=255, Just(0u8), Just(0xFFu8)],
    )
}

fn corrupt(bytes: &[u8], (at, mask): (usize, u8)) -> Vec<u8> {
    let mut out = bytes.to_vec();
    out[at] = match mask {
        0 => 0,
        0xFF => 0xFF,
        m => out[at] ^ m,
    };
    out
}

fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(at, _)| at)
        .collect()
}

fn raw(frames: Vec<u8>, exit_code: Option<i32>) -> RawRun {
    RawRun {
        frames,
        app_output: Vec::new(),
        exit_code,
        timed_out: false,
        over_limit: None,
        stuck_pc: None,
        stderr: String::new(),
        wall: Duration::ZERO,
    }
}

/// Everything the host tool does with a loaded image and a stream of it.
fn exercise(fw: &Firmware, stream: &[u8], sites: &[u32]) {
    for &site in sites {
        let _ = fw.resolve_site(site);
    }
    let _ = fw.find_site("examples/src/bin/rf_fig2.rs", 19, 10);
    let _ = fw.symbol("main");
    let _ = fw.read(fw.config_addr, 64);
    let decoded = FrameDecoder::new(&fw.table).decode_all(stream);
    assert!(decoded.frames <= stream.len());
    let run = RunOutcome::from_qemu(fw, Config::default(), raw(stream.to_vec(), Some(0)));
    let _ = (run.decisions(), run.verdict_line());
    let batch = RunOutcome::batch_from_qemu(
        fw,
        Config {
            runs: 3,
            ..Config::default()
        },
        raw(stream.to_vec(), Some(11)),
    );
    assert!(!batch.is_empty());
    let _ = RunOutcome::from_rtt(fw, Config::default(), stream, false, false);
    // Run starts found as the stream arrives, in uneven chunks.
    if let Some(mut starts) = RunStarts::new(&fw.table) {
        let mut end = 0;
        while end < stream.len() {
            end = (end + 1 + end / 3).min(stream.len());
            for at in starts.scan(&stream[..end]) {
                assert!(at < end);
            }
        }
    }
}

#[test]
fn corrupt_firmware_elfs_and_defmt_streams_never_panic_or_hang() {
    let elf_path = elf("rf_fig2");
    let elf_bytes = std::fs::read(&elf_path).unwrap();
    let fw = Firmware::load(&elf_path).unwrap();
    // Recorded streams: one run at full trace, and a boot of three runs.
    let one = run_qemu(&fw, config(1, &[]));
    let sites: Vec<u32> = one.sites.iter().map(|(id, _)| *id).collect();
    let stream = qemu().run(&fw, &config(1, &[])).unwrap().frames;
    let boot = qemu()
        .run(
            &fw,
            &Config {
                runs: 3,
                ..config(4, &[])
            },
        )
        .unwrap()
        .frames;
    assert!(!stream.is_empty() && boot.len() > stream.len());
    let started = Instant::now();

    // The defmt streams, decoded with the firmware's own table.
    let fw = std::sync::Arc::new(fw);
    for (name, stream) in [("one run", stream.clone()), ("a boot of three", boot)] {
        let (fw, sites) = (fw.clone(), sites.clone());
        within(Duration::from_secs(60), name, move || {
            let len = stream.len();
            cases(2000)
                .run(&corruption(len, vec![]), |c| {
                    exercise(&fw, &corrupt(&stream, c), &sites);
                    Ok(())
                })
                .unwrap();
            // Cut anywhere: a truncated stream.
            cases(300)
                .run(&(0..len), |cut| {
                    exercise(&fw, &stream[..cut], &sites);
                    Ok(())
                })
                .unwrap();
        });
    }

    // Host-port lines.
    let host = run_host("rf_fig2", config(1, &[]));
    let mut lines = String::new();
    for e in &host.events {
        e.render(&mut lines).unwrap();
        lines.push('\n');
    }
    within(Duration::from_secs(30), "host-port lines", move || {
        cases(1000)
            .run(&corruption(lines.len(), vec![]), |c| {
                let text = String::from_utf8_lossy(&corrupt(lines.as_bytes(), c)).into_owned();
                let raw = jostle_host_tools::transport::hostport::HostRun {
                    stdout: text,
                    exit_code: Some(0),
                    timed_out: false,
                    over_limit: None,
                };
                let run = RunOutcome::from_host(Config::default(), raw);
                let _ = (run.decisions(), run.verdict_line());
                Ok(())
            })
            .unwrap();
    });

    // The ELF: loaded from a corrupted copy, then used on the stream if it loads.
    // Where the symbols the loader looks up are named: every occurrence, a few bytes wide.
    let hot: Vec<(usize, usize)> = [
        &b"_defmt_version_ = "[..],
        b"{\"package\"",
        b"JOSTLE_CONFIG",
        b"\"tag\":\"defmt_",
    ]
    .iter()
    .flat_map(|n| find_all(&elf_bytes, n).into_iter().take(8))
    .map(|at| (at, at + 24))
    .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corrupt.elf");
    within(Duration::from_secs(90), "corrupt ELFs", move || {
        let loaded = std::cell::Cell::new(0);
        let failed = std::cell::Cell::new(0);
        cases(2000)
            .run(&corruption(elf_bytes.len(), hot), |c| {
                std::fs::write(&path, corrupt(&elf_bytes, c)).unwrap();
                // As the transports load it (a damaged defmt table told from a non-ELF).
                match load_firmware(&path) {
                    Ok(fw) => {
                        loaded.set(loaded.get() + 1);
                        exercise(&fw, &stream, &sites);
                    }
                    Err(e) => {
                        let text = e.to_string();
                        if text.is_empty() || text.lines().count() != 1 {
                            return Err(TestCaseError::fail(format!(
                                "an error is one line (exit {}): {text:?}",
                                e.exit_code()
                            )));
                        }
                        failed.set(failed.get() + 1);
                    }
                }
                Ok(())
            })
            .unwrap();
        assert!(loaded.get() > 0, "no corruption left the ELF loadable");
        assert!(failed.get() > 0, "no corruption made the ELF fail to load");
        eprintln!(
            "corrupt ELFs: {} loaded, {} refused",
            loaded.get(),
            failed.get()
        );
    });
    eprintln!("fuzzing took {:?}", started.elapsed());
}

/// Counts and other numbers on the command line, from 0 to past `u64::MAX`, negative or not
/// numbers at all: each is refused at once (exit 2, one line) or runs within its bounds —
/// never a panic, an abort or memory reserved for the count ahead of the runs (`jostle`'s
/// address space is bounded). What is still running after a moment (a count of runs that
/// takes long) is stopped with Ctrl-C and must end with what finished (exit 130). Every
/// option with every value, so that no run of the test can miss one.
#[cfg(target_os = "linux")]
#[test]
fn numbers_on_the_command_line_are_refused_or_bounded() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let fw = elf("rf_fig2");
    let fw = fw.to_str().unwrap();
    let values = [
        "0",
        "1",
        "9",
        "10",
        "4294967295",
        "4294967296",
        "18446744073709551615",
        "18446744073709551616",
        "-1",
        "",
        "1e3",
    ];
    // (option, the command around it)
    let options: &[(&str, &[&str])] = &[
        ("--runs", &["run", fw]),
        ("--runs", &["predict", fw, "--out", "p.json"]),
        ("--runs", &["confirm", fw, "--strategy", "random"]),
        ("--phase1-runs", &["campaign", fw, "--budget", "30"]),
        ("--runs-per-candidate", &["campaign", fw, "--budget", "30"]),
        ("--budget", &["campaign", fw, "--phase1-runs", "1"]),
        ("-j", &["campaign", fw, "--budget", "30"]),
        ("--livelock-bound", &["campaign", fw, "--budget", "30"]),
        ("--livelock-bound", &["run", fw]),
        (
            "--pct-depth",
            &["confirm", fw, "--strategy", "pct", "--runs", "2"],
        ),
        ("--max-rounds", &["campaign", fw, "--budget", "30"]),
        ("--step-limit", &["run", fw]),
        ("--max-output", &["run", fw]),
    ];
    let started = Instant::now();
    let mut seen = std::collections::BTreeMap::<i32, u32>::new();
    let mut failures = Vec::new();
    // Every option with every value: the few that run stop within a moment.
    for (option, command) in options {
        for value in values {
            let what = format!("{} {option} {value:?}", command[0]);
            let mut child = Command::new("sh")
                .arg("-c")
                .arg("ulimit -v 3000000; exec \"$0\" \"$@\"")
                .arg(jostle())
                .args(*command)
                .arg(format!("{option}={value}"))
                .current_dir(dir.path())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let moment = Instant::now();
            while child.try_wait().unwrap().is_none() && moment.elapsed() < Duration::from_secs(1) {
                std::thread::sleep(Duration::from_millis(20));
            }
            if child.try_wait().unwrap().is_none() {
                signal(&child, "INT");
            }
            let code = exit_code_within(&mut child, Duration::from_secs(60));
            let err = stderr_of(&mut child);
            let why = if err.contains("panicked") || err.contains("memory allocation") {
                Some("a panic or an abort".to_owned())
            } else {
                match code {
                    Some(2) if err.trim().lines().count() == 1 => None,
                    Some(2) => Some("a refusal of more than one line".into()),
                    Some(0 | 10..=19 | 40..=42 | 130) => None,
                    other => Some(format!("exit {other:?}")),
                }
            };
            match why {
                Some(why) => failures.push(format!("{what}: {why}: {}", err.trim())),
                None => *seen.entry(code.unwrap_or(-1)).or_default() += 1,
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "command-line numbers: exits {seen:?} in {:?}",
        started.elapsed()
    );
}
