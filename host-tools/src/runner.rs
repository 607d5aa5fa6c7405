//! Where runs happen: QEMU with a firmware ELF, or a host-port executable.

use crate::elf::Firmware;
use crate::error::JostleError;
use crate::hostport;
use crate::qemu::Qemu;
use crate::run::RunOutcome;
use jostle_kernel::Config;
use std::path::PathBuf;
use std::time::Duration;

/// Where runs happen: a loaded ELF on QEMU, or a host-port executable.
pub enum Runner {
    /// QEMU with this firmware.
    Qemu(Box<Firmware>, Qemu),
    /// The host port with this executable and wall-clock limit.
    Host(PathBuf, Duration),
    /// A board behind a debug probe, the firmware flashed.
    Probe(Box<crate::probe::ProbeTarget>),
}

impl Runner {
    /// A runner for the firmware at `path` (`host`: a host-port executable), each run
    /// limited to `timeout` seconds.
    pub fn new(path: PathBuf, host: bool, timeout: f64) -> Result<Runner, JostleError> {
        let timeout = Duration::from_secs_f64(timeout.clamp(0.001, 1e9));
        Ok(if host {
            Runner::Host(path, timeout)
        } else {
            let qemu = Qemu {
                timeout,
                ..Qemu::default()
            };
            Runner::Qemu(Box::new(Firmware::load(&path)?), qemu)
        })
    }

    /// A board through a probe (`selector` empty: the only one), flashed with `path`.
    pub fn probe(
        path: PathBuf,
        chip: &str,
        selector: &str,
        timeout: f64,
    ) -> Result<Runner, JostleError> {
        let fw = Firmware::load(&path)?;
        let timeout = Duration::from_secs_f64(timeout.clamp(0.001, 1e9));
        Ok(Runner::Probe(Box::new(crate::probe::ProbeTarget::open(
            fw, chip, selector, timeout,
        )?)))
    }

    /// How site ids map to `file:line:col` for this target.
    pub fn space(&self) -> crate::targeting::SiteSpace<'_> {
        match self {
            Runner::Qemu(fw, _) => crate::targeting::SiteSpace::Elf(fw),
            Runner::Probe(p) => crate::targeting::SiteSpace::Elf(&p.fw),
            Runner::Host(..) => crate::targeting::SiteSpace::Host,
        }
    }

    /// The firmware file.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Runner::Qemu(fw, _) => &fw.path,
            Runner::Probe(p) => &p.fw.path,
            Runner::Host(path, _) => path,
        }
    }

    /// Runs `n` consecutive seeds from `config.seed`: on QEMU several per boot (the
    /// firmware resets itself between them), on the host port one process each. Returns one
    /// outcome per run, in seed order; stops early at a run with an error (it is the last).
    pub fn run_batch(&self, config: &Config, n: u32) -> Result<Vec<RunOutcome>, JostleError> {
        let mut outcomes: Vec<RunOutcome> = Vec::with_capacity(n as usize);
        while (outcomes.len() as u32) < n {
            let done = outcomes.len() as u32;
            let left = n - done;
            let first = Config {
                seed: config.seed.wrapping_add(u64::from(done)),
                runs: left,
                ..config.clone()
            };
            let got = match self {
                Runner::Qemu(fw, qemu) if left > 1 => {
                    // The limit is on silence, so each run keeps its own (see `Qemu`).
                    let raw = qemu.run(fw, &first)?;
                    RunOutcome::batch_from_qemu(fw, first, raw)
                }
                _ => vec![self.run(Config { runs: 1, ..first }, None)?],
            };
            let stop = got.is_empty() || got.iter().any(|o| o.error.is_some());
            outcomes.extend(got.into_iter().take(left as usize));
            if stop {
                break;
            }
        }
        Ok(outcomes)
    }

    /// One run; `block` replaces the configuration block built from `config` (QEMU only).
    pub fn run(&self, config: Config, block: Option<&PathBuf>) -> Result<RunOutcome, JostleError> {
        match self {
            Runner::Host(_, _) if block.is_some() => Err(JostleError::Usage(
                "--config-file is for QEMU runs; use the JOSTLE_CONFIG variable on the host port"
                    .into(),
            )),
            Runner::Host(path, timeout) => {
                let raw = hostport::run(path, &config, *timeout)?;
                Ok(RunOutcome::from_host(config, raw))
            }
            Runner::Probe(_) if block.is_some() => Err(JostleError::Usage(
                "--config-file is for QEMU runs; a probe run writes the block built from the options"
                    .into(),
            )),
            Runner::Probe(p) => p.run(config),
            Runner::Qemu(fw, qemu) => {
                let raw = match block {
                    Some(block) => qemu.run_with_block(fw, Some(block))?,
                    None => qemu.run(fw, &config)?,
                };
                Ok(RunOutcome::from_qemu(fw, config, raw))
            }
        }
    }
}
