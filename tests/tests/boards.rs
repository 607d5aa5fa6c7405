//! What of the board support can be exercised without hardware: the configuration block's
//! flash-page fallback (on QEMU, whose flash the loader can write) and the probe backend's
//! behaviour with no probe attached. (The QEMU logger's frames from stacks whose MPU guard
//! starts a page: `cores.rs`, on every core.)

use crate::common;

use common::*;
use jostle_host_tools::RunOutcome;
use jostle_kernel::config::Rejection;
use jostle_kernel::{Config, Event, TraceLevel};

fn block_file(dir: &std::path::Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn run_start(run: &RunOutcome) -> (u64, u8) {
    match run.events.first() {
        Some(Event::RunStart { seed, trace, .. }) => (*seed, *trace),
        other => panic!("no RunStart: {other:?}"),
    }
}

#[test]
fn the_flash_page_is_read_when_the_ram_block_is_absent() {
    let fw = firmware("rf_fig2");
    let dir = tempfile::tempdir().unwrap();
    let flash_config = Config {
        seed: 77,
        trace: TraceLevel::Sync,
        ..Config::default()
    };
    let mut page = vec![0u8; 4096];
    flash_config.encode_page(&mut page);
    let flash = block_file(dir.path(), "flash.bin", &page);
    let ram_config = Config {
        seed: 5,
        trace: TraceLevel::Results,
        ..Config::default()
    };
    let ram = block_file(dir.path(), "ram.bin", &ram_config.encode());
    let boot = |ram: Option<&std::path::Path>, flash: Option<&std::path::Path>, c: Config| {
        let raw = qemu().run_with_blocks(&fw, ram, flash).expect("qemu runs");
        RunOutcome::from_qemu(&fw, c, raw)
    };
    // Flash only: the board replays the flash block (as at power-up after flash-config).
    let r = boot(None, Some(&flash), flash_config.clone());
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(run_start(&r), (77, TraceLevel::Sync as u8));
    // Both: the host's RAM block wins.
    let r = boot(Some(&ram), Some(&flash), ram_config.clone());
    assert_eq!(run_start(&r), (5, TraceLevel::Results as u8));
    // Neither: the documented defaults.
    let r = boot(None, None, Config::default());
    assert_eq!(run_start(&r), (0, TraceLevel::Full as u8));
    // A corrupt RAM block is refused, not replaced by the flash block.
    let mut bad = ram_config.encode();
    bad[100] ^= 1;
    let bad = block_file(dir.path(), "bad.bin", &bad);
    let r = boot(Some(&bad), Some(&flash), ram_config);
    assert!(
        r.events
            .iter()
            .any(|e| matches!(e, Event::ConfigRejected { reason } if *reason == Rejection::Checksum as u8)),
        "{:?}",
        r.events
    );
    // The same flow through the command line.
    let out = std::process::Command::new(jostle())
        .args([
            "run",
            elf("rf_fig2").to_str().unwrap(),
            "--json",
            "--flash-config",
        ])
        .arg(&flash)
        .output()
        .unwrap();
    let first = String::from_utf8_lossy(&out.stdout);
    let first = first.lines().next().unwrap_or_default();
    assert!(first.contains("\"seed\":77"), "{first}");
}

#[test]
fn a_recorded_rtt_stream_decodes_to_the_same_run_as_semihosting() {
    use jostle_host_tools::trace::elf::Firmware;
    let rtt_fw = Firmware::load(&rtt_elf("af_fig1")).unwrap();
    let fw = firmware("af_fig1");
    let mut verdicts = std::collections::BTreeSet::new();
    for seed in 0..12 {
        let config = Config {
            seed,
            trace: TraceLevel::Sync,
            ..config(seed, &[])
        };
        // What a probe would have read from RTT up channel 0, decoded by the probe backend.
        let raw = qemu().run(&rtt_fw, &config).unwrap();
        let recorded = RunOutcome::from_rtt(&rtt_fw, config.clone(), &raw.frames, false, false);
        assert!(
            recorded.error.is_none(),
            "seed {seed}: {:?}",
            recorded.error
        );
        let direct = run_qemu(&fw, config);
        assert_eq!(recorded.decisions(), direct.decisions(), "seed {seed}");
        assert_eq!(recorded.outcome, direct.outcome, "seed {seed}");
        verdicts.insert(format!("{:?}", recorded.outcome));
        // A recording cut inside a frame is refused, never read as a shorter run.
        let cut = &raw.frames[..raw.frames.len() - 3];
        let truncated = RunOutcome::from_rtt(&rtt_fw, Config::default(), cut, false, false);
        assert!(
            truncated.error.is_some(),
            "seed {seed}: a cut stream was accepted"
        );
        // The same cut from a board that stopped answering: the run is marked lost (the
        // campaign goes on), not the stream corrupt.
        let lost = RunOutcome::from_rtt(&rtt_fw, Config::default(), cut, false, true);
        assert!(lost.error.is_none(), "seed {seed}: {:?}", lost.error);
        assert_eq!(
            lost.outcome,
            Some(jostle_host_tools::trace::run::Outcome::TargetLost),
            "seed {seed}"
        );
    }
    assert!(verdicts.len() > 1, "{verdicts:?}");
}

#[test]
fn the_probe_backend_without_a_probe_says_so_with_its_exit_code() {
    // An image with an RTT control block, as the board crates link (defmt-rtt).
    let elf = rtt_elf("af_fig1");
    let fw = elf.to_str().unwrap();
    // A semihosting image: refused before any probe is looked for, since nothing could be
    // read from it over RTT.
    let semihosting = common::elf("af_fig1");
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["run", fw, "--probe", "--chip", "nRF52840_xxAA"],
            33,
            "no debug probe found",
        ),
        (
            &["campaign", fw, "--probe", "--chip", "RP2040"],
            33,
            "no debug probe found",
        ),
        (
            &[
                "replay",
                fw,
                "--probe",
                "1366:1015",
                "--chip",
                "STM32F411RETx",
                "--seed",
                "1",
            ],
            33,
            "no debug probe found matching 1366:1015",
        ),
        (
            &["flash-config", fw, "--chip", "nRF52840_xxAA", "--seed", "3"],
            33,
            "no debug probe found",
        ),
        (
            &["run", fw, "--probe", "--chip", "NoSuchChip9"],
            34,
            "unknown chip `NoSuchChip9`",
        ),
        (
            &["flash-config", fw, "--chip", "NoSuchChip9"],
            34,
            "unknown chip",
        ),
        (
            &["run", fw, "--probe", "xyz", "--chip", "RP2040"],
            2,
            "expected VID:PID",
        ),
        (&["run", fw, "--probe"], 2, "--chip"),
        (
            &[
                "run",
                semihosting.to_str().unwrap(),
                "--probe",
                "--chip",
                "nRF52840_xxAA",
            ],
            37,
            "has no _SEGGER_RTT symbol",
        ),
    ];
    for (args, code, text) in cases {
        let out = std::process::Command::new(jostle())
            .args(*args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {err}");
        assert!(err.contains(text), "{args:?}: {err}");
        if *code != 2 {
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
        }
    }
    // A runner line names no chip: the environment (JOSTLE_CHIP) or cargo embed's
    // Embed.toml does, and the runs go to the board.
    let dir = tempfile::tempdir().unwrap();
    let board_toml = workspace().join("board/nrf52840/Embed.toml");
    std::fs::copy(board_toml, dir.path().join("Embed.toml")).unwrap();
    for (env, args) in [
        (Some("RP2040"), &["campaign", fw][..]),
        (None, &["run", fw, "--probe"][..]),
    ] {
        let mut cmd = std::process::Command::new(jostle());
        cmd.args(args)
            .current_dir(dir.path())
            .env_remove("JOSTLE_CHIP");
        if let Some(chip) = env {
            cmd.env("JOSTLE_CHIP", chip);
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(33), "{env:?} {args:?}: {err}");
        assert!(err.contains("no debug probe found"), "{args:?}: {err}");
    }
}

