//! Embassy apps under Jostle, their source unchanged (`examples/embassy`, a project of its
//! own with `shims/embassy-executor` patched in): the clean apps pass every campaign; each
//! buggy app's campaign finds its bug (a panic or a lost wake-up), names the tasks after
//! their task functions, shrinks the run and replays it; an app written outside the
//! workspace builds with only the documented Cargo lines and its campaign finds the lost
//! wake-up Embassy's poll order hides.

use crate::common;

use common::*;
use std::path::Path;
use std::time::Instant;

/// The apps without a bug. `mutex_held_across_timer`'s two waiters wake each other while
/// the holder sleeps on a timer: time must pass while they poll (`sched::spin`), or every
/// run ends at the step limit.
const CLEAN: [&str; 10] = [
    "signal_handoff",
    "mutex_held_across_timer",
    "channel_pipeline",
    "mutex_state_machine",
    "watch_config",
    "pubsub_events",
    "ticker_heartbeat",
    "select_timeout",
    "spawn_from_task",
    "task_pool",
];

/// Clean apps on embassy-sync's raw mutexes for one executor: `ThreadModeRawMutex` (checks
/// it runs in thread mode: Jostle's tasks do) and `NoopRawMutex` (no lock at all: a
/// scheduling point inside its section, a wake, switches to no task that could enter it,
/// since an executor's polls never interleave).
const RAW_MUTEX_APPS: [&str; 2] = ["thread_mode_mutex", "noop_mutex_join"];

/// The apps with a bug: (app, verdict, words of the finding, the line it points at, a task
/// name the replay shows).
const BUGGY: [(&str, &str, &str, &str, &str); 4] = [
    (
        "mutex_check_then_act",
        "panic",
        "overdrawn",
        "assert!(",
        "payment[1]",
    ),
    (
        "timeout_race",
        "panic",
        "got a stale reading",
        "Ok(reading) => assert_eq!",
        "controller",
    ),
    (
        "lost_notification",
        "lost_wake",
        "lost wake-up: task protocol waits at src/bin/lost_notification.rs:",
        "FRAME_READY.register(cx.waker());",
        "radio[1]",
    ),
    (
        "signal_reset_hang",
        "lost_wake",
        "lost wake-up: task processor waits at src/bin/signal_reset_hang.rs:",
        "let command = COMMAND.wait().await;",
        "supervisor",
    ),
];

/// Runs of each campaign: Phase I, the candidates' runs, then search. An Embassy app's
/// shared state lives in embassy-sync's primitives, whose data is not instrumented, so few
/// bugs are predicted: search is what finds most of them.
const BUDGET: &str = "300";

/// The target directory the projects written outside the workspace share (their
/// dependencies are the same: built once).
fn outside_target() -> std::path::PathBuf {
    target_dir().join("embassy-outside")
}

/// Builds `project` (written outside the workspace) as its user would, into the shared
/// outside target directory: its binary `bin`.
fn build_outside(project: &Path, bin: &str) -> std::path::PathBuf {
    let target = outside_target();
    let build = user_cargo(
        project,
        &["build", "--release"],
        &[("CARGO_TARGET_DIR", target.to_str().unwrap())],
    );
    assert!(build.status.success(), "{}", text(&build));
    target.join("thumbv7m-none-eabi/release").join(bin)
}

fn campaign(elf: &Path, dir: &Path) -> std::process::Output {
    app_campaign(dir, elf, BUDGET)
}

/// Runs the campaign of app `app` (ELF `elf`, source in `examples/<project>`), checks that it
/// finds `verdict` with `words` in its message at the line holding `line`, shrinks it and
/// replays it, whole and shrunk, with a lane named `task`; returns the report and the two
/// replays' interleavings.
fn found_shrunk_and_replayed(
    elf: &Path,
    project: &str,
    app: &str,
    finding: (&str, &str, &str, &str),
) -> (serde_json::Value, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let file = format!("src/bin/{app}.rs");
    let source = workspace().join(format!("examples/{project}/{file}"));
    let out = campaign(elf, dir.path());
    found_in_report(dir.path(), &out, elf, (&source, &file), app, finding)
}

