//! The kernel under other build profiles than the workspace's release (fat LTO, `opt-level =
//! "s"`): release without LTO, release at opt-level 0, and cargo's default dev profile. Each
//! must take the same decisions as the reference build for the same seed (the interleaving
//! by task, operation and source line, and the verdict), and name faults truthfully.
//! `scripts/profile-matrix` (`JOSTLE_PROFILE_MATRIX=full`) covers every value of `lto`,
//! `opt-level`, `debug` and `codegen-units` in eight builds.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The firmware built under each profile.
const EXAMPLES: [&str; 3] = ["rf_fig1", "abba_deadlock", "af_fig1"];
const TEST_FIRMWARE: [&str; 2] = ["stack_overflow", "hard_fault"];

/// Builds the firmware with extra cargo arguments into its own target directory (compiling
/// in the shared build directory, where the profile's hash keeps its objects apart); returns
/// the directory holding the ELFs.
fn build(name: &str, extra: &[&str]) -> PathBuf {
    let target_dir = common::workspace()
        .join("target")
        .join(format!("jostle-profile-{name}"));
    let mut cmd = common::firmware_cargo(&common::workspace());
    cmd.args(["build", "--target", "thumbv7m-none-eabi"])
        .args(extra)
        .args(["-p", "jostle-examples", "-p", "jostle-test-firmware"]);
    for bin in EXAMPLES.iter().chain(TEST_FIRMWARE.iter()) {
        cmd.args(["--bin", bin]);
    }
    let status = cmd.arg("--target-dir").arg(&target_dir).status().unwrap();
    assert!(status.success(), "building under profile {name} failed");
    let profile = if extra.contains(&"--release") {
        "release"
    } else {
        "debug"
    };
    target_dir.join("thumbv7m-none-eabi").join(profile)
}

/// What a run did, without addresses: (event, task, site) per event, then the verdict.
fn decisions(elf: &Path, seed: u64, args: &[&str]) -> Vec<String> {
    let out = Command::new(common::jostle())
        .arg("run")
        .arg(elf)
        .args(["--seed", &seed.to_string(), "--json"])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v.get("summary").is_some() {
            lines.push(format!("verdict {}", v["verdict"]));
        } else {
            lines.push(format!("{} t{} {}", v["event"], v["t"], v["site"]));
        }
    }
    lines
}

fn verdict(elf: &Path, args: &[&str]) -> String {
    decisions(elf, 0, args).pop().unwrap_or_default()
}

/// A release profile with these settings, as cargo arguments.
fn release(lto: &str, opt: &str, debug: bool, cgu: u32) -> Vec<String> {
    let mut args = vec!["--release".to_owned()];
    for setting in [
        format!("profile.release.lto={lto}"),
        format!("profile.release.opt-level={opt}"),
        format!("profile.release.debug={debug}"),
        format!("profile.release.codegen-units={cgu}"),
    ] {
        args.push("--config".into());
        args.push(setting);
    }
    args
}

#[test]
fn other_profiles_take_the_reference_decisions_and_name_faults_truly() {
    let dev = |opt: &str| {
        vec![
            "--config".to_owned(),
            format!("profile.dev.opt-level={opt}"),
        ]
    };
    let mut profiles: Vec<(&str, Vec<String>)> = vec![
        ("release-no-lto", release("false", "\"s\"", true, 1)),
        ("release-opt0", release("\"fat\"", "0", true, 1)),
        // cargo's own dev defaults (the workspace raises its dev opt-level to 1).
        ("dev", dev("0")),
    ];
    if std::env::var("JOSTLE_PROFILE_MATRIX").is_ok_and(|v| v == "full") {
        // Every value of each setting at least once.
        profiles.extend([
            ("m-thin-1", release("\"thin\"", "1", true, 1)),
            ("m-fat-2", release("\"fat\"", "2", false, 16)),
            ("m-off-3", release("false", "3", true, 16)),
            ("m-thin-z", release("\"thin\"", "\"z\"", false, 16)),
            ("m-fat-s-16", release("\"fat\"", "\"s\"", false, 16)),
            ("m-off-0", release("false", "0", false, 16)),
            ("m-dev-1", dev("1")),
        ]);
    }
    for (name, extra) in &profiles {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let (name, extra) = (*name, extra.as_slice());
        let dir = build(name, extra);
        for bin in EXAMPLES {
            for seed in 0..8 {
                let reference = decisions(&common::elf(bin), seed, &[]);
                assert!(reference.len() > 3, "{bin}: no run: {reference:?}");
                assert_eq!(
                    decisions(&dir.join(bin), seed, &[]),
                    reference,
                    "{bin} seed {seed} under {name}"
                );
            }
        }
        assert_eq!(
            verdict(&dir.join("stack_overflow"), &[]),
            "verdict \"stack_overflow\"",
            "{name}"
        );
        for arg in ["0", "1"] {
            assert_eq!(
                verdict(&dir.join("hard_fault"), &["--arg", arg]),
                "verdict \"hard_fault\"",
                "{name}, hard_fault --arg {arg}"
            );
        }
    }
}
