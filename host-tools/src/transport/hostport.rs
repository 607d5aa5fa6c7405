//! The host-port transport: the program built for the host reads its configuration block
//! from the file named by `JOSTLE_CONFIG` and prints one event a line; one process makes
//! the block's `runs` consecutive seeds, writing each run's lines as it ends.
//!
//! A device starts every run from a reset: all of RAM is initialised again. The host port
//! resets what it knows (Jostle's shared variables, locks and atomics, the portable-atomic
//! shim's atomics) but not the firmware's other statics, such as a
//! `critical_section::Mutex<RefCell<T>>` or an embassy-sync mutex's data. So, before its first
//! boot of several runs, the transport checks that the runs of one process are the runs
//! fresh processes make ([`HostTransport::runs_share_a_process`]); when they are not, it makes
//! one process per run from then on, and says so once.

use super::Transport;
use crate::error::JostleError;
use crate::trace::decode::{Item, parse_line};
use crate::trace::dwarf::Lines;
use crate::trace::run::{Ending, Port, RunOutcome};
use crate::trace::space::SiteSpace;
use crate::trace::symbols::Symbols;
use crate::transport::process::{self, Kill, Limits, Progress};
use jostle_kernel::Config;
use jostle_kernel::TraceLevel;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The host port as a transport: the executable, and each run's limits.
pub struct HostTransport {
    /// The host-port executable.
    pub path: PathBuf,
    /// Limits of one run (its wall-clock limit is the shorter of `quiet` and `wall`: a
    /// host-port run writes nothing until its threads are done).
    pub limits: Limits,
    /// Whether several runs may share a process (`None`: not checked yet).
    share: Mutex<Option<bool>>,
    /// The executable's data symbols, read at the first run.
    symbols: OnceLock<Symbols>,
    /// The executable's line information (where lost wake-ups wait), read at the first run
    /// that needs it.
    lines: Mutex<Option<Option<Lines>>>,
}

/// Runs of the check's process: the first, and three that must match fresh processes.
const CHECK_RUNS: u32 = 4;

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
        let mut outcome = RunOutcome::from_host(config, raw);
        self.name(&mut outcome);
        Ok(outcome)
    }

    fn run_boot(&self, first: Config) -> Result<Vec<RunOutcome>, JostleError> {
        if !self.share_processes(&first)? {
            return Ok(vec![self.run(Config { runs: 1, ..first }, None)?]);
        }
        let raw = run_limited(&self.path, &first, &self.limits)?;
        let mut outcomes = RunOutcome::batch_from_host(first, raw);
        for outcome in &mut outcomes {
            self.name(outcome);
        }
        Ok(outcomes)
    }
}

impl HostTransport {
    /// The host port running the executable at `path`, each run held to `limits`.
    pub fn new(path: PathBuf, limits: Limits) -> HostTransport {
        HostTransport {
            path,
            limits,
            share: Mutex::new(None),
            symbols: OnceLock::new(),
            lines: Mutex::new(None),
        }
    }

    /// Names a run's locations, tasks and code sites from the executable.
    fn name(&self, outcome: &mut RunOutcome) {
        let symbols = self.symbols();
        outcome.name_locations(symbols);
        let Some(anchor) = symbols.anchor() else {
            return;
        };
        outcome.name_code_sites(|distances| {
            let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
            let lines = lines
                .get_or_insert_with(|| {
                    std::fs::read(&self.path)
                        .ok()
                        .and_then(|b| Lines::parse(&b))
                })
                .as_ref()?;
            // Distances from the anchor, as the firmware kept them (32 bits, wrapping).
            let returns: Vec<u64> = distances
                .iter()
                .take_while(|&&d| d != 0)
                .map(|&d| anchor.wrapping_add_signed(i64::from(d as i32)))
                .collect();
            lines.host_app_site(&returns).map(|l| l.to_string())
        });
    }

    /// The executable's data symbols (none if it cannot be read: names are a convenience).
    fn symbols(&self) -> &Symbols {
        self.symbols.get_or_init(|| {
            std::fs::read(&self.path).map_or_else(|_| Symbols::default(), |b| Symbols::parse(&b))
        })
    }

    /// Whether runs may share a process, checked once (other workers wait for the answer,
    /// so no boot of several runs happens before it).
    fn share_processes(&self, first: &Config) -> Result<bool, JostleError> {
        let mut share = self.share.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = *share {
            return Ok(known);
        }
        let known = self.runs_share_a_process(first)?;
        if !known {
            eprintln!(
                "jostle: {}: a run in a process that made runs before does not make the run a \
                 fresh process makes (the firmware keeps state in statics Jostle does not reset, \
                 e.g. a critical_section::Mutex<RefCell<_>>; a device's reset clears them): one \
                 process per run (slower)",
                self.path.display()
            );
        }
        *share = Some(known);
        Ok(known)
    }

    /// Whether the runs of one process are those fresh processes make: `first`'s seed and
    /// the next [`CHECK_RUNS`]` - 1` in one process, each of the later ones again in a
    /// process of its own, all with full traces, compared line for line (the run's index
    /// in its process, `run=k`, aside). A probe over a few seeds, not a proof: state that
    /// only some schedules carry over can escape it.
    pub fn runs_share_a_process(&self, first: &Config) -> Result<bool, JostleError> {
        let config = |seed: u64, runs: u32| Config {
            seed,
            runs,
            trace: TraceLevel::Full,
            ..first.clone()
        };
        let together = run_limited(&self.path, &config(first.seed, CHECK_RUNS), &self.limits)?;
        let together = runs_of(&together.stdout);
        for (k, run) in together.iter().enumerate().skip(1) {
            let seed = first.seed.wrapping_add(k as u64);
            let alone = run_limited(&self.path, &config(seed, 1), &self.limits)?;
            if runs_of(&alone.stdout).first() != Some(run) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// A host-port process's output, one text per run (split at `J start` lines), with each
/// run's index in its process (`run=k`, the only field that differs between a run made
/// after others and the same run made alone) taken out.
pub fn runs_of(stdout: &str) -> Vec<String> {
    let mut runs: Vec<String> = Vec::new();
    for line in stdout.lines() {
        if line.starts_with("J start ") {
            let without_index = line.split(" run=").next().unwrap_or(line);
            runs.push(format!("{without_index}\n"));
        } else if let Some(run) = runs.last_mut() {
            run.push_str(line);
            run.push('\n');
        }
    }
    runs
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
                stuck_pc: None,
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
