//! The probe backend: runs on a real board through a debug probe, with the `probe-rs`
//! library. Per target: look the chip up, find the probe, attach, flash the ELF once. Per
//! run: reset and halt, write the configuration block into RAM at `JOSTLE_CONFIG`, run, read
//! the defmt stream from RTT up channel 0 until the run's `RunEnd` frame, then decode it
//! like a QEMU stream. A board that stops answering marks its run (`target_lost`) instead of
//! ending a campaign.

use crate::decode::{FrameDecoder, Item};
use crate::elf::Firmware;
use crate::error::JostleError;
use crate::run::RunOutcome;
use jostle_kernel::{Config, Event};
use probe_rs::config::{Registry, Target};
use probe_rs::probe::DebugProbeSelector;
use probe_rs::probe::list::Lister;
use probe_rs::rtt::ScanRegion;
use probe_rs::{MemoryInterface, Permissions, Session};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A chip known to probe-rs, by the exact name probe-rs uses (`nrf52840` → `nRF52840_xxAA`).
pub fn chip(name: &str) -> Result<Target, JostleError> {
    Registry::from_builtin_families()
        .get_target_by_name(name)
        .map_err(|_| JostleError::ChipUnknown(name.to_owned()))
}

/// A board behind a probe, attached, with the firmware flashed.
pub struct ProbeTarget {
    /// The firmware on it.
    pub fw: Box<Firmware>,
    /// The chip, as probe-rs names it.
    pub chip: String,
    /// Most time a run may stay silent on RTT.
    pub timeout: Duration,
    session: Mutex<Session>,
    rtt_at: Option<u64>,
}

impl ProbeTarget {
    /// Finds the probe (`selector`: `VID:PID[:SERIAL]`, or any when empty), attaches to
    /// `chip_name` and flashes `fw`.
    pub fn open(
        fw: Firmware,
        chip_name: &str,
        selector: &str,
        timeout: Duration,
    ) -> Result<ProbeTarget, JostleError> {
        let target = chip(chip_name)?;
        let chip = target.name.clone();
        let mut session = attach(target, selector)?;
        flash_elf(&mut session, &fw)?;
        let rtt_at = probe_rs::rtt::find_rtt_control_block_in_raw_file(&fw.bytes)
            .ok()
            .flatten();
        Ok(ProbeTarget {
            fw: Box::new(fw),
            chip,
            timeout,
            session: Mutex::new(session),
            rtt_at,
        })
    }

