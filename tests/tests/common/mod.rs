//! Shared by the end-to-end tests: builds the firmware (QEMU and host port) and the `jostle`
//! binary once per test process. The QEMU firmware goes into a target directory of its own
//! (`target/jostle-e2e`); the host builds (the `jostle` binary, the host-port executables)
//! go into the target directory the outer `cargo test` built this test in, whose host
//! dependencies (probe-rs's tree above all) they share instead of building them again. Cargo
//! holds that directory's lock only while it builds, not while the tests run.
//!
//! Every other firmware build (other features, boards, profiles, the projects of their own,
//! inside the workspace or outside it) keeps its ELFs in a directory of its own but compiles
//! in `target/jostle-e2e` too (cargo's `build-dir`, [`firmware_cargo`], [`user_cargo`]): a
//! dependency is compiled once for all the builds that use it alike (cargo's hashes keep
//! other profiles, features, targets and rustflags apart), not once per target directory.
#![allow(dead_code)]

use jostle_host_tools::RunOutcome;
use jostle_host_tools::trace::elf::Firmware;
use jostle_host_tools::transport::hostport;
use jostle_host_tools::transport::qemu::Qemu;
use jostle_kernel::Config;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

mod processes;
#[allow(unused_imports)]
pub use processes::*;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// The firmware's target directory (QEMU builds, the projects built apart).
pub fn target_dir() -> PathBuf {
    workspace().join("target").join("jostle-e2e")
}

/// The target directory the outer `cargo test` built this test in (`CARGO_TARGET_TMPDIR`
/// is its `tmp`), where the host builds go.
pub fn host_target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn cargo(args: &[&str], target_dir: &Path) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(workspace())
        .args(args)
        .arg("--target-dir")
        .arg(target_dir)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo {args:?} failed");
}

/// `cargo` run in `dir` (the workspace or a project inside it, whose `.cargo/config.toml`
/// applies) for a firmware build whose ELFs go to the target directory the caller gives,
/// compiling in the QEMU builds' directory ([`target_dir`], cargo's `build-dir`): what the
/// build shares with the others there (the kernel, defmt, cortex-m, the proc macros…) is
/// not compiled again. Builds that name [`target_dir`] itself as their target directory
/// (`jostle run -p`, the bench scripts) compile there anyway.
pub fn firmware_cargo(dir: &Path) -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(dir)
        .env("CARGO_BUILD_BUILD_DIR", target_dir());
    cmd
}

/// Builds everything the tests run, once per test process. The host packages are built one
/// at a time: together, the examples' features (the kernel's host port) would be unified
/// into the tool's dependencies, and the tool built again beside the outer build's.
pub fn built() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        // One package at a time: built together, the test firmware's kernel features
        // (`tasks-32`) would be unified into the examples, and `jostle run -p
        // jostle-examples` (which builds the examples alone) would relink the same ELFs
        // differently while other tests read them.
        for package in ["jostle-examples", "jostle-test-firmware"] {
            cargo(
                &[
                    "build",
                    "--release",
                    "--target",
                    "thumbv7m-none-eabi",
                    "-p",
                    package,
                ],
                &target_dir(),
            );
        }
        // The tool beside this very test target (built already): with it selected, the
        // tests' dev-dependencies take part in the features as in the outer build.
        let host = host_target_dir();
        cargo(
            &[
                "build",
                "-p",
                "jostle-host-tools",
                "--bin",
                "jostle",
                "-p",
                "jostle-tests",
                "--test",
                env!("CARGO_CRATE_NAME"),
            ],
            &host,
        );
        cargo(&["build", "-p", "jostle-examples"], &host);
    });
}

/// The QEMU ELF of a binary.
pub fn elf(bin: &str) -> PathBuf {
    built();
    target_dir()
        .join("thumbv7m-none-eabi")
        .join("release")
        .join(bin)
}