#[test]
fn every_board_embed_toml_is_what_cargo_embed_reads() {
    // The `[default.rtt]` keys cargo-embed (probe-rs-tools 0.2x-0.3x) accepts: it refuses
    // unknown ones, e.g. the old `channels` list.
    const RTT_KEYS: &[&str] = &[
        "enabled",
        "timeout",
        "log_enabled",
        "log_path",
        "up_mode",
        "up_channels",
        "down_channels",
        "tabs",
    ];
    for board in ["nrf52840", "stm32f411", "rp2040", "rp2350"] {
        let path = workspace().join("board").join(board).join("Embed.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let doc: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{board}: {e}"));
        let default = doc["default"].as_table().unwrap();
        let chip = default["general"]["chip"].as_str().unwrap();
        assert!(
            jostle_host_tools::transport::probe::chip(chip).is_ok(),
            "{board}: probe-rs does not know chip {chip}"
        );
        let rtt = default["rtt"].as_table().unwrap();
        assert_eq!(rtt["enabled"].as_bool(), Some(true), "{board}");
        for key in rtt.keys() {
            assert!(
                RTT_KEYS.contains(&key.as_str()),
                "{board}: [default.rtt] {key}"
            );
        }
        let up = rtt["up_channels"].as_array().unwrap();
        let ch0 = up
            .iter()
            .find(|c| c["channel"].as_integer() == Some(0))
            .unwrap_or_else(|| panic!("{board}: no up channel 0"));
        assert_eq!(ch0["format"].as_str(), Some("Defmt"), "{board}");
        // Blocking: defmt-rtt's default drops what does not fit, cutting a full trace.
        assert_eq!(ch0["mode"].as_str(), Some("BlockIfFull"), "{board}");
    }
}

