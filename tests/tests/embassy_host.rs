//! Embassy apps on the host port: an app of Embassy's `platform-std` shape (a `fn main` that
//! runs the executor, no board), written outside the workspace and built with only the
//! documented lines, runs as a host-port process: its campaign finds the lost wake-up
//! Embassy's poll order hides, names the task and the line it waits at, shrinks the run and
//! replays it; the same app with the fix passes.

use crate::common;

use common::*;
use std::path::Path;

/// The buttons app ([`embassy_buttons_app`]), as a host program.
fn lost_app() -> String {
    embassy_buttons_app("")
}

/// The fix: the presses are counted in a `Signal`'s state, which a press sent while the
/// display is busy keeps.
const FIXED: &str = r#"use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::signal::Signal;
use embassy_time::Timer;
use core::sync::atomic::{AtomicU32, Ordering};

static PRESSES: AtomicU32 = AtomicU32::new(0);
static PRESSED: Signal<CriticalSectionRawMutex, ()> = Signal::new();

#[embassy_executor::task(pool_size = 2)]
async fn button() {
    Timer::after_millis(20).await;
    PRESSES.fetch_add(1, Ordering::Relaxed);
    PRESSED.signal(());
}

#[embassy_executor::task]
async fn display() {
    let mut shown = 0;
    while shown < 2 {
        PRESSED.wait().await;
        shown += PRESSES.swap(0, Ordering::Relaxed);
    }
    println!("shown {shown}");
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(display().unwrap());
    spawner.spawn(button().unwrap());
    spawner.spawn(button().unwrap());
}
"#;

/// Writes the project: Embassy's `platform-std` dependencies (embassy-time without its `std`
/// driver: the kernel's virtual clock is the driver; Jostle's embassy-sync through the
/// renamed line, whose `Signal` the fixed app hands the presses over), the two patch lines,
/// and a release profile with line information (where a task waits is read from it).
fn write_std_app(project: &Path) {
    let ws = workspace();
    std::fs::create_dir_all(project.join("src/bin")).unwrap();
    let manifest = format!(
        r#"[package]
name = "buttons"
version = "0.1.0"
edition = "2024"

[dependencies]
embassy-executor = {{ version = "0.10", features = ["platform-std", "executor-thread"] }}
embassy-sync = {{ package = "jostle-embassy-sync", path = "{}" }}
embassy-time = "0.5"
embassy-futures = "0.1"

[patch.crates-io]
embassy-executor = {{ path = "{}" }}
portable-atomic = {{ path = "{}" }}

[profile.release]
debug = true
"#,
        ws.join("shims/embassy-sync").display(),
        ws.join("shims/embassy-executor").display(),
        ws.join("shims/portable-atomic").display()
    );
    std::fs::write(project.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(project.join("src/bin/lost.rs"), lost_app()).unwrap();
    std::fs::write(project.join("src/bin/fixed.rs"), FIXED).unwrap();
    std::fs::copy(
        ws.join("rust-toolchain.toml"),
        project.join("rust-toolchain.toml"),
    )
    .unwrap();
}

/// `jostle campaign EXE --host` in `dir`.
fn host_campaign(dir: &Path, exe: &Path) -> std::process::Output {
    jostle_in(
        dir,
        &[
            "campaign",
            exe.to_str().unwrap(),
            "--host",
            "--budget",
            "300",
            "-j",
            "2",
        ],
    )
}

#[test]
fn a_std_shaped_embassy_app_runs_on_the_host_port_and_its_lost_wake_up_is_found() {
    let tmp = outside_dir("jostle-embassy-host-");
    let project = tmp.path().join("buttons");
    write_std_app(&project);
    let target = target_dir().join("embassy-host-outside");
    let build = user_cargo(
        &project,
        &["build", "--release"],
        &[("CARGO_TARGET_DIR", target.to_str().unwrap())],
    );
    assert!(build.status.success(), "{}", text(&build));
    let exe = |bin: &str| target.join("release").join(bin);

    // The bug: found, named after the task and the line it waits at, shrunk, replayed.
    let dir = tempfile::tempdir().unwrap();
    let out = host_campaign(dir.path(), &exe("lost"));
    assert_eq!(out.status.code(), Some(40), "{}", text(&out));
    let r = report(&dir.path().join("jostle-report"));
    let found = failures(&r);
    let f = found
        .iter()
        .find(|f| f["verdict"] == "lost_wake")
        .unwrap_or_else(|| panic!("no lost_wake: {r:#}"));
    let register = lost_app()
        .lines()
        .position(|l| l.contains("PRESSED.register"))
        .unwrap()
        + 1;
    let words = format!("lost wake-up: task display waits at src/bin/lost.rs:{register}:");
    assert!(
        f["example"].as_str().unwrap().contains(&words),
        "{words}: {f:#}"
    );
    assert!(f["shrunk"].is_object(), "not shrunk: {f:#}");
    let id = f["id"].as_str().unwrap();
    for more in [&[][..], &["--shrunk"][..]] {
        let mut args = vec!["--host"];
        args.extend_from_slice(more);
        let out = replay_bug_with(dir.path(), &exe("lost"), id, &args);
        assert_eq!(out.status.code(), Some(44), "{more:?}: {}", text(&out));
        let replay = String::from_utf8_lossy(&out.stdout);
        assert!(
            replay.contains(&format!("reproduced: lost_wake {id}")),
            "{more:?}: {}",
            text(&out)
        );
        // Lanes are the tasks, by the names of their task functions.
        for task in ["display", "button[1]"] {
            assert!(
                replay
                    .lines()
                    .any(|l| l.split_whitespace().nth(1) == Some(task)),
                "{more:?}: no step of {task}: {replay}"
            );
        }
    }

    // The fix: a clean campaign.
    let dir = tempfile::tempdir().unwrap();
    let out = host_campaign(dir.path(), &exe("fixed"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}
