//! Transports: where runs happen. A transport boots the firmware with a run's configuration
//! block, reads what the run writes and decodes it (with `trace`) into a [`RunOutcome`]. One
//! file per transport, each implementing [`Transport`]: `qemu` (QEMU `mps2-an385`, several
//! seeds per boot), `hostport` (the host-port executable, several
//! seeds per process) and `probe`
//! (a board behind a debug probe, flashed once). `process` holds what the process-based
//! ones share, `build` builds firmware with cargo, and [`Runner`] holds the transport the
//! command line picked.
//!
//! Dependency rule: transports use `trace` and `error`, never `engine` or `output`. The
//! engine sees a transport only through [`Transport`] and never names QEMU, the host port or
//! a probe, so a new transport is one file implementing one trait.

pub mod build;
pub mod hostport;
pub mod probe;
pub mod process;
pub mod qemu;
pub mod qmp;
pub mod retry;
pub mod served;

use crate::error::JostleError;
use crate::trace::elf::Firmware;
use crate::trace::run::RunOutcome;
use crate::trace::space::SiteSpace;
use jostle_kernel::Config;
pub use process::Limits;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Loads a firmware ELF for a transport. An ELF whose defmt table cannot be read (damaged,
/// or of another defmt wire format) is told apart from a file that is no ELF, which
/// `Firmware::load` reports alike: exit 22, not 21, on one line.
pub fn load_firmware(path: &Path) -> Result<Firmware, JostleError> {
    Firmware::load(path).map_err(|e| match e {
        JostleError::NotElf { path, reason } if is_elf(&path) => {
            let reason = reason.strip_prefix("bad defmt table: ").unwrap_or(&reason);
            JostleError::BadDefmt {
                reason: reason.lines().map(str::trim).collect::<Vec<_>>().join("; "),
                path,
            }
        }
        e => e,
    })
}

/// Whether the file at `path` parses as an ELF.
fn is_elf(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|bytes| {
        object::File::parse(&*bytes).is_ok_and(|f| f.format() == object::BinaryFormat::Elf)
    })
}

/// What the engine needs of a place where runs happen.
pub trait Transport: Sync {
    /// The firmware file (its fingerprint names the image in predictions and reports).
    fn path(&self) -> &Path;

    /// How site ids map to `file:line:col` on this transport's image (for targeting).
    fn space(&self) -> SiteSpace<'_>;

    /// Whether runs may be made by several workers at once (a board makes one at a time).
    fn parallel(&self) -> bool {
        true
    }

    /// One run under `config`; `block` replaces the configuration block built from
    /// `config` (QEMU only: the others refuse it).
    fn run(&self, config: Config, block: Option<&Path>) -> Result<RunOutcome, JostleError>;

    /// One boot of `first.runs` consecutive seeds from `first.seed`: the runs it reached, in
    /// seed order. A transport that cannot make several runs per boot makes the first alone.
    fn run_boot(&self, first: Config) -> Result<Vec<RunOutcome>, JostleError> {
        Ok(vec![self.run(Config { runs: 1, ..first }, None)?])
    }

    /// Boots as a board powers up after `jostle flash-config`: no RAM block, the block file
    /// `flash` in the board's configuration flash page. `None` when this transport cannot
    /// (the caller makes an ordinary run).
    fn run_from_flash(&self, _flash: &Path) -> Option<Result<RunOutcome, JostleError>> {
        None
    }

    /// Runs `n` consecutive seeds from `config.seed`: on QEMU several per boot (the
    /// firmware resets itself between them), elsewhere one run at a time. Returns one
    /// outcome per run, in seed order; stops early at a run with an error (it is the last),
    /// and when `jostle` is stopping (the runs before the killed boot).
    fn run_batch(&self, config: &Config, n: u32) -> Result<Vec<RunOutcome>, JostleError> {
        let mut outcomes = Vec::new();
        self.run_each(config, n, &mut |o| {
            outcomes.push(o);
            true
        })?;
        Ok(outcomes)
    }

