//! Running firmware on QEMU: the configuration block goes in with `-device loader`, the
//! defmt bytes come out on stdout (semihosting), the verdict is also QEMU's exit code.

use crate::elf::Firmware;
use crate::error::JostleError;
use jostle_kernel::Config;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How to start QEMU.
#[derive(Clone, Debug)]
pub struct Qemu {
    /// The QEMU binary (`qemu-system-arm`, or `JOSTLE_QEMU`).
    pub binary: String,
    /// The machine (`mps2-an385`).
    pub machine: String,
    /// The CPU (`cortex-m3`).
    pub cpu: String,
    /// Wall-clock limit of one run: QEMU is killed after this long without output (every
    /// run writes its start and its end, so with several runs per boot this is still the
    /// limit of each run).
    pub timeout: Duration,
}

impl Default for Qemu {
    fn default() -> Self {
        Qemu {
            binary: std::env::var("JOSTLE_QEMU").unwrap_or_else(|_| "qemu-system-arm".into()),
            machine: "mps2-an385".into(),
            cpu: "cortex-m3".into(),
            timeout: Duration::from_secs(10),
        }
    }
}

/// The raw outcome of one boot.
#[derive(Debug)]
pub struct RawRun {
    /// Everything the firmware wrote (defmt frames).
    pub stdout: Vec<u8>,
    /// QEMU's exit code (`None` if it was killed).
    pub exit_code: Option<i32>,
    /// The wall-clock limit was hit and QEMU was killed.
    pub timed_out: bool,
    /// What QEMU wrote on stderr.
    pub stderr: String,
    /// Wall time of the run.
    pub wall: Duration,
}

impl Qemu {
    /// Boots `fw` once with `config` written into its configuration block.
    pub fn run(&self, fw: &Firmware, config: &Config) -> Result<RawRun, JostleError> {
        let (_dir, block) = crate::process::block_file(config)?;
        self.run_with_block(fw, Some(&block))
    }

    /// Boots `fw` with the raw block file `block` (or none).
    pub fn run_with_block(
        &self,
        fw: &Firmware,
        block: Option<&std::path::Path>,
    ) -> Result<RawRun, JostleError> {
        self.run_with_blocks(fw, block, None)
    }

    /// Boots `fw` with a RAM block file and a flash block file (each optional): the flash
    /// one goes into the board's `JOSTLE_CONFIG_FLASH` page, as `jostle flash-config` puts
    /// it on a board (QEMU's flash is writable by its loader).
    pub fn run_with_blocks(
        &self,
        fw: &Firmware,
        block: Option<&std::path::Path>,
        flash: Option<&std::path::Path>,
    ) -> Result<RawRun, JostleError> {
        let mut cmd = Command::new(&self.binary);
        cmd.args(["-machine", &self.machine, "-cpu", &self.cpu])
            .args(["-nographic", "-monitor", "none", "-serial", "none"])
            .args(["-semihosting-config", "enable=on,target=native"])
            // Instruction counting: no decision may depend on host time.
            .args(["-icount", "shift=0"])
            .arg("-kernel")
            .arg(&fw.path);
        if let Some(block) = block {
            cmd.arg("-device").arg(format!(
                "loader,file={},addr={:#x},force-raw=on",
                block.display(),
                fw.config_addr
            ));
        }
        if let Some(flash) = flash {
            let addr = fw.config_flash_addr.ok_or_else(|| {
                JostleError::Usage(format!(
                    "{}: the board has no JOSTLE_CONFIG_FLASH page",
                    fw.path.display()
                ))
            })?;
            cmd.arg("-device").arg(format!(
                "loader,file={},addr={addr:#x},force-raw=on",
                flash.display()
            ));
        }
        crate::process::own_group(&mut cmd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = cmd.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                JostleError::QemuMissing(self.binary.clone())
            } else {
                JostleError::io(format!("starting {}", self.binary), e)
            }
        })?;
        let mut out = child.stdout.take().expect("piped stdout");
        let mut err = child.stderr.take().expect("piped stderr");
        // The watchdog's clock: milliseconds since the start at which output last arrived.
        let progress = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let reader = {
            let progress = progress.clone();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while let Ok(n) = out.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    progress.store(
                        started.elapsed().as_millis() as u64,
                        std::sync::atomic::Ordering::Relaxed,
                    );
                }
                buf
            })
        };
        let err_reader = std::thread::spawn(move || {
            let mut buf = String::new();
            let _ = err.read_to_string(&mut buf);
            buf
        });
        let (exit_code, timed_out) =
            crate::process::wait_quiet_or_kill(&mut child, self.timeout, started, &progress)?;
        let stdout = reader.join().unwrap_or_default();
        let stderr = err_reader.join().unwrap_or_default();
        Ok(RawRun {
            stdout,
            exit_code,
            timed_out,
            stderr,
            wall: started.elapsed(),
        })
    }
}