#[test]
fn an_rp2350_image_carries_the_boot_roms_image_definition_and_its_descriptor() {
    // Built as `cargo firmware-rp2350` builds it (one binary), in a directory of its own.
    let dir = target_dir().join("rp2350");
    let target = "thumbv8m.main-none-eabihf";
    let status = firmware_cargo(&workspace())
        .args(["build", "--release", "--target", target])
        .args(["-p", "jostle-examples", "--no-default-features"])
        .args(["--features", "rp2350", "--bin", "rf_fig2", "--target-dir"])
        .arg(&dir)
        .status()
        .expect("cargo runs");
    assert!(status.success());
    let elf = dir.join(target).join("release").join("rf_fig2");
    let fw = jostle_host_tools::trace::elf::Firmware::load(&elf).unwrap();
    assert_eq!(fw.board.name, "rp2350");
    assert_eq!(fw.board.chip.as_deref(), Some("RP235x"));
    assert_eq!(fw.board.machine, None);
    assert_eq!(fw.board.target.as_deref(), Some(target));
    // The boot ROM looks for an IMAGE_DEF block within the first 4 KiB of flash: an Arm
    // Secure executable for the RP2350, the only block of its loop.
    use object::{Object, ObjectSection};
    let bytes = std::fs::read(&elf).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let block = file.section_by_name(".start_block").expect(".start_block");
    assert!(
        (0x1000_0000..0x1000_1000 - 20).contains(&block.address()),
        "{:#x}",
        block.address()
    );
    let words: Vec<u32> = block
        .data()
        .unwrap()
        .chunks(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect();
    assert_eq!(
        words,
        [0xffff_ded3, 0x1021_0142, 0x0000_01ff, 0, 0xab12_3579],
        "{words:x?}"
    );
    // The vector table stays at the start of flash, where the ROM enters the image.
    let vectors = file.section_by_name(".vector_table").unwrap();
    assert_eq!(vectors.address(), 0x1000_0000);
}