    /// One run under `config`.
    pub fn run(&self, config: Config) -> Result<RunOutcome, JostleError> {
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let mut core = session
            .core(0)
            .map_err(|e| JostleError::ProbeAttach(format!("core 0: {e:#}")))?;
        let block = config.encode();
        let started = core
            .reset_and_halt(Duration::from_millis(500))
            .and_then(|_| core.write(u64::from(self.fw.config_addr), &block))
            .and_then(|()| core.run());
        if started.is_err() {
            // The board did not take the reset or the block: it stopped answering.
            return Ok(RunOutcome::from_rtt(&self.fw, config, &[], false, true));
        }
        let region = match self.rtt_at {
            Some(at) => ScanRegion::Exact(at),
            None => ScanRegion::Ram,
        };
        let mut rtt = probe_rs::rtt::try_attach_to_rtt(&mut core, Duration::from_secs(2), &region)
            .map_err(|e| JostleError::RttNotFound(format!("{e:#}")))?;
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 1024];
        let mut last = Instant::now();
        loop {
            let Some(channel) = rtt.up_channels().iter_mut().find(|c| c.number() == 0) else {
                return Err(JostleError::RttNotFound("no up channel 0".into()));
            };
            match channel.read(&mut core, &mut chunk) {
                Ok(0) => {}
                Ok(n) => {
                    bytes.extend_from_slice(&chunk[..n]);
                    last = Instant::now();
                    if ended(&self.fw, &bytes) {
                        return Ok(RunOutcome::from_rtt(&self.fw, config, &bytes, false, false));
                    }
                    continue;
                }
                Err(_) => {
                    return Ok(RunOutcome::from_rtt(&self.fw, config, &bytes, false, true));
                }
            }
            if core.status().is_err() {
                return Ok(RunOutcome::from_rtt(&self.fw, config, &bytes, false, true));
            }
            if last.elapsed() >= self.timeout {
                let _ = core.halt(Duration::from_millis(100));
                return Ok(RunOutcome::from_rtt(&self.fw, config, &bytes, true, false));
            }
            // probe-rs advises against polling a probe's USB link in a tight loop.
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Writes `config` into the board's `JOSTLE_CONFIG_FLASH` page (flash form: the block,
    /// the rest of the erased page left 0xFF), for replay at every power-up.
    pub fn flash_config(&self, config: &Config) -> Result<u32, JostleError> {
        let addr = self.fw.config_flash_addr.ok_or_else(|| {
            JostleError::Usage(format!(
                "{}: the board has no JOSTLE_CONFIG_FLASH page",
                self.fw.path.display()
            ))
        })?;
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let mut loader = session.target().flash_loader();
        loader
            .add_data(u64::from(addr), &config.encode())
            .map_err(|e| JostleError::FlashFailed(format!("{e:#}")))?;
        loader
            .commit(&mut session, probe_rs::flashing::DownloadOptions::default())
            .map_err(|e| JostleError::FlashFailed(format!("{e:#}")))?;
        Ok(addr)
    }
}

/// Has the stream so far reached the run's end (its `RunEnd` frame)? (Decoded again from
/// the start each time: a results-level run is a few frames.)
fn ended(fw: &Firmware, bytes: &[u8]) -> bool {
    FrameDecoder::new(&fw.table)
        .decode_all(bytes)
        .items
        .iter()
        .any(|i| matches!(i, Item::Event(Event::RunEnd { .. })))
}

/// Opens the probe `selector` names (any probe when empty) and attaches to `target`.
fn attach(target: Target, selector: &str) -> Result<Session, JostleError> {
    let lister = Lister::new();
    let probes = if selector.is_empty() {
        lister.list_all()
    } else {
        let sel: DebugProbeSelector = selector.parse().map_err(|e| {
            JostleError::Usage(format!(
                "--probe {selector}: expected VID:PID[:SERIAL] ({e})"
            ))
        })?;
        lister.list(Some(&sel))
    };
    let Some(info) = probes.first() else {
        let which = if selector.is_empty() {
            String::new()
        } else {
            format!(" matching {selector}")
        };
        return Err(JostleError::NoProbe(which));
    };
    let probe = info
        .open()
        .map_err(|e| JostleError::ProbeAttach(format!("opening {info}: {e:#}")))?;
    probe
        .attach(target, Permissions::default())
        .map_err(|e| JostleError::ProbeAttach(format!("{e:#}")))
}

/// Flashes the firmware ELF (once per target, not per run).
fn flash_elf(session: &mut Session, fw: &Firmware) -> Result<(), JostleError> {
    use probe_rs::flashing::{DownloadOptions, ElfLoader, download_file_with_options};
    download_file_with_options(
        session,
        &fw.path,
        ElfLoader(Default::default()),
        DownloadOptions::default(),
    )
    .map_err(|e| JostleError::FlashFailed(format!("{}: {e:#}", fw.path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chips_resolve_to_probe_rs_names_and_unknown_ones_are_refused() {
        assert_eq!(chip("nRF52840_xxAA").unwrap().name, "nRF52840_xxAA");
        assert_eq!(chip("STM32F411RETx").unwrap().name, "STM32F411RETx");
        assert_eq!(chip("RP2040").unwrap().name, "RP2040");
        let Err(e) = chip("FOOBAR123") else {
            panic!("FOOBAR123 resolved")
        };
        assert_eq!(e.exit_code(), 34);
        assert!(e.to_string().contains("FOOBAR123"));
    }
}
