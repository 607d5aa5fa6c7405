//! Embassy apps under Jostle, their source unchanged (`examples/embassy`, a project of its
//! own with `shims/embassy-executor` patched in): the clean apps pass every campaign; each
//! buggy app's campaign finds its bug (a panic or a lost wake-up), names the tasks after
//! their task functions, shrinks the run and replays it; an app written outside the
//! workspace builds with only the documented Cargo lines and its campaign finds the lost
//! wake-up Embassy's poll order hides.

mod common;

use common::*;
use std::path::Path;
use std::time::Instant;

/// The apps without a bug.
const CLEAN: [&str; 9] = [
    "signal_handoff",
    "channel_pipeline",
    "mutex_state_machine",
    "watch_config",
    "pubsub_events",
    "ticker_heartbeat",
    "select_timeout",
    "spawn_from_task",
    "task_pool",
];

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

fn campaign(app: &str, dir: &Path) -> std::process::Output {
    app_campaign(dir, &embassy_example(app), BUDGET)
}

#[test]
fn clean_embassy_apps_pass_their_campaigns() {
    assert_clean_campaigns(&CLEAN, embassy_example, BUDGET);
}

#[test]
fn buggy_embassy_apps_are_found_named_shrunk_and_replayed() {
    for (app, verdict, words, line, task) in BUGGY {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let out = campaign(app, dir.path());
        assert_eq!(out.status.code(), Some(40), "{app}: {}", text(&out));
        let r = report(&dir.path().join("jostle-report"));
        let found = failures(&r);
        let f = found
            .iter()
            .find(|f| f["verdict"] == verdict)
            .unwrap_or_else(|| panic!("{app}: no {verdict}: {r:#}"));
        assert!(
            f["example"].as_str().unwrap().contains(words),
            "{app}: {f:#}"
        );
        let file = format!("src/bin/{app}.rs");
        let at = format!(
            "{file}:{}:",
            line_of(&format!("examples/embassy/{file}"), line)
        );
        assert!(
            f["site"].as_str().unwrap().contains(&at),
            "{app}: {at} in {f:#}"
        );
        assert!(f["shrunk"].is_object(), "{app}: not shrunk: {f:#}");
        let id = f["id"].as_str().unwrap();
        let elf = embassy_example(app);
        for shrunk in [false, true] {
            let more: &[&str] = if shrunk { &["--shrunk"] } else { &[] };
            let out = replay_bug_with(dir.path(), &elf, id, more);
            let shown = String::from_utf8_lossy(&out.stdout);
            assert!(
                shown.contains(&format!("reproduced: {verdict} {id}")),
                "{app} (shrunk: {shrunk}): {}",
                text(&out)
            );
            // The lanes are the tasks, by the names of their task functions.
            assert!(
                shown
                    .lines()
                    .any(|l| l.split_whitespace().nth(1) == Some(task)),
                "{app}: no step of {task}: {shown}"
            );
        }
        eprintln!(
            "{app}: campaign {:.1} s, runs {}, {verdict} {}",
            started.elapsed().as_secs_f64(),
            r["runs"],
            f["example"]
        );
    }
}

/// An app written as Embassy's examples are, outside this workspace: a button task and a
/// display task share a "pressed" count and an `AtomicWaker`; the display waits for a
/// notification, then reads the count. Both buttons' debounce timers expire at the same
/// tick: Embassy polls both before the display, Jostle's scheduler may not.
const USER_APP: &str = r#"#![no_std]
#![no_main]

use core::future::poll_fn;
use core::sync::atomic::{AtomicU32, Ordering};
use core::task::Poll;
use embassy_executor::Spawner;
use embassy_futures::yield_now;
use embassy_sync::waitqueue::AtomicWaker;
use embassy_time::Timer;
use panic_semihosting as _;

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

#[test]
fn an_embassy_app_outside_the_workspace_builds_with_the_documented_lines_and_its_lost_wake_up_is_found()
 {
    let tmp = outside_dir("jostle-embassy-");
    let project = tmp.path().join("buttons");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(project.join(".cargo")).unwrap();
    let ws = workspace();
    let manifest = format!(
        r#"[package]
name = "buttons"
version = "0.1.0"
edition = "2024"

[dependencies]
embassy-executor = {{ version = "0.10", features = ["platform-cortex-m", "executor-thread"] }}
embassy-sync = "0.8"
embassy-time = {{ version = "0.5", features = ["tick-hz-32_768"] }}
embassy-futures = "0.1"
cortex-m = "0.7"
cortex-m-rt = "0.7"
cortex-m-semihosting = "0.5"
panic-semihosting = {{ version = "0.7", features = ["exit"] }}

[patch.crates-io]
embassy-executor = {{ path = "{}" }}
portable-atomic = {{ path = "{}" }}
panic-semihosting = {{ path = "{}" }}

[profile.release]
debug = true
"#,
        ws.join("shims/embassy-executor").display(),
        ws.join("shims/portable-atomic").display(),
        ws.join("shims/panic-semihosting").display()
    );
    std::fs::write(project.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(
        project.join(".cargo/config.toml"),
        r#"[build]
target = "thumbv7m-none-eabi"

[target.thumbv7m-none-eabi]
rustflags = ["-C", "link-arg=-Tlink.x", "-C", "link-arg=-Tdefmt.x", "-C", "link-arg=--nmagic"]
runner = "jostle campaign"
"#,
    )
    .unwrap();
    std::fs::write(project.join("src/main.rs"), USER_APP).unwrap();
    std::fs::copy(
        ws.join("rust-toolchain.toml"),
        project.join("rust-toolchain.toml"),
    )
    .unwrap();

    let started = Instant::now();
    let target = outside_target();
    let run = user_cargo(
        &project,
        &["run", "--release", "--", "--budget", BUDGET, "-j", "2"],
        &[("CARGO_TARGET_DIR", target.to_str().unwrap())],
    );
    assert_eq!(run.status.code(), Some(40), "{}", text(&run));
    let stdout = String::from_utf8_lossy(&run.stdout);
    let register = USER_APP
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
