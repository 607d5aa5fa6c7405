//! The probe transport: runs on a real board through a debug probe, with the `probe-rs`
//! library. Per target: look the chip up, find the probe, attach, flash the ELF once. Per
//! run: reset and halt, write the configuration block into RAM at `JOSTLE_CONFIG`, run, read
//! the defmt stream from RTT up channel 0 until the run's `RunEnd` frame, then decode it
//! like a QEMU stream. A board that stops answering marks its run (`target_lost`) instead of
//! ending a campaign. One run at a time: a board is not shared between workers.

use super::Transport;
use crate::error::JostleError;
use crate::trace::decode::{FrameDecoder, Item};
use crate::trace::elf::Firmware;
use crate::trace::run::{Ending, Outcome, Port, RunOutcome};
use crate::trace::space::SiteSpace;
use jostle_kernel::{Config, Event, Verdict};
use probe_rs::config::{Registry, Target};
use probe_rs::probe::DebugProbeSelector;
use probe_rs::probe::list::Lister;
use probe_rs::rtt::{ChannelMode, ScanRegion};
use probe_rs::{MemoryInterface, Permissions, Session};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A chip known to probe-rs, by the exact name probe-rs uses (`nrf52840` → `nRF52840_xxAA`).
pub fn chip(name: &str) -> Result<Target, JostleError> {
    Registry::from_builtin_families()
        .get_target_by_name(name)
        .map_err(|_| JostleError::ChipUnknown(name.to_owned()))
}

/// Runs in a row a board may lose before a campaign stops: past this the board (or its
/// cable) is gone, and more runs would only add `target_lost` rows.
pub const LOST_IN_A_ROW: u32 = 3;

/// A board behind a probe, attached, with the firmware flashed.
pub struct ProbeTransport {
    /// The firmware on it.
    pub fw: Box<Firmware>,
    /// The chip, as probe-rs names it.
    pub chip: String,
    /// Most time a run may stay silent on RTT.
    pub timeout: Duration,
    /// Most time a run may take, output or not (it then times out).
    pub run_limit: Duration,
    /// Most bytes a run may write (the run then ends with [`JostleError::OutputLimit`]).
    pub max_output: u64,
    target: Target,
    selector: String,
    link: Mutex<Link>,
    /// The RTT control block (`_SEGGER_RTT`) in RAM.
    rtt_at: u64,
    /// `main`: startup (RAM initialised, the RTT control block included) is done there.
    main_at: u64,
}

/// The link to the board, and what the runs so far say about it.
struct Link {
    /// The attached session; `None` after the board stopped answering (attach again).
    session: Option<Session>,
    /// A run completed: later RTT or attach failures are the board's, not the firmware's.
    ran: bool,
    /// Runs lost in a row.
    lost: u32,
}

/// Why a run did not finish: the board stopped answering, or the setup itself is wrong.
enum Failure {
    Lost,
    Error(JostleError),
}

impl ProbeTransport {
    /// A board through a probe (`selector` empty: the only one), flashed with the ELF at
    /// `path`.
    pub fn load(
        path: &Path,
        chip: &str,
        selector: &str,
        timeout: Duration,
    ) -> Result<ProbeTransport, JostleError> {
        ProbeTransport::open(super::load_firmware(path)?, chip, selector, timeout)
    }

    /// Finds the probe (`selector`: `VID:PID[:SERIAL]`, or any when empty), attaches to
    /// `chip_name` and flashes `fw`.
    pub fn open(
        fw: Firmware,
        chip_name: &str,
        selector: &str,
        timeout: Duration,
    ) -> Result<ProbeTransport, JostleError> {
        let target = chip(chip_name)?;
        // Checked before touching the board: an ELF without defmt-rtt cannot be run here.
        let rtt_at = probe_rs::rtt::find_rtt_control_block_in_raw_file(&fw.bytes)
            .ok()
            .flatten()
            .ok_or_else(|| {
                JostleError::RttNotFound(format!("{} has no _SEGGER_RTT symbol", fw.path.display()))
            })?;
        let main_at = fw.symbol("main").ok_or_else(|| {
            JostleError::Usage(format!("{}: no `main` symbol", fw.path.display()))
        })? & !1; // the Thumb bit is not part of the address
        let chip = target.name.clone();
        let mut session = attach(target.clone(), selector)?;
        flash_elf(&mut session, &fw)?;
        Ok(ProbeTransport {
            fw: Box::new(fw),
            chip,
            timeout,
            run_limit: super::Limits::DEFAULT_WALL.max(timeout),
            max_output: super::Limits::DEFAULT_OUTPUT,
            target,
            selector: selector.to_owned(),
            link: Mutex::new(Link {
                session: Some(session),
                ran: false,
                lost: 0,
            }),
            rtt_at,
            main_at,
        })
    }