/// The access-atomicity candidate of report `r` at the lines of `source` (named `file` in
/// the report) holding `check`, `write` and `act` (a check-then-act across an `.await`, the
/// accesses inside async-mutex guards) was made real and harmful: the confirmed bug names
/// the guards' lines (before, a task held at its act was inside its poll, holding the
/// executor, and no run made the triple real).
fn triple_made_real(r: &serde_json::Value, (source, file): (&Path, &str), lines: [&str; 3]) {
    let at = |text: &str| format!("{file}:{}:", line_of(source.to_str().unwrap(), text));
    let [check, write, act] = lines.map(at);
    let sites = |b: &serde_json::Value| b["sites"].to_string();
    let triple = bugs(r)
        .iter()
        .find(|b| b["kind"] == "access_atomicity" && sites(b).contains(&check))
        .unwrap_or_else(|| panic!("nothing predicted at the check {check}: {r:#}"));
    assert!(
        sites(triple).contains(&write) && sites(triple).contains(&act),
        "{triple:#}"
    );
    assert!(
        triple["confirmed"].as_u64() > Some(0) && triple["harmful"].as_u64() > Some(0),
        "the triple at the guards' lines was not made real: {triple:#}"
    );
}

/// The campaign's output `out` in `dir` (of app `app`, ELF `elf`, its source `file` as the
/// report names it, at `source` on disk): exit 40 with `verdict`, `words` in its message, at
/// the line holding `line`, shrunk and replayed whole and shrunk with a lane named `task`.
/// Returns the report and the two replays' interleavings.
fn found_in_report(
    dir: &Path,
    out: &std::process::Output,
    elf: &Path,
    (source, file): (&Path, &str),
    app: &str,
    (verdict, words, line, task): (&str, &str, &str, &str),
) -> (serde_json::Value, Vec<String>) {
    let started = Instant::now();
    assert_eq!(out.status.code(), Some(40), "{app}: {}", text(out));
    let r = report(&dir.join("jostle-report"));
    let found = failures(&r);
    let f = found
        .iter()
        .find(|f| f["verdict"] == verdict)
        .unwrap_or_else(|| panic!("{app}: no {verdict}: {r:#}"));
    assert!(
        f["example"].as_str().unwrap().contains(words),
        "{app}: {f:#}"
    );
    let at = format!("{file}:{}:", line_of(source.to_str().unwrap(), line));
    assert!(
        f["site"].as_str().unwrap().contains(&at),
        "{app}: {at} in {f:#}"
    );
    assert!(f["shrunk"].is_object(), "{app}: not shrunk: {f:#}");
    let id = f["id"].as_str().unwrap();
    let mut shown = Vec::new();
    for shrunk in [false, true] {
        let more: &[&str] = if shrunk { &["--shrunk"] } else { &[] };
        let out = replay_bug_with(dir, elf, id, more);
        let replay = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            replay.contains(&format!("reproduced: {verdict} {id}")),
            "{app} (shrunk: {shrunk}): {}",
            text(&out)
        );
        // The lanes are the tasks, by the names of their task functions.
        assert!(
            replay
                .lines()
                .any(|l| l.split_whitespace().nth(1) == Some(task)),
            "{app}: no step of {task}: {replay}"
        );
        shown.push(replay);
    }
    eprintln!(
        "{app}: replays {:.1} s, runs {}, {verdict} {}",
        started.elapsed().as_secs_f64(),
        r["runs"],
        f["example"]
    );
    (r, shown)
}

#[test]
fn clean_embassy_apps_pass_their_campaigns() {
    assert_clean_campaigns(&CLEAN, embassy_example, BUDGET);
}

#[test]
fn apps_on_thread_mode_and_noop_raw_mutexes_pass_their_campaigns() {
    assert_clean_campaigns(&RAW_MUTEX_APPS, embassy_example, BUDGET);
}

#[test]
fn buggy_embassy_apps_are_found_named_shrunk_and_replayed() {
    for (app, verdict, words, line, task) in BUGGY {
        let (r, _) = found_shrunk_and_replayed(
            &embassy_example(app),
            "embassy",
            app,
            (verdict, words, line, task),
        );
        if app == "mutex_check_then_act" {
            let file = format!("src/bin/{app}.rs");
            let source = workspace().join(format!("examples/embassy/{file}"));
            let lines = [">= amount;", "*balance -= amount;", "*balance >= amount,"];
            triple_made_real(&r, (&source, &file), lines);
        }
    }
}

