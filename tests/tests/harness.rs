//! Cargo drives Jostle as it drives any embedded test runner: `cargo run` on an example runs a
//! campaign and prints its table (the runner in `.cargo/config.toml`), and `cargo test` on a
//! firmware of `jostle::tests!` runs each test as a campaign and prints libtest's lines.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `cargo args` in the workspace as a user runs it there, into the tests' target directory,
/// with the runner calling the `jostle` these tests built (`JOSTLE`, read by
/// scripts/jostle-runner) rather than building a release one.
fn cargo(args: &[&str]) -> Output {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(workspace()).args(args);
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_RUSTFLAGS",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("CARGO_TARGET_DIR", target_dir())
        .env("JOSTLE", jostle());
    cmd.output().expect("cargo runs")
}

fn report_of(dir: &Path) -> serde_json::Value {
    let json = std::fs::read_to_string(dir.join("report.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    serde_json::from_str(&json).unwrap()
}

const SUITE: &[&str] = &[
    "test",
    "--target",
    "thumbv7m-none-eabi",
    "-p",
    "jostle-test-suite",
];

#[test]
fn cargo_run_on_an_example_runs_a_campaign_and_prints_its_table() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report");
    let out = cargo(&[
        "run",
        "--release",
        "--target",
        "thumbv7m-none-eabi",
        "-p",
        "jostle-examples",
        "--bin",
        "rf_fig1",
        "--",
        "--out",
        report.to_str().unwrap(),
    ]);
    let all = text(&out);
    // The campaign's verdict is cargo's exit code: rf_fig1's ERROR1 is harmful.
    assert_eq!(out.status.code(), Some(40), "{all}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .next()
            .is_some_and(|l| l.starts_with("kind ")),
        "the table comes first: {all}"
    );
    assert!(
        stdout.contains("rf_fig1.rs:22:9"),
        "ERROR1's failure: {all}"
    );
    assert!(
        report_of(&report)["failures"]
            .as_array()
            .is_some_and(|f| !f.is_empty()),
        "{all}"
    );
}

#[test]
fn cargo_test_runs_each_declared_test_as_a_campaign() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report");
    let report_arg = report.to_str().unwrap();
    let mut args = SUITE.to_vec();
    args.extend(["--", "--out", report_arg]);
    let out = cargo(&args);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in [
        "running 3 tests",
        "test counter_under_a_lock_is_exact ... ok",
        "test unlocked_read_modify_write_loses_an_update - should find ... ok",
        "test opposite_lock_orders_deadlock - should find ... ok",
    ] {
        assert!(stdout.lines().any(|l| l == line), "no `{line}`: {all}");
    }
    assert!(
        stdout.contains(
            "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out;"
        ),
        "{all}"
    );
    // Each test is its own campaign, selected per run: the lost update fails its
    // assertion, the lock orders deadlock, the counter never fails.
    let verdicts = |test: &str| -> Vec<String> {
        report_of(&report.join(test))["failures"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["class"] == "failure")
            .map(|f| f["verdict"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        verdicts("unlocked_read_modify_write_loses_an_update"),
        ["panic"],
        "{all}"
    );
    assert_eq!(
        verdicts("opposite_lock_orders_deadlock"),
        ["deadlock"],
        "{all}"
    );
    assert!(
        verdicts("counter_under_a_lock_is_exact").is_empty(),
        "{all}"
    );
    let replay =
        report_of(&report.join("opposite_lock_orders_deadlock"))["failures"][0]["first"]["command"]
            .as_str()
            .unwrap()
            .to_owned();
    assert!(
        replay.contains("--test opposite_lock_orders_deadlock"),
        "the replay selects the test: {replay}"
    );

    // libtest's filters and --list.
    let mut args = SUITE.to_vec();
    args.extend(["--", "--list"]);
    let out = cargo(&args);
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        listed.lines().collect::<Vec<_>>(),
        [
            "counter_under_a_lock_is_exact: test",
            "unlocked_read_modify_write_loses_an_update: test",
            "opposite_lock_orders_deadlock: test",
        ],
        "{}",
        text(&out)
    );
    let mut args = SUITE.to_vec();
    // Campaign options first: everything from the first filter on is libtest's.
    args.extend(["--", "--out", report_arg, "deadlock"]);
    let out = cargo(&args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        stdout.contains(
            "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 2 filtered out;"
        ),
        "{}",
        text(&out)
    );

    // The test binary is a firmware like any other: `--test NAME` runs one of its tests.
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let elf: PathBuf = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("Running tests/concurrency.rs ("))
        .and_then(|l| l.strip_suffix(')'))
        .map(|p| workspace().join(p))
        .unwrap_or_else(|| panic!("no test binary in {stderr}"));
    let elf = elf.to_str().unwrap();
    let run = jostle_in(
        dir.path(),
        &[
            "run",
            elf,
            "--test",
            "counter_under_a_lock_is_exact",
            "--trace",
            "results",
        ],
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let unknown = jostle_in(dir.path(), &["run", elf, "--test", "nope"]);
    let said = String::from_utf8_lossy(&unknown.stderr).into_owned();
    assert_eq!(unknown.status.code(), Some(2), "{said}");
    assert!(
        said.contains("no such test") && said.contains("opposite_lock_orders_deadlock"),
        "{said}"
    );
    // A plain firmware takes no libtest arguments.
    let plain = jostle_in(
        dir.path(),
        &["campaign", elf_path("rf_fig1").as_str(), "--exact"],
    );
    assert_eq!(plain.status.code(), Some(2), "{}", text(&plain));
}

fn elf_path(bin: &str) -> String {
    elf(bin).to_str().unwrap().to_owned()
}
