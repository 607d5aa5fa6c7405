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
}

impl Runner {
    /// A runner for the firmware at `path` (`host`: a host-port executable), each run
    /// limited to `timeout` seconds.
    pub fn new(path: PathBuf, host: bool, timeout: f64) -> Result<Runner, JostleError> {
        let timeout = Duration::from_secs_f64(timeout.max(0.001));
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

    /// The firmware file.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Runner::Qemu(fw, _) => &fw.path,
            Runner::Host(path, _) => path,
        }
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