/// The host-port executable of an example.
pub fn host_exe(bin: &str) -> PathBuf {
    built();
    host_target_dir().join("debug").join(bin)
}

/// The host-port build of a test firmware binary (built once per test process).
#[allow(dead_code)]
pub fn host_test_exe(bin: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| cargo(&["build", "-p", "jostle-test-firmware"], &host_target_dir()));
    host_target_dir().join("debug").join(bin)
}

/// The QEMU build of example `bin` whose defmt goes through `defmt-rtt`, the RTT up buffer
/// copied to stdout at the end (a recorded RTT stream from the real `defmt-rtt` crate; an
/// image the probe backend accepts). Only `bin` is built (each binary is a fat-LTO link of
/// its own), in a directory of its own: the feature would otherwise replace the examples'
/// binaries of the same names.
#[allow(dead_code)]
pub fn rtt_elf(bin: &str) -> PathBuf {
    let dir = target_dir().join("rtt");
    let status = firmware_cargo(&workspace())
        .args(["build", "--release", "--target", "thumbv7m-none-eabi"])
        .args(["-p", "jostle-examples", "--features", "mps2-an385-rtt"])
        .args(["--bin", bin])
        .arg("--target-dir")
        .arg(&dir)
        .status()
        .expect("cargo runs");
    assert!(status.success());
    dir.join("thumbv7m-none-eabi").join("release").join(bin)
}

/// The same run on QEMU (`q`) and on the host port (`h`) made the same decisions, to the
/// same outcome, in as many steps (`what` names the run in a failure).
pub fn assert_same_decisions(q: &RunOutcome, h: &RunOutcome, what: &str) {
    assert!(!q.decisions().is_empty(), "{what}");
    assert_eq!(q.decisions(), h.decisions(), "{what}");
    assert_eq!(q.outcome, h.outcome, "{what}");
    assert_eq!(q.steps, h.steps, "{what}");
}

/// `jostle args` run in `dir`, with `--host` added when `host` (the firmware is a host-port
/// executable).
pub fn jostle_on(dir: &Path, host: bool, args: &[&str]) -> std::process::Output {
    let mut args = args.to_vec();
    if host {
        args.push("--host");
    }
    jostle_in(dir, &args)
}

/// `jostle args` run in `dir`.
#[allow(dead_code)]
pub fn jostle_in(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(jostle())
        .current_dir(dir)
        .args(args)
        .output()
        .expect("jostle runs")
}

/// A command's exit status and output, for assertion messages.
pub fn text(out: &std::process::Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The `jostle` binary: the workspace's, or the one `JOSTLE_BIN` names (to run a test
/// against another build, e.g. the commit before a fix, and see it fail there).
pub fn jostle() -> PathBuf {
    built();
    match std::env::var_os("JOSTLE_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => host_target_dir().join("debug").join("jostle"),
    }
}

pub fn firmware(bin: &str) -> Firmware {
    Firmware::load(&elf(bin)).expect("firmware loads")
}

pub fn config(seed: u64, args: &[u32]) -> Config {
    let mut c = Config {
        seed,
        ..Config::default()
    };
    c.args.extend_from_slice(args).unwrap();
    c
}

pub fn qemu() -> Qemu {
    Qemu {
        timeout: Duration::from_secs(20),
        ..Qemu::default()
    }
}

/// [`qemu`] on the machine and CPU that `fw`'s board descriptor names.
pub fn qemu_for(fw: &Firmware) -> Qemu {
    Qemu {
        timeout: Duration::from_secs(20),
        ..Qemu::for_board(&fw.board).expect("a QEMU board")
    }
}

/// One QEMU run (on the machine `fw` names), decoded; fails the test on a stream error.
pub fn run_qemu(fw: &Firmware, config: Config) -> RunOutcome {
    let raw = qemu_for(fw).run(fw, &config).expect("qemu runs");
    let out = RunOutcome::from_qemu(fw, config, raw);
    if let Some(e) = &out.error {
        panic!("stream error: {e}");
    }
    out
}

/// One host-port run of example `bin`, parsed.
pub fn run_host(bin: &str, config: Config) -> RunOutcome {
    run_host_exe(&host_exe(bin), config)
}

/// One run of the host-port executable `exe`, parsed.
pub fn run_host_exe(exe: &Path, config: Config) -> RunOutcome {
    let raw = hostport::run(exe, &config, Duration::from_secs(20)).expect("host runs");
    let out = RunOutcome::from_host(config, raw);
    if let Some(e) = &out.error {
        panic!("host stream error: {e}");
    }
    out
}

/// The 1-based line of `needle` in a source file of the workspace.
pub fn line_of(file: &str, needle: &str) -> u32 {
    let text = std::fs::read_to_string(workspace().join(file)).unwrap();
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} not in {file}")) as u32
        + 1
}

