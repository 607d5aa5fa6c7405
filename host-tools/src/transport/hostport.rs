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
        let reader = scope.spawn(|| {
            let mut lines = StartLines::default();
            process::read_runs(out, limits.output, &progress, |buf| lines.scan(buf))
        });
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

/// The offsets of the `J start` lines (run starts) among the complete lines of a host-port
/// process's output that were not looked at before.
#[derive(Default)]
struct StartLines {
    /// The first line not looked at yet.
    next: usize,
}

impl StartLines {
    fn scan(&mut self, buf: &[u8]) -> Vec<usize> {
        let mut starts = Vec::new();
        while let Some(end) = buf[self.next..].iter().position(|b| *b == b'\n') {
            if buf[self.next..].starts_with(b"J start ") {
                starts.push(self.next);
            }
            self.next += end + 1;
        }
        starts
    }
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

    /// Parses a host-port run (a process of one run).
    pub fn from_host(config: Config, raw: HostRun) -> RunOutcome {
        let mut runs = Self::batch_from_host(config, raw);
        // `split_boot` gives at least one outcome: everything before a second run start.
        runs.truncate(1);
        runs.pop().expect("one run")
    }
}

fn over_limit(cap: u64) -> JostleError {
    JostleError::OutputLimit(format!(
        "the run wrote more than {cap} bytes and was killed (raise --max-output if it is meant to)"
    ))
}
