//! The README's exit-code table, row by row: each code the host tool can be made to give
//! without hardware is provoked through the command line, and every row of the table is
//! either provoked here or listed in [`NOT_PROVOKABLE`] with the reason. An error (not a
//! verdict) is one line on stderr, never a panic.

use crate::common;

use common::*;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Is `code` the exit code of a run's verdict?
fn is_verdict(code: i32) -> bool {
    jostle_kernel::Verdict::ALL
        .iter()
        .any(|v| i32::from(v.exit_code()) == code)
}

/// Rows of the table no test can provoke here, and why.
const NOT_PROVOKABLE: &[(i32, &str)] = &[
    (
        18,
        "a board that stops answering mid-run needs a board and a probe",
    ),
    (
        35,
        "attaching fails only with a probe connected to a target that refuses it",
    ),
    (36, "flashing fails only with a probe and a board"),
    (
        38,
        "three lost runs in a row need a board that stops answering",
    ),
];

/// One row: the code, what provokes it, and whether its message must be one line on
/// stderr (errors; verdicts print a trace, campaigns their progress).
struct Case {
    code: i32,
    what: &'static str,
    args: Vec<OsString>,
    env: Vec<(&'static str, OsString)>,
    cwd: Option<PathBuf>,
    one_line: bool,
    /// What stderr must say (the reason, not only the code).
    says: Option<&'static str>,
    /// A path the command must not have made (a refusal leaves no trace).
    makes_no: Option<PathBuf>,
}

fn case(code: i32, what: &'static str, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Case {
    Case {
        code,
        what,
        args: args.iter().map(|a| a.as_ref().to_owned()).collect(),
        env: Vec::new(),
        cwd: None,
        // Verdicts (0, 10-19, 44 on) print a run; campaigns (40, 41) their progress and
        // table; a failed build (25) shows cargo's own diagnostics first.
        one_line: !(is_verdict(code) || matches!(code, 17 | 18 | 25 | 40 | 41))
            || what.contains("(host side)"),
        says: None,
        makes_no: None,
    }
}

impl Case {
    fn env(mut self, key: &'static str, value: impl AsRef<std::ffi::OsStr>) -> Case {
        self.env.push((key, value.as_ref().to_owned()));
        self
    }

    fn cwd(mut self, dir: &Path) -> Case {
        self.cwd = Some(dir.to_owned());
        self
    }

    fn says(mut self, reason: &'static str) -> Case {
        self.says = Some(reason);
        self
    }

    fn makes_no(mut self, path: &Path) -> Case {
        self.makes_no = Some(path.to_owned());
        self
    }

    /// Its stderr has more than one line (notes before the error).
    fn lines(mut self) -> Case {
        self.one_line = false;
        self
    }