    /// Resets the board into one run and returns its defmt stream up to the run's end, and
    /// whether the run went silent before it (a timeout). `ran`: an earlier run completed,
    /// so RTT trouble now means the board, not the image.
    fn run_on(
        &self,
        session: &mut Session,
        config: &Config,
        ran: bool,
    ) -> Result<(Vec<u8>, bool), Failure> {
        let mut core = session.core(0).map_err(|_| Failure::Lost)?;
        // Reset and halt; the block into RAM; the previous run's RTT control block wiped so
        // that only this boot's is found; then run to `main`, where startup has set the
        // control block up but the firmware has not logged yet.
        let halted_at_main = core
            .reset_and_halt(Duration::from_millis(500))
            .and_then(|_| core.write(u64::from(self.fw.config_addr), &config.encode()))
            .and_then(|()| core.write(self.rtt_at, &[0u8; 16]))
            .and_then(|()| core.set_hw_breakpoint(self.main_at))
            .and_then(|()| core.run())
            .and_then(|()| core.wait_for_core_halted(Duration::from_secs(2)))
            .and_then(|()| core.clear_hw_breakpoint(self.main_at));
        if halted_at_main.is_err() {
            return Err(Failure::Lost);
        }
        let mut rtt =
            match probe_rs::rtt::Rtt::attach_region(&mut core, &ScanRegion::Exact(self.rtt_at)) {
                Ok(rtt) => rtt,
                Err(_) if ran => return Err(Failure::Lost),
                Err(e) => return Err(Failure::Error(JostleError::RttNotFound(format!("{e:#}")))),
            };
        let Some(channel) = rtt.up_channel(0) else {
            return Err(Failure::Error(JostleError::RttNotFound(
                "no up channel 0".into(),
            )));
        };
        // defmt-rtt starts in a mode that drops what does not fit: block instead, so that a
        // full trace reaches the host whole however slowly it is read.
        channel
            .set_mode(&mut core, ChannelMode::BlockIfFull)
            .map_err(|_| Failure::Lost)?;
        core.run().map_err(|_| Failure::Lost)?;
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 4096];
        let mut end = RunEndScan::default();
        let started = Instant::now();
        let mut last = started;
        loop {
            if super::process::stopping() {
                let _ = core.halt(Duration::from_millis(100));
                return Err(Failure::Error(JostleError::Interrupted));
            }
            let n = channel
                .read(&mut core, &mut chunk)
                .map_err(|_| Failure::Lost)?;
            if n > 0 {
                bytes.extend_from_slice(&chunk[..n]);
                last = Instant::now();
                if end.reached(&self.fw, &bytes) {
                    return Ok((bytes, false));
                }
                if bytes.len() as u64 > self.max_output {
                    let _ = core.halt(Duration::from_millis(100));
                    return Err(Failure::Error(JostleError::OutputLimit(format!(
                        "the run wrote more than {} bytes and was stopped (raise --max-output if it is meant to)",
                        self.max_output
                    ))));
                }
                if started.elapsed() < self.run_limit {
                    continue;
                }
            }
            core.status().map_err(|_| Failure::Lost)?;
            if last.elapsed() >= self.timeout || started.elapsed() >= self.run_limit {
                let _ = core.halt(Duration::from_millis(100));
                // Silence, or no end in the run's time: the run never ended. Its partial stream
                // is decoded as a timeout.
                return Ok((bytes, true));
            }
            // probe-rs advises against polling a probe's USB link in a tight loop.
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Writes `config` into the board's `JOSTLE_CONFIG_FLASH` page (flash form: the block,
    /// the rest of the erased page left 0xFF), for replay at every power-up, and clears the
    /// RAM block's magic so that a reset (not only a power cycle) falls back to the page.
    pub fn flash_config(&self, config: &Config) -> Result<u32, JostleError> {
        let addr = self.fw.config_flash_addr.ok_or_else(|| {
            JostleError::Usage(format!(
                "{}: the board has no JOSTLE_CONFIG_FLASH page",
                self.fw.path.display()
            ))
        })?;
        let mut link = self.link.lock().unwrap_or_else(|p| p.into_inner());
        let session = link
            .session
            .as_mut()
            .ok_or_else(|| JostleError::ProbeAttach("the board stopped answering".into()))?;
        let mut loader = session.target().flash_loader();
        loader
            .add_data(u64::from(addr), &config.encode())
            .map_err(|e| JostleError::FlashFailed(format!("{e:#}")))?;
        loader
            .commit(session, probe_rs::flashing::DownloadOptions::default())
            .map_err(|e| JostleError::FlashFailed(format!("{e:#}")))?;
        let mut core = session
            .core(0)
            .map_err(|e| JostleError::ProbeAttach(format!("core 0: {e:#}")))?;
        core.reset_and_halt(Duration::from_millis(500))
            .and_then(|_| core.write_word_32(u64::from(self.fw.config_addr), 0))
            .and_then(|()| core.run())
            .map_err(|e| JostleError::ProbeAttach(format!("{e:#}")))?;
        Ok(addr)
    }
}

impl Transport for ProbeTransport {
    fn path(&self) -> &Path {
        &self.fw.path
    }

