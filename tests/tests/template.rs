//! `jostle new`: the project it writes builds on its own, outside this workspace, and its
//! campaign finds the template's bug; a firmware linked without the linker scripts is
//! refused, at build time by the board's check, and by `jostle run` when that check is
//! skipped; bad names and non-empty directories are refused with their exit code.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// `jostle new` writes this project (its binary has the same name).
const NAME: &str = "sensor_fw";

fn jostle(args: &[&str], cwd: &Path) -> Output {
    Command::new(jostle_bin())
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("jostle runs")
}

fn jostle_bin() -> PathBuf {
    common::jostle()
}

/// `cargo` as a user runs it in the project (see [`common::user_cargo`]).
fn cargo(project: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    user_cargo(project, args, env)
}

/// The 1-based line of `needle` in the template's program.
fn template_line(needle: &str) -> usize {
    let src = std::fs::read_to_string(workspace().join("templates/firmware/src/main.rs")).unwrap();
    src.lines().position(|l| l.contains(needle)).unwrap() + 1
}

fn outside() -> tempfile::TempDir {
    outside_dir("jostle-new-")
}

#[test]
fn a_new_project_builds_alone_its_campaign_finds_the_bug_and_the_linker_scripts_are_checked() {
    let started = Instant::now();
    let tmp = outside();
    let project = tmp.path().join("sensor-fw");
    let out = jostle(
        &["new", NAME, "--path", project.to_str().unwrap()],
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let created = started.elapsed();
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    let jostle_crate = workspace().join("jostle");
    assert!(
        manifest.contains(&format!("path = \"{}\"", jostle_crate.display())),
        "depends on this checkout:\n{manifest}"
    );
    assert!(manifest.lines().any(|l| l.trim() == "[workspace]"));
    let toolchain = std::fs::read_to_string(project.join("rust-toolchain.toml")).unwrap();
    assert!(toolchain.contains("\"1.95.0\"") && toolchain.contains("thumbv7m-none-eabi"));
    for file in [
        "README.md",
        "src/main.rs",
        ".cargo/config.toml",
        ".gitignore",
    ] {
        let text = std::fs::read_to_string(project.join(file)).unwrap();
        assert!(!text.contains("{{"), "{file} keeps a placeholder");
    }

    // It builds on its own, in its own target directory.
    let build = cargo(&project, &["build", "--release"], &[]);
    assert!(build.status.success(), "{}", text(&build));
    let elf = project.join("target/thumbv7m-none-eabi/release").join(NAME);
    assert!(elf.is_file(), "{} not built", elf.display());
    let built = started.elapsed();

    // `cargo run` is a campaign (the runner line), which finds the race and the failure.
    let run = cargo(
        &project,
        &["run", "--release", "--", "--budget", "300", "-j", "2"],
        &[],
    );
    assert_eq!(run.status.code(), Some(40), "{}", text(&run));
    let read = format!("src/main.rs:{}:", template_line("READING.read()"));
    let write = format!("src/main.rs:{}:", template_line("READING.write("));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains(&read) && stdout.contains(&write),
        "{}",
        text(&run)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(project.join("jostle-report/report.json")).unwrap())
            .unwrap();
    let bugs = report["bugs"].as_array().expect("bugs");
    let race = bugs
        .iter()
        .find(|b| {
            b["kind"] == "race"
                && b["sites"].as_array().is_some_and(|s| {
                    let s: Vec<&str> = s.iter().filter_map(|s| s.as_str()).collect();
                    s.iter().any(|s| s.starts_with(&read))
                        && s.iter().any(|s| s.starts_with(&write))
                })
        })
        .unwrap_or_else(|| panic!("no race between {read} and {write}: {bugs:#?}"));
    assert!(race["harmful"].as_u64().unwrap() > 0, "{race:#}");
    assert_eq!(race["status"], "harmful");

    // Its replay command reproduces the failure (the assertion's panic, exit 11).
    let id = race["id"].as_str().unwrap();
    let replay = jostle(
        &[
            "replay",
            elf.to_str().unwrap(),
            "--report",
            "jostle-report",
            "--bug",
            id,
        ],
        &project,
    );
    assert_eq!(replay.status.code(), Some(11), "{}", text(&replay));
    let campaigned = started.elapsed();

    // Without the linker scripts: the board's build script refuses, naming both flags.
    let config = project.join(".cargo/config.toml");
    let with_flags = std::fs::read_to_string(&config).unwrap();
    let without: String = with_flags
        .lines()
        .filter(|l| !l.starts_with("rustflags"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(without, with_flags);
    std::fs::write(&config, &without).unwrap();
    let refused = cargo(&project, &["build", "--release"], &[]);
    assert!(!refused.status.success(), "{}", text(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("the firmware would link without -Tlink.x")
            && stderr.contains("and -Tdefmt.x"),
        "{}",
        text(&refused)
    );

    // With the check skipped it links an ELF without code, which `jostle run` refuses
    // (exit 28) naming the flags that were missing.
    let skipped = cargo(
        &project,
        &["build", "--release"],
        &[("JOSTLE_SKIP_LINK_CHECK", "1")],
    );
    assert!(skipped.status.success(), "{}", text(&skipped));
    let out = jostle(&["run", elf.to_str().unwrap()], &project);
    assert_eq!(out.status.code(), Some(28), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.contains("linked without -Tlink.x and -Tdefmt.x"),
        "{stderr}"
    );
    eprintln!(
        "template: jostle new {:.1} s (with building the tools), cargo build {:.1} s, \
         campaign + replay {:.1} s, link checks {:.1} s",
        created.as_secs_f64(),
        (built - created).as_secs_f64(),
        (campaigned - built).as_secs_f64(),
        (started.elapsed() - campaigned).as_secs_f64()
    );
}

/// A user's program on heapless's spsc queue (the template's project, heapless added).
const HEAPLESS_PROGRAM: &str = r#"#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use core::ptr::addr_of_mut;
use heapless::spsc::{Consumer, Queue};
use jostle::*;

static mut READINGS: Queue<u16, 4> = Queue::new();
static mut RX: Option<Consumer<'static, u16, 4>> = None;
static LOGGER_STACK: Stack<4096> = Stack::new();

fn logger() {
    let rx = unsafe { (*addr_of_mut!(RX)).as_mut().unwrap() };
    let mut sum = 0u32;
    for _ in 0..6 {
        loop {
            if let Some(r) = rx.dequeue() {
                sum += u32::from(r);
                break;
            }
            hint::spin_loop();
        }
    }
    assert_eq!(sum, 10 + 20 + 30 + 40 + 50 + 60);
}

fn main_task() {
    let mut tx = unsafe {
        let (tx, rx) = (*addr_of_mut!(READINGS)).split();
        *addr_of_mut!(RX) = Some(rx);
        tx
    };
    let logger = spawn(&LOGGER_STACK, logger);
    for sample in 1..=6u16 {
        while tx.enqueue(sample * 10).is_err() {
            hint::spin_loop();
        }
    }
    logger.join();
}

firmware!(main_task);
"#;

#[test]
fn a_new_project_tests_its_own_use_of_heapless_with_the_patch_line_alone() {
    let tmp = outside();
    let project = tmp.path().join("queue-fw");
    let name = "queue_fw";
    let out = jostle(
        &["new", name, "--path", project.to_str().unwrap()],
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // What the README tells a user to add: the crate, and the patch line.
    let manifest_path = project.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path).unwrap();
    let shim = workspace().join("shims/portable-atomic");
    let manifest = manifest.replacen(
        "\n[profile.release]",
        &format!(
            "\nheapless = {{ version = \"0.8\", features = [\"portable-atomic\"] }}\n\n\
             [patch.crates-io]\nportable-atomic = {{ path = \"{}\" }}\n\n[profile.release]",
            shim.display()
        ),
        1,
    );
    assert!(manifest.contains("[patch.crates-io]"), "{manifest}");
    std::fs::write(&manifest_path, manifest).unwrap();
    std::fs::write(project.join("src/main.rs"), HEAPLESS_PROGRAM).unwrap();

    let build = cargo(&project, &["build", "--release"], &[]);
    assert!(build.status.success(), "{}", text(&build));
    let tree = cargo(
        &project,
        &[
            "tree",
            "-i",
            "portable-atomic",
            "--target",
            "thumbv7m-none-eabi",
        ],
        &[],
    );
    let tree_text = String::from_utf8_lossy(&tree.stdout);
    assert!(
        tree_text.contains(&format!("({})", shim.display())) && tree_text.contains("heapless"),
        "heapless builds on the shim: {}",
        text(&tree)
    );

    // The queue's atomics are steps of the interleaving, and a campaign finds nothing.
    let elf = project.join("target/thumbv7m-none-eabi/release").join(name);
    let run = jostle(&["run", elf.to_str().unwrap(), "--seed", "3"], &project);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    assert!(
        String::from_utf8_lossy(&run.stdout)
            .lines()
            .any(|l| l.contains("atomic-store") && l.contains("heapless-0.8.0/src/spsc.rs")),
        "{}",
        text(&run)
    );
    let campaign = cargo(
        &project,
        &["run", "--release", "--", "--budget", "2000", "-j", "2"],
        &[],
    );
    assert_eq!(campaign.status.code(), Some(0), "{}", text(&campaign));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(project.join("jostle-report/report.json")).unwrap())
            .unwrap();
    assert_eq!(report["stopped"], "budget", "{report:#}");
    assert!(report["runs"]["search"].as_u64().unwrap() > 0, "{report:#}");
}

#[test]
fn bad_names_and_non_empty_directories_are_refused_with_exit_39() {
    let tmp = outside();
    for name in ["2fw", "my fw", "fn", "test", "jostle"] {
        let dir = tmp.path().join("fresh");
        let out = jostle(&["new", name, "--path", dir.to_str().unwrap()], tmp.path());
        assert_eq!(out.status.code(), Some(39), "{name}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains("not a valid crate name"), "{stderr}");
        assert!(!dir.exists(), "{name}: nothing is written");
    }

    let full = tmp.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("keep.txt"), "mine").unwrap();
    let out = jostle(&["new", "fw", "--path", full.to_str().unwrap()], tmp.path());
    assert_eq!(out.status.code(), Some(39), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("not empty"), "{stderr}");
    assert_eq!(
        std::fs::read_dir(&full).unwrap().count(),
        1,
        "nothing is written"
    );

    // An empty directory is fine, and so is the default ./NAME; a git dependency on request.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = jostle(
        &["new", "fw", "--path", empty.to_str().unwrap()],
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(empty.join("src/main.rs").is_file());
    let url = "https://example.org/jostle.git";
    let out = jostle(&["new", "fw-git", "--jostle-git", url], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let manifest = std::fs::read_to_string(tmp.path().join("fw-git/Cargo.toml")).unwrap();
    assert!(
        manifest.contains(&format!("jostle = {{ git = \"{url}\" }}")),
        "{manifest}"
    );
    let out = jostle(&["new", "fw-git", "--jostle-git", url], tmp.path());
    assert_eq!(out.status.code(), Some(39), "a second time: {}", text(&out));
}