    fn run(&self) -> Output {
        let mut cmd = Command::new(jostle());
        cmd.args(&self.args).stdin(Stdio::null());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        cmd.output().expect("jostle runs")
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `bin`'s ELF with every occurrence of `from` replaced by `to` (same length).
fn patched_elf(dir: &Path, bin: &str, from: &[u8], to: &[u8]) -> PathBuf {
    assert_eq!(from.len(), to.len());
    let mut bytes = std::fs::read(elf(bin)).unwrap();
    let mut found = 0;
    let mut i = 0;
    while i + from.len() <= bytes.len() {
        if &bytes[i..i + from.len()] == from {
            bytes[i..i + from.len()].copy_from_slice(to);
            found += 1;
            i += from.len();
        } else {
            i += 1;
        }
    }
    assert!(found > 0, "{bin}: no {:?}", String::from_utf8_lossy(from));
    write(dir, &format!("{bin}-patched-{found}"), &bytes)
}

/// The codes of the README's exit-code table.
fn readme_codes() -> Vec<i32> {
    let text = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let table = text
        .split("### Exit codes")
        .nth(1)
        .expect("README: ### Exit codes");
    table
        .lines()
        .skip_while(|l| !l.starts_with("| code"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_start_matches('|')
                .split('|')
                .next()
                .unwrap()
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("README row {l}"))
        })
        .collect()
}

/// The id of the first failure of the report in `dir`.
fn report_failure(dir: &Path) -> String {
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    r["failures"][0]["id"]
        .as_str()
        .expect("a failure")
        .to_owned()
}

/// A small campaign of `rf_fig2` (whose race is harmful) into `dir/report`.
fn small_campaign(fw: &Path, dir: &Path) -> Case {
    case(
        40,
        "campaign: a harmful bug",
        &[
            &"campaign",
            &fw,
            &"--phase1-runs",
            &"2",
            // Enough runs that one is harmful whatever the image: RaceFuzzer makes rf_fig2's
            // race harmful in about half its runs, and which ones depends on the candidate's
            // id (from the image's site ids), so 2 runs were harmless on some builds.
            &"--runs-per-candidate",
            &"12",
            &"--max-rounds",
            &"1",
            &"--out",
            &dir.join("report"),
        ],
    )
}

#[test]
fn every_exit_code_of_the_readme_is_what_it_says() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let fw = |bin: &str| elf(bin);
    let rf_fig1 = fw("rf_fig1");
    let rf_fig2 = fw("rf_fig2");

    // A recorded stream of rf_fig2, served by fake QEMUs on the frame channel (fd 3).
    let raw = qemu()
        .run(&firmware("rf_fig2"), &config(1, &[]))
        .expect("qemu runs");
    let stream = write(d, "stream.bin", &raw.frames);
    let cut = write(d, "cut.bin", &raw.frames[..raw.frames.len() - 3]);
    let cut_qemu = fake_qemu(d, "qemu-cut", &format!("cat '{}' >&3", cut.display()));
    let lying_qemu = fake_qemu(
        d,
        "qemu-lies",
        &format!("cat '{}' >&3; exit 3", stream.display()),
    );
    let failing_qemu = fake_qemu(
        d,
        "qemu-fails",
        "echo 'qemu-system-arm: -machine mps2-an385: unsupported machine' >&2; exit 1",
    );