/// A campaign's report.json, parsed.
pub fn report(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("report.json is JSON")
}

/// `jostle replay ELF --report jostle-report --bug ID` in `dir`.
pub fn replay_bug(dir: &Path, elf: &Path, id: &str) -> std::process::Output {
    replay_bug_with(dir, elf, id, &[])
}

/// [`replay_bug`] with more options (`--shrunk`).
pub fn replay_bug_with(dir: &Path, elf: &Path, id: &str, more: &[&str]) -> std::process::Output {
    let mut args = vec![
        "replay",
        elf.to_str().unwrap(),
        "--report",
        "jostle-report",
        "--bug",
        id,
    ];
    args.extend_from_slice(more);
    jostle_in(dir, &args)
}

/// A report's candidates.
pub fn bugs(r: &serde_json::Value) -> &Vec<serde_json::Value> {
    r["bugs"].as_array().expect("bugs")
}

/// The report's failures proper (not the suspected livelocks).
pub fn failures(r: &serde_json::Value) -> Vec<&serde_json::Value> {
    r["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .filter(|f| f["class"] == "failure")
        .collect()
}

/// The project of examples built on crates from crates.io (`examples/crates`: a workspace
/// of its own, as a user's firmware is, with the portable-atomic shim patched in): binary
/// `bin`, built for QEMU (`host` false) or for the host port. Built once per test process.
pub fn crate_example(bin: &str, host: bool) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let dir = target_dir().join("crates");
    let project = workspace().join("examples").join("crates");
    BUILT.get_or_init(|| {
        for target in [Some("thumbv7m-none-eabi"), None] {
            let mut cmd = firmware_cargo(&project);
            cmd.arg("build");
            match target {
                Some(t) => cmd.args(["--release", "--target", t]),
                None => cmd.arg("--bins"),
            };
            let status = cmd
                .arg("--target-dir")
                .arg(&dir)
                .status()
                .expect("cargo runs");
            assert!(status.success(), "building examples/crates failed");
        }
    });
    if host {
        dir.join("debug").join(bin)
    } else {
        dir.join("thumbv7m-none-eabi").join("release").join(bin)
    }
}

/// A test application of `tests/apps/NAME` (a project of its own, as a user's is), built
/// for QEMU once per test process: the ELF of its binary `NAME`.
#[allow(dead_code)]
pub fn test_app(name: &str) -> PathBuf {
    test_app_bin(name, name)
}

/// [`test_app`]'s binary `bin`.
pub fn test_app_bin(name: &str, bin: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let dir = target_dir().join("apps");
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if !built.iter().any(|b| b == name) {
        let status = firmware_cargo(&workspace().join("tests").join("apps").join(name))
            .args(["build", "--release", "--target", "thumbv7m-none-eabi"])
            .arg("--target-dir")
            .arg(&dir)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building tests/apps/{name} failed");
        built.push(name.to_owned());
    }
    dir.join("thumbv7m-none-eabi").join("release").join(bin)
}