/// The buttons app ([`embassy_buttons_app`]) as a QEMU app: no_std, its own panic crate.
fn user_app() -> String {
    embassy_buttons_app("#![no_std]\n#![no_main]\n\nuse panic_semihosting as _;\n\n")
}

#[test]
fn an_embassy_app_outside_the_workspace_builds_with_the_documented_lines_and_its_lost_wake_up_is_found()
 {
    let tmp = outside_dir("jostle-embassy-");
    let project = tmp.path().join("buttons");
    write_outside_app(
        &project,
        &embassy_dependencies(&jostle_embassy_sync_line()),
        &["embassy-executor", "portable-atomic", "panic-semihosting"],
        "\nrunner = \"jostle campaign\"",
        &user_app(),
    );

    let started = Instant::now();
    let target = outside_target();
    let run = user_cargo(
        &project,
        &["run", "--release", "--", "--budget", BUDGET, "-j", "2"],
        &[("CARGO_TARGET_DIR", target.to_str().unwrap())],
    );
    assert_eq!(run.status.code(), Some(40), "{}", text(&run));
    let stdout = String::from_utf8_lossy(&run.stdout);
    let register = user_app()
        .lines()
        .position(|l| l.contains("PRESSED.register"))
        .unwrap()
        + 1;
    let words = format!("lost wake-up: task display waits at src/main.rs:{register}:");
    assert!(stdout.contains(&words), "{words}: {}", text(&run));
    eprintln!(
        "outside app: build and campaign {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// An account app written as Embassy's examples are, outside the workspace: a card payment
/// checks the balance under the async mutex, yields while the terminal asks for the PIN, and
/// debits under a second guard; a savings sweep moves half of the balance away under one
/// guard. Embassy's executor never shows the overdraft: it polls the tasks woken during a
/// pass of its run queue in the next pass, the most recently woken first (embassy-executor
/// 0.10, `raw/run_queue.rs`), so after the payment's check and the sweep's first yield the
/// payment debits before the sweep runs. A sweep between the check and the debit overdraws.
const ACCOUNT_APP: &str = r#"#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_futures::yield_now;
use embassy_sync::blocking_mutex::raw::ThreadModeRawMutex;
use embassy_sync::mutex::Mutex;
use panic_semihosting as _;

static BALANCE: Mutex<ThreadModeRawMutex, u32> = Mutex::new(100);

#[embassy_executor::task]
async fn card_payment() {
    let enough = *BALANCE.lock().await >= 60;
    if enough {
        // The terminal asks for the PIN.
        yield_now().await;
        let mut balance = BALANCE.lock().await;
        assert!(*balance >= 60, "overdrawn: {} left for a payment of 60", *balance);
        *balance -= 60;
    }
}

#[embassy_executor::task]
async fn savings_sweep() {
    yield_now().await;
    let mut balance = BALANCE.lock().await;
    let half = *balance / 2;
    *balance -= half;
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(card_payment().unwrap());
    spawner.spawn(savings_sweep().unwrap());
}
"#;

/// The documented dependency lines of an Embassy app under Jostle, with `sync` its
/// embassy-sync line.
fn embassy_dependencies(sync: &str) -> String {
    format!(
        r#"embassy-executor = {{ version = "0.10", features = ["platform-cortex-m", "executor-thread"] }}
{sync}
embassy-time = {{ version = "0.5", features = ["tick-hz-32_768"] }}
embassy-futures = "0.1"
cortex-m = "0.7"
cortex-m-rt = "0.7"
cortex-m-semihosting = "0.5"
panic-semihosting = {{ version = "0.7", features = ["exit"] }}"#
    )
}

/// Jostle's embassy-sync line (the renamed dependency that replaces the app's own).
fn jostle_embassy_sync_line() -> String {
    format!(
        "embassy-sync = {{ package = \"jostle-embassy-sync\", path = \"{}\" }}",
        workspace().join("shims/embassy-sync").display()
    )
}

/// The account app ([`ACCOUNT_APP`]) written outside the workspace with the documented lines,
/// Jostle's embassy-sync among them: its campaign (no budget: Phase I and the candidates'
/// runs) predicts the check-then-act across the `.await` from the accesses inside the
/// async mutex's guards and makes it real, a failing run with the lanes named after the
/// tasks, shrunk and replayed. With the app's own embassy-sync line (`JOSTLE_TEST_REAL_SYNC=1`,
/// to see this test fail) nothing inside the guards is an event, and nothing is predicted.
#[test]
fn an_embassy_app_outside_the_workspace_has_its_async_mutex_check_then_act_predicted_and_confirmed()
{
    let tmp = outside_dir("jostle-embassy-sync-");
    let project = tmp.path().join("account");
    let sync = match std::env::var_os("JOSTLE_TEST_REAL_SYNC") {
        Some(_) => "embassy-sync = \"0.8\"".to_owned(),
        None => jostle_embassy_sync_line(),
    };
    write_outside_app(
        &project,
        &embassy_dependencies(&sync),
        &["embassy-executor", "portable-atomic", "panic-semihosting"],
        "",
        ACCOUNT_APP,
    );
    let elf = build_outside(&project, "account");
    let out = jostle_in(tmp.path(), &["campaign", elf.to_str().unwrap(), "-j", "2"]);
    let source = project.join("src/main.rs");
    let (r, _) = found_in_report(
        tmp.path(),
        &out,
        &elf,
        (&source, "src/main.rs"),
        "account",
        (
            "panic",
            "overdrawn: 50 left for a payment of 60",
            "assert!(",
            "savings_sweep",
        ),
    );
    // Predicted from the guards' accesses: the check's read, the sweep's write, the debit's
    // read; and made real at those lines, the payment paused between its two polls until
    // the sweep's write landed.
    let lines = [">= 60;", "-= half;", "assert!("];
    triple_made_real(&r, (&source, "src/main.rs"), lines);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout.lines().filter(|l| l.starts_with("predicted "));
    eprintln!("account: {}", summary.collect::<String>());
}

/// A guard of an async mutex held across an `.await` (`mutex_held_across_timer`'s
/// calibrator) with other tasks' polls locking the mutex is no deadlock candidate: an
/// acquire inside a poll never waits (the executor's lock has a class of its own, which
/// iGoodlock knows). Before, two lock-order cycles with the executor's lock were predicted
/// and cost Phase II 100 runs that never made them real. The guards' accesses are still
/// predicted.
#[test]
fn a_guard_held_across_an_await_is_no_deadlock_candidate() {
    let elf = embassy_example("mutex_held_across_timer");
    let dir = tempfile::tempdir().unwrap();
    let out = jostle_in(dir.path(), &["predict", elf.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let prediction: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kinds: Vec<&str> = prediction["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert!(!kinds.contains(&"deadlock"), "{kinds:?}");
    assert!(kinds.contains(&"access_atomicity"), "{kinds:?}");
}

#[test]
fn jostle_new_embassy_writes_an_app_whose_campaign_finds_its_bug() {
    let tmp = outside_dir("jostle-new-embassy-");
    let project = tmp.path().join("sensor-hub");
    let out = jostle_in(
        tmp.path(),
        &[
            "new",
            "sensor_hub",
            "--embassy",
            "--path",
            project.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    let shim = workspace().join("shims/embassy-executor");
    assert!(
        manifest.contains(&format!(
            "embassy-executor = {{ path = \"{}\" }}",
            shim.display()
        )),
        "{manifest}"
    );
    assert!(manifest.contains(&jostle_embassy_sync_line()), "{manifest}");
    let target = outside_target();
    let run = user_cargo(
        &project,
        &["run", "--release", "--", "--budget", BUDGET, "-j", "2"],
        &[("CARGO_TARGET_DIR", target.to_str().unwrap())],
    );
    assert_eq!(run.status.code(), Some(40), "{}", text(&run));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("sensor 2 got sensor 1's reading"),
        "{}",
        text(&run)
    );
}

/// The interrupt executor's task preempts a thread-mode task inside its poll, at the wake
/// that pends its line: the uploader's steps come between the barometer's, and it uploads
/// the pressure the barometer has not corrected yet. Without the preemption (the line
/// polled after the waking poll, as one thread-mode executor would) the app has no bug.
#[test]
fn an_interrupt_executor_preempts_a_thread_mode_poll_and_its_bug_is_found() {
    let app = "calibration_preempted";
    let (_, shown) = found_shrunk_and_replayed(
        &embassy_multiprio_example(app),
        "embassy-multiprio",
        app,
        (
            "panic",
            "uploaded an uncalibrated pressure",
            "assert_eq!(",
            "uploader",
        ),
    );
    for shown in &shown {
        // The lanes: the interrupt executor's task by its function's name, its line by the
        // executor's static; the uploader's first step comes inside the barometer's poll
        // (after the barometer took the executor's lock, before it released it).
        let steps: Vec<(&str, &str)> = shown
            .lines()
            .filter_map(|l| {
                let mut words = l.split_whitespace();
                let _step = words.next()?;
                let lane = words.next()?;
                Some((lane, l))
            })
            .collect();
        let first_upload = steps
            .iter()
            .position(|&(lane, _)| lane == "uploader")
            .unwrap_or_else(|| panic!("no step of uploader: {shown}"));
        assert!(
            steps.iter().any(|&(lane, _)| lane == "UPLOADS"),
            "the line's context is not named after the executor: {shown}"
        );
        let barometer: Vec<&str> = steps[..first_upload]
            .iter()
            .filter(|&&(lane, _)| lane == "barometer")
            .map(|&(_, l)| l)
            .collect();
        let in_poll = barometer
            .iter()
            .rev()
            .find(|l| l.contains("acquire lock") || l.contains("release lock"))
            .is_some_and(|l| l.contains("acquire lock"));
        assert!(
            in_poll,
            "the uploader did not preempt the barometer's poll: {shown}"
        );
    }
}

/// A task of an interrupt executor that waits for a wake nothing sends is a lost wake-up,
/// named after the task and pointing at its `.await` (from the return addresses on the main
/// stack, which its handler polls it on).
#[test]
fn an_interrupt_executor_task_never_woken_is_a_lost_wake_up() {
    let app = "lost_command";
    found_shrunk_and_replayed(
        &embassy_multiprio_example(app),
        "embassy-multiprio",
        app,
        (
            "lost_wake",
            "lost wake-up: task motor waits at src/bin/lost_command.rs:",
            "let speed = COMMAND.wait().await;",
            "motor",
        ),
    );
}

/// A control loop on an interrupt executor (a `Ticker` on its line: its timers request the
/// line) feeding thread-mode tasks through a `Channel` passes every campaign; its executor is
/// started from the running `main` task.
#[test]
fn an_interrupt_executor_with_timers_passes_its_campaign() {
    assert_clean_campaigns(&["control_loop"], embassy_multiprio_example, BUDGET);
}

/// An Embassy app that did not get Jostle's executor (cargo leaves a `[patch]` for another
/// version unused and builds the real one; here the patch line is left out, which makes the
/// same ELF): `jostle campaign` refuses it with one line and exit 28, instead of reading
/// the ELF as a firmware of its own without defmt data.
#[test]
fn an_embassy_app_built_with_the_real_executor_is_refused_with_one_line() {
    let tmp = outside_dir("jostle-real-embassy-");
    let project = tmp.path().join("blinky");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(project.join(".cargo")).unwrap();
    std::fs::write(
        project.join("Cargo.toml"),
        r#"[package]
name = "blinky"
version = "0.1.0"
edition = "2024"

[dependencies]
embassy-executor = { version = "0.10", features = ["platform-cortex-m", "executor-thread"] }
cortex-m = { version = "0.7", features = ["critical-section-single-core"] }
cortex-m-rt = "0.7"
lm3s6965 = "0.2"
panic-halt = "1"

[profile.release]
debug = true
"#,
    )
    .unwrap();
    std::fs::write(
        project.join(".cargo/config.toml"),
        r#"[build]
target = "thumbv7m-none-eabi"

[target.thumbv7m-none-eabi]
rustflags = ["-C", "link-arg=-Tlink.x"]
"#,
    )
    .unwrap();
    std::fs::write(
        project.join("src/main.rs"),
        r#"#![no_std]
#![no_main]

use embassy_executor::Spawner;
use lm3s6965 as _;
use panic_halt as _;

#[embassy_executor::task]
async fn blink() {}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(blink().unwrap());
}
"#,
    )
    .unwrap();
    std::fs::copy(
        workspace().join("rust-toolchain.toml"),
        project.join("rust-toolchain.toml"),
    )
    .unwrap();
    let elf = build_outside(&project, "blinky");
    let out = jostle_in(
        tmp.path(),
        &["campaign", elf.to_str().unwrap(), "--budget", "4"],
    );
    assert_eq!(out.status.code(), Some(28), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].contains("built with the real embassy-executor, not Jostle's"),
        "{stderr}"
    );
}

/// An Embassy app with Jostle's embassy-sync whose embassy-executor patch goes unused (here
/// left out: cargo builds the real executor, as for a patch of another version): its build
/// stops with one line naming the executor's stand-in and the versions it serves, instead of
/// linking an ELF Jostle could only refuse when its campaign starts.
#[test]
fn an_embassy_app_whose_executor_patch_goes_unused_fails_to_build_with_one_line() {
    let tmp = outside_dir("jostle-embassy-unpatched-");
    let project = tmp.path().join("unpatched");
    write_outside_app(
        &project,
        &embassy_dependencies(&jostle_embassy_sync_line()),
        &["portable-atomic", "panic-semihosting"],
        "",
        ACCOUNT_APP,
    );
    let target = outside_target();
    let build = user_cargo(
        &project,
        &["build", "--release"],
        &[("CARGO_TARGET_DIR", target.to_str().unwrap())],
    );
    assert!(!build.status.success(), "{}", text(&build));
    let stderr = String::from_utf8_lossy(&build.stderr);
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error: ") && !l.starts_with("error: could not compile"))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("Jostle's embassy-executor is not in this build")
            && errors[0].contains("embassy-executor 0.10"),
        "{stderr}"
    );
}

/// An app with panic-halt, whose patch line makes it Jostle's (`shims/panic-halt`): a panic
/// is reported with its site and message (the app's own panic-halt would only spin, and the
/// host could say no more than where the CPU spins).
#[test]
fn an_app_with_panic_halt_patched_reports_its_panics_site_and_message() {
    let tmp = outside_dir("jostle-embassy-halt-");
    let project = tmp.path().join("halting");
    let app = r#"#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_time::Timer;
use panic_halt as _;

#[embassy_executor::task]
async fn sensor(reading: u32) {
    Timer::after_millis(5).await;
    if reading > 5 {
        panic!("sensor reading {} out of range", reading);
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(sensor(7).unwrap());
}
"#;
    write_outside_app(
        &project,
        r#"embassy-executor = { version = "0.10", features = ["platform-cortex-m", "executor-thread"] }
embassy-time = { version = "0.5", features = ["tick-hz-32_768"] }
cortex-m = "0.7"
cortex-m-rt = "0.7"
panic-halt = "1""#,
        &["embassy-executor", "portable-atomic", "panic-halt"],
        "",
        app,
    );
    let elf = build_outside(&project, "halting");
    let out = jostle_in(
        tmp.path(),
        &["campaign", elf.to_str().unwrap(), "--budget", "20"],
    );
    assert_eq!(out.status.code(), Some(40), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = app.lines().position(|l| l.contains("panic!(")).unwrap() + 1;
    assert!(
        stdout.contains(&format!("out of range at src/main.rs:{line}:")),
        "{}",
        text(&out)
    );
    assert!(!stdout.contains("spins silently"), "{}", text(&out));
}

/// Writes an app outside the workspace as a user's is, with only the documented lines:
/// `dependencies`, a patch line for each of the workspace's `shims`, the thumbv7m build
/// (`runner`: the runner line, or none) and `main` as `src/main.rs`.
fn write_outside_app(project: &Path, dependencies: &str, shims: &[&str], runner: &str, main: &str) {
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(project.join(".cargo")).unwrap();
    let ws = workspace();
    let name = project.file_name().unwrap().to_str().unwrap();
    let patches: String = shims
        .iter()
        .map(|shim| {
            format!(
                "{shim} = {{ path = \"{}\" }}\n",
                ws.join("shims").join(shim).display()
            )
        })
        .collect();
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [dependencies]\n{dependencies}\n\n[patch.crates-io]\n{patches}\n\
         [profile.release]\ndebug = true\n"
    );
    std::fs::write(project.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(
        project.join(".cargo/config.toml"),
        format!(
            "[build]\ntarget = \"thumbv7m-none-eabi\"\n\n[target.thumbv7m-none-eabi]\n\
             rustflags = [\"-C\", \"link-arg=-Tlink.x\", \"-C\", \"link-arg=-Tdefmt.x\", \"-C\", \"link-arg=--nmagic\"]{runner}\n"
        ),
    )
    .unwrap();
    std::fs::write(project.join("src/main.rs"), main).unwrap();
    std::fs::copy(
        ws.join("rust-toolchain.toml"),
        project.join("rust-toolchain.toml"),
    )
    .unwrap();
}