    // Prediction files: none, another firmware's, another schema's.
    let p1 = d.join("rf_fig1-prediction.json");
    let out = Command::new(jostle())
        .arg("predict")
        .arg(&rf_fig1)
        .args(["--runs", "3", "--out"])
        .arg(&p1)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let p1_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p1).unwrap()).unwrap();
    let race = p1_json["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "race")
        .expect("rf_fig1 predicts a race")["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // A campaign's report, and the same report with a verdict its replay will not give.
    let campaign = small_campaign(&rf_fig2, d);
    let out = campaign.run();
    assert_eq!(out.status.code(), Some(40), "{out:?}");
    let report = d.join("report").join("report.json");
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let bug = r["bugs"][0]["id"].as_str().unwrap().to_owned();
    for run in ["first_confirmed", "first_harmful"] {
        if r["bugs"][0][run].is_object() {
            r["bugs"][0][run]["verdict"] = "deadlock".into();
        }
    }
    let tampered = d.join("tampered");
    std::fs::create_dir(&tampered).unwrap();
    write(&tampered, "report.json", r.to_string().as_bytes());
    let garbage_report = d.join("garbage-report");
    std::fs::create_dir(&garbage_report).unwrap();
    write(&garbage_report, "report.json", b"{\"not\": \"a report\"}");

    // Another firmware's report (rf_fig1's), and one of its failures.
    let other = small_campaign(&rf_fig1, &d.join("other"));
    let out = other.run();
    assert_eq!(out.status.code(), Some(40), "{out:?}");
    let other_report = d.join("other").join("report");
    let other_failure = report_failure(&other_report);

    // A QEMU that dies in every boot, after the first frames of a run.
    let dying_qemu = fake_qemu(
        d,
        "qemu-dies",
        &format!("head -c 200 '{}'; kill -9 $$", stream.display()),
    );
    // A firmware path a replay command cannot name.
    let not_utf8_fw =
        d.join(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"rf_fig2-\xff"));
    std::fs::copy(&rf_fig2, &not_utf8_fw).unwrap();

    // A report directory another jostle (this test) holds.
    let held = d.join("held");
    let _lock = jostle_host_tools::output::lock::lock(&held).unwrap();

    let rtt = rtt_elf("af_fig1");
    let not_elf = write(d, "not-an-elf", b"this is not an ELF");
    let bad_defmt = patched_elf(d, "rf_fig2", b"_defmt_version_ = 4", b"_defmt_version_ = 9");
    let no_config = patched_elf(d, "rf_fig2", b"JOSTLE_CONFIG\0", b"XOSTLE_CONFIG\0");
    let garbage_block = write(d, "garbage.bin", &b"garbage".repeat(30));
    let not_utf8 = write(d, "not-utf8.jsonl", &[0xff, 0xfe, 0x00, 0x80, b'\n']);
    let garbage_trace = write(d, "garbage.jsonl", b"{\"event\": \"nope\"}\n");
    let nowhere = d.join("no-such-dir").join("file");

    let cases = vec![
        case(0, "pass", &[&"run", &rf_fig2, &"--seed", &"0"]),
        case(
            10,
            "a handler that would block",
            &[&"run", &fw("handler_blocks")],
        ),
        case(11, "panic", &[&"run", &rf_fig1, &"--seed", &"0"]),
        case(
            12,
            "deadlock",
            &[&"run", &fw("abba_deadlock"), &"--seed", &"3"],
        ),
        case(
            13,
            "step limit",
            &[&"run", &fw("abba_deadlock"), &"--step-limit", &"3"],
        ),
        case(14, "stack overflow", &[&"run", &fw("stack_overflow")]),
        case(44, "lost wake-up", &[&"run", &fw("lost_wake")]),
        case(45, "starvation", &[&"run", &fw("waits_for_nothing")]),
        case(
            15,
            "block refused (host side)",
            &[&"run", &rf_fig2, &"--config-file", &garbage_block],
        ),
        case(16, "hard fault", &[&"run", &fw("hard_fault")]),
        case(
            17,
            "timeout",
            &[&"run", &fw("never_ends"), &"--timeout", &"3"],
        ),
        case(19, "task limit", &[&"run", &fw("task_limit")]),
        case(
            46,
            "an application that exits through semihosting reporting failure",
            &[&"run", &test_app("app-endings"), &"--arg", &"2"],
        ),
        case(2, "bad command line", &[&"run", &rf_fig2, &"--bogus"]),
        case(2, "bad value", &[&"run", &rf_fig2, &"--timeout", &"NaN"]),
        case(
            2,
            "a livelock bound of 0",
            &[&"run", &rf_fig2, &"--livelock-bound", &"0"],
        )
        .says("--livelock-bound"),
        case(
            2,
            "a livelock bound of 0 (confirm)",
            &[&"confirm", &rf_fig2, &"--livelock-bound", &"0"],
        )
        .says("--livelock-bound"),
        case(
            2,
            "a PCT deeper than the kernel keeps",
            &[
                &"confirm",
                &rf_fig2,
                &"--strategy",
                &"pct",
                &"--pct-depth",
                &"99",
            ],
        )
        .says("1..=9"),
        case(
            2,
            "no runs per candidate",
            &[
                &"campaign",
                &rf_fig2,
                &"--runs-per-candidate",
                &"0",
                &"--out",
                &d.join("no-runs"),
            ],
        )
        .says("--runs-per-candidate 0")
        .makes_no(&d.join("no-runs")),
        case(
            2,
            "no workers",
            &[
                &"campaign",
                &rf_fig2,
                &"-j",
                &"0",
                &"--out",
                &d.join("j0").join("r"),
            ],
        )
        .says("-j 0")
        .makes_no(&d.join("j0")),
        case(
            2,
            "a negative number of workers",
            &[
                &"campaign",
                &rf_fig2,
                &"-j",
                &"-1",
                &"--out",
                &d.join("j-1"),
            ],
        )
        .makes_no(&d.join("j-1")),
        case(
            2,
            "a firmware path that is not UTF-8",
            &[&"campaign", &not_utf8_fw, &"--out", &d.join("not-utf8")],
        )
        .says("not UTF-8")
        .makes_no(&d.join("not-utf8")),
        case(20, "QEMU missing", &[&"run", &rf_fig2])
            .env("JOSTLE_QEMU", "/nonexistent/qemu-system-arm"),
        case(21, "not an ELF", &[&"run", &not_elf]),
        case(
            22,
            "an ELF without defmt data",
            &[&"run", &host_exe("rf_fig1")],
        ),
        case(
            22,
            "a defmt table that cannot be read",
            &[&"run", &bad_defmt],
        ),
        case(23, "a stream cut inside a frame", &[&"run", &rf_fig2]).env("JOSTLE_QEMU", &cut_qemu),
        case(
            24,
            "a verdict that disagrees with the exit code",
            &[&"run", &rf_fig2],
        )
        .env("JOSTLE_QEMU", &lying_qemu),
        case(
            25,
            "a build that fails",
            &[
                &"run",
                &"-p",
                &"no-such-package",
                &"--bin",
                &"nothing",
                &"--target-dir",
                &d.join("build"),
            ],
        )
        .cwd(&workspace()),
        case(26, "a file that cannot be read", &[&"run", &nowhere]),
        case(
            26,
            "a file that cannot be written",
            &[&"config", &"--out", &nowhere],
        ),
        case(27, "QEMU that fails at once", &[&"run", &rf_fig2]).env("JOSTLE_QEMU", &failing_qemu),
        case(27, "QEMU that dies in every boot", &[&"run", &rf_fig2])
            .env("JOSTLE_QEMU", &dying_qemu)
            .says("in 4 boots in a row")
            .lines(),
        case(27, "QEMU that exits at once", &[&"run", &rf_fig2]).env("JOSTLE_QEMU", "/bin/false"),
        case(
            27,
            "QEMU that exits at once, successfully",
            &[&"run", &rf_fig2],
        )
        .env("JOSTLE_QEMU", "/bin/true"),
        case(28, "no JOSTLE_CONFIG symbol", &[&"run", &no_config]),
        case(
            29,
            "a missing trace",
            &[&"predict", &"--trace-file", &nowhere],
        ),
        case(
            29,
            "a trace that is not UTF-8",
            &[&"predict", &"--trace-file", &not_utf8],
        ),
        case(
            29,
            "a trace of no run",
            &[&"predict", &"--trace-file", &garbage_trace],
        ),
        case(
            30,
            "a missing prediction file",
            &[
                &"run",
                &rf_fig2,
                &"--strategy",
                &"race",
                &"--target",
                &race,
                &"--prediction",
                &nowhere,
            ],
        ),
        case(
            30,
            "another firmware's prediction",
            &[
                &"run",
                &rf_fig2,
                &"--strategy",
                &"race",
                &"--target",
                &race,
                &"--prediction",
                &p1,
            ],
        ),
        case(
            31,
            "a report that is no report",
            &[&"merge", &garbage_report, &"--out", &d.join("m1")],
        ),
        case(
            31,
            "a report that is missing",
            &[&"merge", &nowhere, &"--out", &d.join("m2")],
        )
        .makes_no(&d.join("m2")),
        case(
            31,
            "a replay's report that is missing",
            &[&"replay", &rf_fig2, &"--report", &nowhere, &"--bug", &bug],
        ),
        case(
            31,
            "a replay of another firmware's report",
            &[
                &"replay",
                &rf_fig2,
                &"--report",
                &other_report,
                &"--bug",
                &other_failure,
            ],
        )
        .says("belongs to another firmware"),
        case(
            31,
            "a merge of reports of different firmware",
            &[
                &"merge",
                &d.join("report"),
                &other_report,
                &"--out",
                &d.join("m3"),
            ],
        )
        .says("is of another firmware")
        .makes_no(&d.join("m3")),
        case(
            32,
            "a replay that does not reproduce",
            &[&"replay", &rf_fig2, &"--report", &tampered, &"--bug", &bug],
        ),
        case(
            33,
            "no debug probe",
            &[&"run", &rtt, &"--probe", &"--chip", &"nRF52840_xxAA"],
        ),
        case(
            34,
            "unknown chip",
            &[&"run", &rf_fig2, &"--probe", &"--chip", &"NoSuchChip9"],
        ),
        case(
            37,
            "no RTT control block",
            &[&"run", &rf_fig2, &"--probe", &"--chip", &"nRF52840_xxAA"],
        ),
        case(
            39,
            "new: a bad name",
            &[&"new", &"bad name", &"--path", &d.join("project")],
        ),
        small_campaign(&rf_fig2, &d.join("again")),
        case(
            41,
            "campaign: nothing tested",
            &[
                &"campaign",
                &fw("step_forever"),
                &"--phase1-runs",
                &"2",
                &"--step-limit",
                &"100",
                &"--out",
                &d.join("nothing"),
            ],
        ),
        case(
            42,
            "too much output",
            &[
                &"run",
                &fw("step_forever"),
                &"--step-limit",
                &"4000000000",
                &"--max-output",
                &"100000",
            ],
        ),
        case(
            43,
            "a report directory in use",
            &[&"campaign", &rf_fig2, &"--out", &held],
        ),
        case(
            43,
            "a merge into a directory in use",
            &[&"merge", &d.join("report"), &"--out", &held],
        ),
    ];
    std::fs::create_dir_all(d.join("again")).unwrap();

    let mut failures = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for c in &cases {
        let out = c.run();
        let err = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        seen.insert(c.code);
        if out.status.code() != Some(c.code) {
            failures.push(format!(
                "{} ({}): exit {:?}, not {}: {err}",
                c.code,
                c.what,
                out.status.code(),
                c.code
            ));
        } else if err.contains("panicked") || (c.one_line && err.lines().count() != 1) {
            failures.push(format!("{} ({}): not one line: {err}", c.code, c.what));
        } else if let Some(reason) = c.says.filter(|r| !err.contains(r)) {
            failures.push(format!(
                "{} ({}): does not say `{reason}`: {err}",
                c.code, c.what
            ));
        } else if let Some(path) = c.makes_no.as_ref().filter(|p| p.exists()) {
            failures.push(format!(
                "{} ({}): made {} before refusing",
                c.code,
                c.what,
                path.display()
            ));
        }
    }

    // 130: a campaign stopped by Ctrl-C.
    let mut child = Command::new(jostle())
        .current_dir(d)
        .arg("campaign")
        .arg(&rf_fig2)
        .args([
            "-j",
            "1",
            "--runs-per-candidate",
            "100000",
            "--out",
            "stopped",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !d.join("stopped").join("report.json").exists() {
        assert!(started.elapsed() < Duration::from_secs(120), "no report");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let code = child.wait().unwrap().code();
    if code != Some(130) {
        failures.push(format!("130 (Ctrl-C): exit {code:?}"));
    }
    seen.insert(130);

    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let skipped: Vec<i32> = NOT_PROVOKABLE.iter().map(|(c, _)| *c).collect();
    for code in readme_codes() {
        assert!(
            seen.contains(&code) || skipped.contains(&code),
            "README code {code} is neither provoked nor listed as not provokable"
        );
    }
    for code in seen.iter().chain(&skipped) {
        assert!(
            readme_codes().contains(code),
            "exit {code} is not in the README's table"
        );
    }
}
