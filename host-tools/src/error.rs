//! Errors of the host tools, each with its own exit code. The doc comment of each variant
//! is its message's meaning; `Display` gives the one-line message.

use std::path::PathBuf;

/// Something stopped `jostle` before a verdict could be given.
#[derive(Debug, thiserror::Error)]
pub enum JostleError {
    /// QEMU is not installed (exit 20).
    #[error("`{0}` not found: install QEMU (`apt-get install qemu-system-arm`) or set JOSTLE_QEMU")]
    QemuMissing(String),
    /// The file is not an ELF (exit 21).
    #[error("{path}: not an ELF file ({reason})")]
    NotElf {
        /// The file.
        path: PathBuf,
        /// What the ELF parser said.
        reason: String,
    },
    /// The ELF carries no defmt table (exit 22).
    #[error("{0}: the ELF has no defmt data (was it linked with -Tdefmt.x and does it use defmt?)")]
    NoDefmt(PathBuf),
    /// The ELF's defmt table cannot be read: damaged, or of a defmt wire format this tool
    /// does not read (exit 22).
    #[error("{path}: the ELF's defmt table cannot be read ({reason})")]
    BadDefmt {
        /// The file.
        path: PathBuf,
        /// What the defmt decoder said, on one line.
        reason: String,
    },
    /// The ELF has no configuration block symbol (exit 28): the board's `memory.x` was not
    /// linked, often because the linker scripts were not passed.
    #[error("{path}: not a Jostle firmware (no JOSTLE_CONFIG symbol; {hint})")]
    NoConfigSymbol {
        /// The file.
        path: PathBuf,
        /// What is missing, as far as the ELF tells (see `trace::elf`).
        hint: String,
    },
    /// The ELF is a framework's app built without Jostle's stand-in for the framework (exit
    /// 28, as a firmware without Jostle): no board descriptor, but the real framework's
    /// code. Cargo left the `[patch]` unused (a version the stand-in does not serve).
    #[error(
        "{path}: an Embassy app built with the real embassy-executor, not Jostle's (shims/embassy-executor stands in for embassy-executor 0.10 only: see cargo's warning `patch embassy-executor ... was not used in the crate graph`, ask for \"0.10\", and run `cargo update -p embassy-executor` when Cargo.lock holds another version)"
    )]
    UnpatchedEmbassy {
        /// The file.
        path: PathBuf,
    },
    /// The event stream stopped in the middle (exit 23).
    #[error("truncated defmt stream: {0}")]
    StreamTruncated(String),
    /// The event stream holds a frame that cannot be decoded (exit 24).
    #[error("corrupt defmt stream: {0}")]
    StreamCorrupt(String),
    /// Building the firmware failed (exit 25).
    #[error("building the firmware failed: {0}")]
    BuildFailed(String),
    /// An input/output error (exit 26).
    #[error("{context}: {cause}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause (in the message, so not also a `source` that would print it twice).
        cause: std::io::Error,
    },
    /// QEMU started but failed before the firmware ran (exit 27).
    #[error("QEMU failed: {0}")]
    QemuFailed(String),
    /// QEMU died of a signal `jostle` did not send (the OOM killer, a user, a crash of QEMU)
    /// while it made a run, whatever the run had written: the run is made again in a new
    /// boot ([`crate::transport::retry`]), and this is the error only when it dies again and
    /// again (exit 27, as QEMU failing).
    #[error("QEMU died: {0}")]
    BootDied(String),
    /// A saved trace (`jostle run --json` output) cannot be read (exit 29).
    #[error("{0}")]
    BadTrace(String),
    /// A prediction file cannot be read or does not fit the firmware (exit 30).
    #[error("{0}")]
    BadPrediction(String),
    /// A campaign report cannot be read, or shards do not belong together (exit 31).
    #[error("{0}")]
    BadReport(String),
    /// A replay did not reproduce what the report recorded (exit 32): a determinism bug.
    #[error("{0}")]
    NotReproduced(String),
    /// No debug probe is connected, or none matches the selector (exit 33).
    #[error("no debug probe found{0}: connect one (probe-rs lists none), or check USB permissions")]
    NoProbe(String),
    /// probe-rs does not know the chip (exit 34).
    #[error("unknown chip `{0}`: see `probe-rs chip list` for the names probe-rs knows")]
    ChipUnknown(String),
    /// The probe could not be opened or could not attach to the chip (exit 35).
    #[error("attaching to the target failed: {0}")]
    ProbeAttach(String),
    /// Flashing the firmware (or the configuration page) failed (exit 36).
    #[error("flashing failed: {0}")]
    FlashFailed(String),
    /// The firmware's RTT control block was not found (exit 37).
    #[error(
        "RTT control block not found: {0} (is the firmware built for this board, with defmt-rtt?)"
    )]
    RttNotFound(String),
    /// The board stopped answering the probe for several runs in a row (exit 38).
    #[error(
        "the board stopped answering the probe for {0} runs in a row (check power and the debug cable)"
    )]
    TargetGone(u32),
    /// `jostle new` did not write the project (exit 39): the name is not a valid crate name,
    /// the directory exists and is not empty, or the jostle crate is not where the
    /// dependency would point.
    #[error("{0}")]
    ProjectRefused(String),
    /// A campaign tested nothing (exit 41): it made no run, or every run hit the step limit
    /// or the wall-clock limit, so no run reached its end.
    #[error("{0}")]
    NothingTested(String),
    /// The firmware spawned more tasks than its task table holds (exit 19, the verdict's).
    #[error(
        "the firmware spawned past its limit of {0} tasks: enable a larger task table (the jostle crate's `tasks-16`, `tasks-32`, `tasks-64` or `tasks-128` feature)"
    )]
    TaskLimit(u8),
    /// A run wrote more than `--max-output` bytes and was killed (exit 42).
    #[error("{0}")]
    OutputLimit(String),
    /// A configuration block file (`--config-file`, `--flash-config`) is refused before any
    /// run, as the firmware would refuse it; or the firmware refused a campaign run's block
    /// (exit 15).
    #[error("configuration block rejected: {0}")]
    ConfigRejected(String),
    /// The report directory is in use by another `jostle` (its `report.lock`) (exit 43).
    #[error("{0}")]
    ReportLocked(String),
    /// `jostle` was stopped (Ctrl-C, SIGTERM, SIGHUP) before the work was done (exit 130).
    #[error("stopped by a signal")]
    Interrupted,
    /// A command-line value is invalid (exit 2).
    #[error("{0}")]
    Usage(String),
}

