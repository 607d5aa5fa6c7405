//! The host-port transport: the program built for the host reads its configuration block
//! from the file named by `JOSTLE_CONFIG` and prints one event a line; one process per run.

use super::Transport;
use crate::error::JostleError;
use crate::trace::decode::{Item, parse_line};
use crate::trace::run::{Ending, Port, RunOutcome};
use crate::trace::space::SiteSpace;
use jostle_kernel::Config;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The host port as a transport: the executable, and each run's wall-clock limit.
pub struct HostTransport {
    /// The host-port executable.
    pub path: PathBuf,
    /// Wall-clock limit of one run.
    pub timeout: Duration,
}

impl Transport for HostTransport {
    fn path(&self) -> &Path {
        &self.path
    }

    fn space(&self) -> SiteSpace<'_> {
        SiteSpace::Host
    }

    fn run(&self, config: Config, block: Option<&Path>) -> Result<RunOutcome, JostleError> {
        if block.is_some() {
            return Err(JostleError::Usage(
                "--config-file is for QEMU runs; use the JOSTLE_CONFIG variable on the host port"
                    .into(),
            ));
        }
        let raw = run(&self.path, &config, self.timeout)?;
        Ok(RunOutcome::from_host(config, raw))
    }
}

/// The raw outcome of one host-port run.
#[derive(Debug)]
pub struct HostRun {
    /// The printed lines.
    pub stdout: String,
    /// Exit code (`None` if killed).
    pub exit_code: Option<i32>,
    /// The wall-clock limit was hit.
    pub timed_out: bool,
}

/// Runs the host build `exe` of a firmware with `config`.
pub fn run(exe: &Path, config: &Config, timeout: Duration) -> Result<HostRun, JostleError> {
    let (_dir, block) = crate::transport::process::block_file(config)?;
    let mut child = crate::transport::process::own_group(&mut Command::new(exe))
        .env("JOSTLE_CONFIG", &block)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| JostleError::io(format!("starting {}", exe.display()), e))?;
    let mut out = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let (exit_code, timed_out) =
        crate::transport::process::wait_or_kill(&mut child, timeout, "the host-port run")?;
    Ok(HostRun {
        stdout: reader.join().unwrap_or_default(),
        exit_code,
        timed_out,
    })
}

impl RunOutcome {
    /// Parses a host-port run.
    pub fn from_host(config: Config, raw: HostRun) -> RunOutcome {
        let items: Vec<Item> = raw.stdout.lines().map(parse_line).collect();
        let frames = items.len();
        Self::from_items(
            Port::Host,
            config,
            items,
            None,
            Ending {
                exit_code: raw.exit_code,
                timed_out: raw.timed_out,
                error: None,
                frames,
            },
        )
    }
}