/// Runs `scripts/<script>` with `args` in the tests' target directory (the outer cargo's
/// lock is not waited on) with the `jostle` these tests built (no release build of the
/// tool), checks that it exits 0, and returns its standard output.
pub fn bench_script(script: &str, args: &[&str]) -> String {
    let out = Command::new(workspace().join("scripts").join(script))
        .args(args)
        .env("CARGO_TARGET_DIR", target_dir())
        .env("JOSTLE", jostle())
        .output()
        .unwrap_or_else(|e| panic!("scripts/{script} runs: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The examples the cross-port tests run on QEMU and on the host port: locks, deadlocks,
/// atomics and interrupts, so that every kind of operation is a step on both.
pub const CROSS_PORT_EXAMPLES: &[&str] = &[
    "rf_fig2",
    "abba_deadlock",
    "rf_fig1",
    "af_fig2",
    "atomic_check_then_act",
    "spsc_publish_order",
    "irq_counter",
    "irq_nested",
    "irq_masked_ok",
];

/// `cargo` as a user runs it in `project`: the project's rust-toolchain.toml and
/// .cargo/config.toml decide, not what this test process inherited from the outer cargo;
/// `jostle` on PATH is the one these tests built (a runner line calls it by name). The
/// ELFs go where the project (or `env`'s `CARGO_TARGET_DIR`) says; what cargo compiles on
/// the way is kept in [`target_dir`] (cargo's `build-dir`), shared with the other firmware
/// builds: a project `jostle new` writes (the workspace's profile, rustflags and
/// `DEFMT_LOG`) compiles little of its own. (A hand-written app under the same profile and
/// rustflags but another `DEFMT_LOG`, which cargo's hashes do not tell apart, would rebuild
/// what the macros of defmt expanded differently: slower, never wrong.)
pub fn user_cargo(project: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new("cargo");
    cmd.args(args).current_dir(project);
    for var in [
        "RUSTUP_TOOLCHAIN",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_TARGET_DIR",
        "CARGO_BUILD_RUSTFLAGS",
        "JOSTLE_SKIP_LINK_CHECK",
        "DEFMT_LOG",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("CARGO_BUILD_BUILD_DIR", target_dir());
    let bin_dir = jostle().parent().unwrap().to_owned();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let paths = std::iter::once(bin_dir).chain(std::env::split_paths(&path));
    cmd.env("PATH", std::env::join_paths(paths).unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("cargo runs")
}

/// A temporary directory outside the workspace (so no parent Cargo.toml or
/// .cargo/config.toml of this checkout applies), named `prefix…`.
pub fn outside_dir(prefix: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(std::env::temp_dir())
        .unwrap();
    let real = dir.path().canonicalize().unwrap();
    let ws = workspace().canonicalize().unwrap();
    assert!(
        !real.starts_with(&ws),
        "{} is inside the workspace",
        real.display()
    );
    dir
}

/// The project of Embassy apps (`examples/embassy`: a workspace of its own, the executor
/// and portable-atomic stand-ins patched in): binary `bin`, built for QEMU. Every app is
/// built by one cargo call, once per test process, in a target directory of its own.
pub fn embassy_example(bin: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    project_example(&BUILT, "embassy", bin)
}

/// The project of Embassy apps on two priorities (`examples/embassy-multiprio`: an
/// `InterruptExecutor` on a line of the lm3s6965 PAC, for QEMU's lm3s6965evb): binary `bin`,
/// built as [`embassy_example`]'s.
pub fn embassy_multiprio_example(bin: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    project_example(&BUILT, "embassy-multiprio", bin)
}

/// The project of RTIC apps (`examples/rtic`: a workspace of its own, `rtic` and
/// `portable-atomic` patched to Jostle's stand-ins): binary `bin`, built for QEMU, as
/// [`embassy_example`].
pub fn rtic_example(bin: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    project_example(&BUILT, "rtic", bin)
}

/// Binary `bin` of the project `examples/<project>` (a workspace of its own), built for
/// QEMU by one cargo call the first time `built` is passed, in `<target>/<project>`.
fn project_example(built: &OnceLock<()>, project: &str, bin: &str) -> PathBuf {
    let dir = target_dir().join(project);
    built.get_or_init(|| {
        let status = firmware_cargo(&workspace().join("examples").join(project))
            .args([
                "build",
                "--release",
                "--target",
                "thumbv7m-none-eabi",
                "--target-dir",
            ])
            .arg(&dir)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building examples/{project} failed");
    });
    dir.join("thumbv7m-none-eabi").join("release").join(bin)
}

/// `jostle campaign ELF --budget BUDGET -j 2` in `dir`: a framework app's campaign.
pub fn app_campaign(dir: &Path, elf: &Path, budget: &str) -> std::process::Output {
    jostle_in(
        dir,
        &[
            "campaign",
            elf.to_str().unwrap(),
            "--budget",
            budget,
            "-j",
            "2",
        ],
    )
}

/// Each app's campaign (`elf_of(app)`, `budget` runs) exits 0 and reports no failure; its
/// wall time and runs are printed.
pub fn assert_clean_campaigns(apps: &[&str], elf_of: fn(&str) -> PathBuf, budget: &str) {
    for app in apps {
        let dir = tempfile::tempdir().unwrap();
        let started = std::time::Instant::now();
        let out = app_campaign(dir.path(), &elf_of(app), budget);
        assert_eq!(out.status.code(), Some(0), "{app}: {}", text(&out));
        let r = report(&dir.path().join("jostle-report"));
        assert!(failures(&r).is_empty(), "{app}: {r:#}");
        eprintln!(
            "{app}: campaign {:.1} s, runs {}",
            started.elapsed().as_secs_f64(),
            r["runs"]
        );
    }
}

/// The entries of a report's shrunk schedule (`shrunk.schedule`, comma-separated).
pub fn shrunk_entries(shrunk: &serde_json::Value) -> u64 {
    shrunk["schedule"]
        .as_str()
        .unwrap_or("")
        .split(',')
        .filter(|e| !e.is_empty())
        .count() as u64
}

/// An Embassy app with a lost wake-up, written as Embassy's examples are (the end-to-end
/// tests' "buttons" app, on QEMU and on the host port): a pool of two button tasks count
/// presses and notify a display task through an `AtomicWaker`; the display waits for a
/// notification, then reads the count. The notification carries no state: one sent while the
/// display is not registered is lost. Both buttons' timers expire at the same tick: Embassy
/// polls both before the display, Jostle's scheduler may not. `header` comes first (the
/// device's `#![no_std]`, `#![no_main]` and panic crate).
pub fn embassy_buttons_app(header: &str) -> String {
    format!("{header}{EMBASSY_BUTTONS}")
}

const EMBASSY_BUTTONS: &str = r#"use core::future::poll_fn;
use core::sync::atomic::{AtomicU32, Ordering};
use core::task::Poll;
use embassy_executor::Spawner;
use embassy_futures::yield_now;
use embassy_sync::waitqueue::AtomicWaker;
use embassy_time::Timer;

static PRESSES: AtomicU32 = AtomicU32::new(0);
static PRESSED: AtomicWaker = AtomicWaker::new();

#[embassy_executor::task(pool_size = 2)]
async fn button() {
    Timer::after_millis(20).await;
    PRESSES.fetch_add(1, Ordering::Relaxed);
    PRESSED.wake();
}

#[embassy_executor::task]
async fn display() {
    let mut shown = 0;
    while shown < 2 {
        let mut armed = false;
        poll_fn(|cx| {
            if armed {
                return Poll::Ready(());
            }
            PRESSED.register(cx.waker());
            armed = true;
            Poll::Pending
        })
        .await;
        shown += PRESSES.swap(0, Ordering::Relaxed);
        yield_now().await;
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(display().unwrap());
    spawner.spawn(button().unwrap());
    spawner.spawn(button().unwrap());
}
"#;