impl JostleError {
    /// The process exit code for this error (verdicts use 0 and 11–17).
    pub fn exit_code(&self) -> u8 {
        match self {
            JostleError::QemuMissing(_) => 20,
            JostleError::NotElf { .. } => 21,
            JostleError::NoDefmt(_) => 22,
            JostleError::BadDefmt { .. } => 22,
            JostleError::NoConfigSymbol { .. } => 28,
            JostleError::UnpatchedEmbassy { .. } => 28,
            JostleError::StreamTruncated(_) => 23,
            JostleError::StreamCorrupt(_) => 24,
            JostleError::BuildFailed(_) => 25,
            JostleError::Io { .. } => 26,
            JostleError::QemuFailed(_) => 27,
            JostleError::BootDied(_) => 27,
            JostleError::BadTrace(_) => 29,
            JostleError::BadPrediction(_) => 30,
            JostleError::BadReport(_) => 31,
            JostleError::NotReproduced(_) => 32,
            JostleError::NoProbe(_) => 33,
            JostleError::ChipUnknown(_) => 34,
            JostleError::ProbeAttach(_) => 35,
            JostleError::FlashFailed(_) => 36,
            JostleError::RttNotFound(_) => 37,
            JostleError::TargetGone(_) => 38,
            JostleError::ProjectRefused(_) => 39,
            JostleError::NothingTested(_) => 41,
            JostleError::TaskLimit(_) => 19,
            JostleError::OutputLimit(_) => 42,
            JostleError::ConfigRejected(_) => 15,
            JostleError::ReportLocked(_) => 43,
            JostleError::Interrupted => 130,
            JostleError::Usage(_) => 2,
        }
    }

    /// A failure of one boot rather than of the firmware or the input (the stream ended
    /// early, QEMU died): worth one retry in a new boot.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            JostleError::StreamTruncated(_) | JostleError::QemuFailed(_)
        )
    }

    /// Wraps an I/O error with what was being done.
    pub fn io(context: impl Into<String>, cause: std::io::Error) -> Self {
        JostleError::Io {
            context: context.into(),
            cause,
        }
    }
}
