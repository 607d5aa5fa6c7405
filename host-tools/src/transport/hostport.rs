//! The host-port transport: the program built for the host reads its configuration block
//! from the file named by `JOSTLE_CONFIG` and prints one event a line; one process makes
//! the block's `runs` consecutive seeds, writing each run's lines as it ends.

use super::Transport;
use crate::error::JostleError;
use crate::trace::decode::{Item, parse_line};
use crate::trace::run::{Ending, Port, RunOutcome};
use crate::trace::space::SiteSpace;
use crate::transport::process::{self, Kill, Limits, Progress};
use jostle_kernel::Config;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The host port as a transport: the executable, and each run's limits.
pub struct HostTransport {
    /// The host-port executable.
    pub path: PathBuf,
    /// Limits of one run (its wall-clock limit is the shorter of `quiet` and `wall`: a
    /// host-port run writes nothing until its threads are done).
    pub limits: Limits,
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
        let raw = run_limited(&self.path, &config, &self.limits)?;
        Ok(RunOutcome::from_host(config, raw))
    }

    fn run_boot(&self, first: Config) -> Result<Vec<RunOutcome>, JostleError> {
        let raw = run_limited(&self.path, &first, &self.limits)?;
        Ok(RunOutcome::batch_from_host(first, raw))
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
    /// The run wrote more than this many bytes (its limit) and was killed.
    pub over_limit: Option<u64>,
}

/// Runs the host build `exe` of a firmware with `config`, limited to `timeout` (and to the
/// default output limit).
pub fn run(exe: &Path, config: &Config, timeout: Duration) -> Result<HostRun, JostleError> {
    run_limited(exe, config, &Limits::quiet(timeout))
}

/// Runs the host build `exe` of a firmware with `config` (its `runs` seeds), each run held
/// to `limits`.
pub fn run_limited(exe: &Path, config: &Config, limits: &Limits) -> Result<HostRun, JostleError> {
    let (_dir, block) = process::block_file(config)?;
    let mut cmd = Command::new(exe);
    process::own_group(&mut cmd)
        .env("JOSTLE_CONFIG", &block)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = process::spawn(&mut cmd, |e| {
        JostleError::io(format!("starting {}", exe.display()), e)
    })?;
    let out = child.stdout.take().expect("piped stdout");
    let limits = Limits {
        // A run writes its lines when it ends (or every 64 KiB): silence is the normal state
        // of a run, so its wall clock, from its start, is what applies.
        wall: limits.wall.min(limits.quiet),
        quiet: limits.wall.max(limits.quiet),
        output: limits.output,
    };
    let progress = Progress::new();
    let (stdout, waited) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| read_runs(out, limits.output, &progress));
        let waited = process::watch(&mut child, &limits, &progress, "the host-port run");
        (reader.join().unwrap_or_default(), waited)
    });
    let (exit_code, kill) = waited?;
    if kill == Some(Kill::Stopped) {
        return Err(JostleError::Interrupted);
    }
    Ok(HostRun {
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        exit_code,
        timed_out: matches!(kill, Some(Kill::Quiet | Kill::Wall)),
        over_limit: (kill == Some(Kill::Output)).then_some(limits.output),
    })
}

/// Reads a host-port process's lines to their end, telling `progress` of each chunk and of
/// each run start (a `J start` line), until the current run has written more than `cap`
/// bytes.
fn read_runs(mut out: impl Read, cap: u64, progress: &Progress) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    // The first line not looked at yet, and where the current run's lines begin.
    let (mut line, mut run_from) = (0, 0);
    loop {
        let n = match out.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        progress.output();
        while let Some(end) = buf[line..].iter().position(|b| *b == b'\n') {
            if buf[line..].starts_with(b"J start ") {
                if (line - run_from) as u64 > cap {
                    break;
                }
                run_from = line;
                progress.run_started();
            }
            line += end + 1;
        }
        if (buf.len() - run_from) as u64 > cap {
            // The run that wrote too much is the process's last: what came after is cut.
            let cap = usize::try_from(cap).unwrap_or(usize::MAX);
            buf.truncate(run_from.saturating_add(cap).saturating_add(1));
            progress.over();
            break;
        }
    }
    buf
}

impl RunOutcome {
    /// Parses a host-port process that ran several seeds (`config.runs`): one outcome per
    /// run, as [`RunOutcome::split_boot`] says.
    pub fn batch_from_host(config: Config, raw: HostRun) -> Vec<RunOutcome> {
        let items: Vec<Item> = raw.stdout.lines().map(parse_line).collect();
        let frames = items.len();
        Self::split_boot(
            Port::Host,
            config,
            items,
            None,
            Ending {
                exit_code: raw.exit_code,
                timed_out: raw.timed_out,
                error: raw.over_limit.map(over_limit),
                frames,
            },
        )
    }

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
                error: raw.over_limit.map(over_limit),
                frames,
            },
        )
    }
}

fn over_limit(cap: u64) -> JostleError {
    JostleError::OutputLimit(format!(
        "the run wrote more than {cap} bytes and was killed (raise --max-output if it is meant to)"
    ))
}