    /// As [`Transport::run_batch`], handing each run's outcome to `each` as its boot ends
    /// (boots of at most [`RUNS_PER_BOOT`] runs), and stopping when `each` says `false`:
    /// what `n` runs cost in memory does not grow with `n`.
    fn run_each(
        &self,
        config: &Config,
        n: u32,
        each: &mut dyn FnMut(RunOutcome) -> bool,
    ) -> Result<(), JostleError> {
        let mut done = 0;
        while done < n {
            if process::stopping() {
                // No new boot once `jostle` is stopping: the runs so far are what there is.
                break;
            }
            let runs = (n - done).min(RUNS_PER_BOOT);
            let first = Config {
                seed: config.seed.wrapping_add(u64::from(done)),
                runs,
                ..config.clone()
            };
            let got = if runs > 1 {
                self.run_boot(first)
            } else {
                self.run(first, None).map(|o| vec![o])
            };
            let got = match got {
                // `jostle` is stopping: the boot in flight was killed; the runs before it
                // are what there is.
                Err(JostleError::Interrupted) => break,
                got => got?,
            };
            let stop = got.is_empty() || got.iter().any(|o| o.error.is_some());
            for outcome in got.into_iter().take(runs as usize) {
                done += 1;
                if !each(outcome) {
                    return Ok(());
                }
            }
            if stop {
                break;
            }
        }
        Ok(())
    }
}

/// Most runs in one boot of consecutive seeds (a boot's output is held until it ends), and
/// the campaign's jobs (`engine::campaign::BATCH`).
pub const RUNS_PER_BOOT: u32 = 50;

/// The transport the command line picked: QEMU, the host port or a board.
pub struct Runner(Box<dyn Transport>);

impl Runner {
    /// A runner for the firmware at `path` (`host`: a host-port executable, else an ELF
    /// for QEMU), each run limited to `timeout` seconds.
    pub fn new(path: PathBuf, host: bool, timeout: f64) -> Result<Runner, JostleError> {
        Self::with_limits(path, host, Limits::quiet(limit(timeout)?))
    }

    /// A runner for the firmware at `path` (`host`: a host-port executable, else an ELF
    /// for QEMU), each run held to `limits`.
    pub fn with_limits(path: PathBuf, host: bool, limits: Limits) -> Result<Runner, JostleError> {
        Ok(Runner(if host {
            Box::new(hostport::HostTransport::new(path, limits))
        } else {
            // A QEMU that dies takes its run with it: the run is made again in a new boot.
            Box::new(retry::Retrying(qemu::QemuTransport::load_limited(
                &path, limits,
            )?))
        }))
    }

    /// A board through a probe (`selector` empty: the only one), flashed with `path`.
    pub fn probe(
        path: PathBuf,
        chip: &str,
        selector: &str,
        limits: Limits,
    ) -> Result<Runner, JostleError> {
        let fw = load_firmware(&path)?;
        let mut board = probe::ProbeTransport::open(fw, chip, selector, limits.quiet)?;
        board.run_limit = limits.wall;
        board.max_output = limits.output;
        Ok(Runner(Box::new(board)))
    }
}

impl std::ops::Deref for Runner {
    type Target = dyn Transport;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl Limits {
    /// The limits of the command line's seconds and bytes: `timeout` (silence),
    /// `run_limit` (a run's wall-clock time; `None`: [`Limits::DEFAULT_WALL`], or `timeout`
    /// when longer) and `max_output` (bytes one run may write).
    pub fn from_command_line(
        timeout: f64,
        run_limit: Option<f64>,
        max_output: u64,
    ) -> Result<Limits, JostleError> {
        let quiet = limit(timeout)?;
        let wall = match run_limit {
            Some(secs) => limit(secs).map_err(|_| {
                JostleError::Usage(format!(
                    "--run-limit {secs}: expected a number of seconds greater than 0"
                ))
            })?,
            None => Limits::DEFAULT_WALL.max(quiet),
        };
        if max_output == 0 {
            return Err(JostleError::Usage(
                "--max-output 0: a run writes at least its start and its verdict".into(),
            ));
        }
        Ok(Limits {
            quiet,
            wall,
            output: max_output,
        })
    }
}

/// A run's time limit from the command line's seconds: a number greater than 0 (`NaN`,
/// infinities, negative numbers and 0 are a usage error, never a panic), at least 1 ms and
/// at most what a `Duration` holds comfortably.
pub fn limit(timeout: f64) -> Result<Duration, JostleError> {
    if !(timeout > 0.0 && timeout.is_finite()) {
        return Err(JostleError::Usage(format!(
            "--timeout {timeout}: expected a number of seconds greater than 0"
        )));
    }
    Ok(Duration::from_secs_f64(timeout.clamp(0.001, 1e9)))
}
