//! Running firmware on the host port: the program built for the host reads its
//! configuration block from the file named by `JOSTLE_CONFIG` and prints one event a line.

use crate::error::JostleError;
use jostle_kernel::Config;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

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
    let (_dir, block) = crate::process::block_file(config)?;
    let mut child = crate::process::own_group(&mut Command::new(exe))
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
        crate::process::wait_or_kill(&mut child, timeout, "the host-port run")?;
    Ok(HostRun {
        stdout: reader.join().unwrap_or_default(),
        exit_code,
        timed_out,
    })
}
