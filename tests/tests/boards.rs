//! What of the board support can be exercised without hardware: the configuration block's
//! flash-page fallback (on QEMU, whose flash the loader can write), and the probe backend's
//! behaviour with no probe attached.

mod common;

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