    fn space(&self) -> SiteSpace<'_> {
        SiteSpace::Elf(&self.fw)
    }

    fn parallel(&self) -> bool {
        false
    }

    /// One run under `config`. A run the board does not finish is marked `target_lost`;
    /// after [`LOST_IN_A_ROW`] such runs, the board is taken as gone (an error).
    fn run(&self, config: Config, block: Option<&Path>) -> Result<RunOutcome, JostleError> {
        if block.is_some() {
            return Err(JostleError::Usage(
                "--config-file is for QEMU runs; a probe run writes the block built from the options"
                    .into(),
            ));
        }
        let mut link = self.link.lock().unwrap_or_else(|p| p.into_inner());
        if link.session.is_none() {
            // Attach again: the board may have been reset or power-cycled meanwhile.
            link.session = attach(self.target.clone(), &self.selector).ok();
        }
        let ran = link.ran;
        let result = match link.session.as_mut() {
            Some(session) => self.run_on(session, &config, ran),
            None => Err(Failure::Lost),
        };
        match result {
            Ok((bytes, timed_out)) => {
                (link.ran, link.lost) = (true, 0);
                Ok(RunOutcome::from_rtt(
                    &self.fw, config, &bytes, timed_out, false,
                ))
            }
            Err(Failure::Error(e)) => Err(e),
            Err(Failure::Lost) => {
                link.session = None;
                link.lost += 1;
                if link.lost >= LOST_IN_A_ROW {
                    return Err(JostleError::TargetGone(link.lost));
                }
                Ok(RunOutcome::from_rtt(&self.fw, config, &[], false, true))
            }
        }
    }
}

/// Finds a run's `RunEnd` frame as the stream grows, decoding each complete frame once
/// (rzCOBS frames end with a zero byte and decode independently).
#[derive(Default)]
struct RunEndScan {
    /// Bytes before this offset are whole frames already looked at.
    checked: usize,
}

impl RunEndScan {
    fn reached(&mut self, fw: &Firmware, bytes: &[u8]) -> bool {
        let Some(last_zero) = bytes[self.checked..].iter().rposition(|b| *b == 0) else {
            return false;
        };
        let whole = &bytes[self.checked..=self.checked + last_zero];
        self.checked += last_zero + 1;
        FrameDecoder::new(&fw.table)
            .decode_all(whole)
            .items
            .iter()
            .any(|i| matches!(i, Item::Event(Event::RunEnd { .. })))
    }
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
    if selector.is_empty() && probes.len() > 1 {
        let names: Vec<String> = probes.iter().map(|p| p.to_string()).collect();
        return Err(JostleError::Usage(format!(
            "{} probes are connected ({}): choose one with --probe VID:PID[:SERIAL]",
            probes.len(),
            names.join("; ")
        )));
    }
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

impl RunOutcome {
    /// Decodes a board's run read from RTT. The end of the run is its `RunEnd` frame (there
    /// is no exit code to cross-check); `timed_out`: silence past the limit; `lost`: the
    /// probe lost the target.
    pub fn from_rtt(
        fw: &Firmware,
        config: Config,
        bytes: &[u8],
        timed_out: bool,
        lost: bool,
    ) -> RunOutcome {
        let decoded = FrameDecoder::new(&fw.table).decode_all(bytes);
        let exit_code = decoded.items.iter().find_map(|i| match i {
            Item::Event(Event::RunEnd { verdict, .. }) => {
                Verdict::from_u8(*verdict).map(|v| i32::from(v.exit_code()))
            }
            _ => None,
        });
        let mut out = Self::from_items(
            Port::Probe,
            config,
            decoded.items,
            Some(fw),
            Ending {
                exit_code,
                timed_out: timed_out || lost,
                stuck_pc: None,
                // A board lost in the middle of a frame leaves a partial one: the run is
                // marked lost, not the stream corrupt.
                error: if lost { None } else { decoded.error },
                frames: decoded.frames,
            },
        );
        if lost {
            out.outcome = Some(Outcome::TargetLost);
        }
        out
    }
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
