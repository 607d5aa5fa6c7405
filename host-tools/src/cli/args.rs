//! Argument groups several commands share (which firmware, where it runs, how a run is
//! steered, what every run of a multi-run command shares), and how they become a run's
//! configuration and transport.

use clap::{Args, ValueEnum};
use jostle_host_tools::JostleError;
use jostle_host_tools::transport::build::{QEMU_TARGET, cargo_build};
use jostle_host_tools::transport::{Limits, Runner};
use jostle_kernel::config::StrategyId;
use jostle_kernel::{Config, TraceLevel};
use std::path::PathBuf;

/// Where runs happen: QEMU (default), the host port, or a board through a debug probe; and
/// how long and how much each run may go on.
#[derive(Args, Clone)]
pub(crate) struct Via {
    #[command(flatten)]
    pub(crate) bounds: RunBounds,
    /// Run on the host port (tasks as coroutines in a host process) instead of QEMU.
    #[arg(long, conflicts_with = "probe")]
    pub(crate) host: bool,
    /// Run on a board through a debug probe (probe-rs): the only one connected, or the one
    /// `VID:PID[:SERIAL]` selects. Needs the board's chip (--chip, JOSTLE_CHIP, or
    /// `[default.general] chip` in ./Embed.toml) and an ELF built for the board.
    #[arg(long, num_args = 0..=1, default_missing_value = "", value_name = "SELECTOR")]
    pub(crate) probe: Option<String>,
    /// The board's chip, as probe-rs names it (e.g. nRF52840_xxAA, STM32F411RETx, RP2040);
    /// a chip alone means the only probe connected (so a runner line or the environment can
    /// send every run to the board).
    #[arg(long, env = "JOSTLE_CHIP")]
    pub(crate) chip: Option<String>,
}

/// The chip `Embed.toml` in the current directory names (`[default.general] chip`), as
/// `cargo embed` reads it.
fn embed_toml_chip() -> Option<String> {
    let text = std::fs::read_to_string("Embed.toml").ok()?;
    let doc: toml::Table = toml::from_str(&text).ok()?;
    doc.get("default")?
        .get("general")?
        .get("chip")?
        .as_str()
        .map(str::to_owned)
}

impl Via {
    /// The board runs go to, if any: (chip, probe selector; empty for the only probe).
    fn board(&self) -> Result<Option<(String, String)>, JostleError> {
        if self.host {
            return Ok(None);
        }
        let chip = self
            .chip
            .clone()
            .or_else(|| self.probe.as_ref().and_then(|_| embed_toml_chip()));
        match (&self.probe, chip) {
            (selector, Some(chip)) => Ok(Some((chip, selector.clone().unwrap_or_default()))),
            (Some(_), None) => Err(JostleError::Usage(
                "--probe needs the board's chip: --chip, JOSTLE_CHIP, or [default.general] chip in ./Embed.toml".into(),
            )),
            (None, None) => Ok(None),
        }
    }

    /// The firmware file for this kind of target (a board needs an ELF built for it).
    pub(crate) fn firmware(&self, fw: &FirmwareArgs) -> Result<PathBuf, JostleError> {
        if self.board()?.is_some() && fw.elf.is_none() {
            return Err(JostleError::Usage(
                "--probe runs an ELF built for the board (e.g. `cargo firmware-nrf52840`); give its path".into(),
            ));
        }
        resolve_firmware(fw, self.host)
    }

    /// The runner: QEMU, the host port, or the board (attached and flashed once).
    pub(crate) fn runner(&self, path: PathBuf, timeout: f64) -> Result<Runner, JostleError> {
        let limits = self.bounds.limits(timeout)?;
        match self.board()? {
            Some((chip, selector)) => Runner::probe(path, &chip, &selector, limits),
            None => Runner::with_limits(path, self.host, limits),
        }
    }

    /// How the command line names this target, for replay commands.
    pub(crate) fn describe(&self) -> String {
        use jostle_host_tools::output::shell::quote;
        match self.board() {
            Ok(Some((chip, sel))) if sel.is_empty() => format!(" --probe --chip {}", quote(&chip)),
            Ok(Some((chip, sel))) => format!(" --probe {} --chip {}", quote(&sel), quote(&chip)),
            _ if self.host => " --host".into(),
            _ => String::new(),
        }
    }
}

/// How long and how much one run may go on, besides `--timeout` (silence).
#[derive(Args, Clone)]
pub(crate) struct RunBounds {
    /// Wall-clock limit of one run, output or not (each run of a boot has its own): past
    /// it the run is killed, verdict timeout [default: 300, or --timeout when longer].
    #[arg(long, value_parser = seconds, value_name = "SECS")]
    pub(crate) run_limit: Option<f64>,
    /// Most bytes of output one run may write: past it the run is killed (exit 42).
    #[arg(long, default_value_t = Limits::DEFAULT_OUTPUT, value_parser = clap::value_parser!(u64).range(1..), value_name = "BYTES")]
    pub(crate) max_output: u64,
}

impl RunBounds {
    /// The limits of each run, with `timeout` seconds of silence.
    pub(crate) fn limits(&self, timeout: f64) -> Result<Limits, JostleError> {
        Limits::from_command_line(timeout, self.run_limit, self.max_output)
    }
}

/// Which firmware: an ELF path, or a package and binary to build (as `cargo embed` does).
#[derive(Args, Clone)]
pub(crate) struct FirmwareArgs {
    /// Firmware ELF (or, with --host, a host-port executable).
    pub(crate) elf: Option<PathBuf>,
    /// Package to build the firmware from.
    #[arg(short = 'p', long, requires = "bin")]
    pub(crate) package: Option<String>,
    /// Binary of that package.
    #[arg(long, requires = "package")]
    pub(crate) bin: Option<String>,
    /// Cargo target directory for the build.
    #[arg(long, env = "JOSTLE_TARGET_DIR")]
    pub(crate) target_dir: Option<PathBuf>,
    /// Which of the firmware's declared tests (`jostle::tests!`) runs, by name.
    #[arg(long, value_name = "NAME")]
    pub(crate) test: Option<String>,
}

impl FirmwareArgs {
    /// The configuration block's `test` for the firmware at `path`: the index of `--test`
    /// among its declared tests, 0 without `--test`.
    pub(crate) fn selected_test(&self, path: &std::path::Path) -> Result<u32, JostleError> {
        use jostle_host_tools::trace::declared::{declared_tests, test_index};
        match &self.test {
            None => Ok(0),
            Some(name) => test_index(declared_tests(path)?.as_deref(), name),
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Trace {
    Full,
    Sync,
    Results,
}

/// `--strategy`: a name from the kernel's strategy registry, with its help.
pub(crate) fn strategy_parser() -> impl clap::builder::TypedValueParser<Value = StrategyId> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = StrategyId::ALL
        .iter()
        .map(|s| PossibleValue::new(s.name()).help(s.help().trim()));
    PossibleValuesParser::new(values)
        .map(|name| StrategyId::from_name(&name).expect("clap only passes the registry's names"))
}

/// How an active run is steered.
#[derive(Args, Clone)]
pub(crate) struct StrategyArgs {
    /// The scheduling strategy.
    #[arg(long, default_value = "random", value_parser = strategy_parser())]
    pub(crate) strategy: StrategyId,
    /// What to aim at: a candidate id from the prediction file, or sites
    /// `file.rs:LINE:COL,file.rs:LINE:COL`.
    #[arg(long)]
    pub(crate) target: Option<String>,
    /// The prediction file that candidate ids come from.
    #[arg(long, default_value = "jostle-report/prediction.json")]
    pub(crate) prediction: PathBuf,
    /// AtomFuzzer's pause probability q.
    #[arg(long, default_value_t = 0.5)]
    pub(crate) q: f64,
    /// PCT's depth d (bugs of depth d are found with probability >= 1/(n k^(d-1))), at most
    /// 9 (the kernel keeps 8 change points).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=i64::from(jostle_kernel::strategy::PCT_MAX_DEPTH)))]
    pub(crate) pct_depth: u32,
    /// PCT's step bound k, in scheduling steps (0: the length of a Random run of the same
    /// seed, measured first).
    #[arg(long, default_value_t = 0)]
    pub(crate) pct_steps: u32,
    /// Scheduling steps a postponed task may wait before it is released (at least 1).
    #[arg(long, default_value_t = jostle_kernel::config::DEFAULT_LIVELOCK_BOUND, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) livelock_bound: u32,
}

/// What every run of a multi-run command shares.
#[derive(Args, Clone)]
pub(crate) struct EachRun {
    /// First seed.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// A firmware argument (repeat for more).
    #[arg(long = "arg")]
    pub(crate) args: Vec<u32>,
    /// Most scheduling steps per run.
    #[arg(long, default_value_t = jostle_kernel::config::DEFAULT_STEP_LIMIT)]
    pub(crate) step_limit: u32,
    /// Seconds a run may go without output before it is killed (verdict timeout; on the
    /// host port, the run's wall-clock limit).
    #[arg(long, default_value_t = 10.0, value_parser = seconds, value_name = "SECS")]
    pub(crate) timeout: f64,
    /// Run on the host port instead of QEMU.
    #[arg(long)]
    pub(crate) host: bool,
    #[command(flatten)]
    pub(crate) bounds: RunBounds,
}

/// Longest duration a seconds option takes: a year (a `Duration` holds far more, but no
/// run needs it, and the bound keeps every conversion finite).
pub(crate) const MAX_SECONDS: f64 = 366.0 * 86_400.0;

/// `--timeout` and the other options in seconds: a number greater than 0 and at most a
/// year (`NaN`, `inf`, negative numbers and 0 are refused).
pub(crate) fn seconds(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| "expected a number of seconds".to_owned())?;
    if !(v > 0.0 && v <= MAX_SECONDS) {
        return Err(format!(
            "expected a number of seconds greater than 0 and at most {MAX_SECONDS}"
        ));
    }
    Ok(v)
}

/// `path` as text, or a refusal (exit 2) naming `what`: a path that is not UTF-8 cannot be
/// written in a report's replay commands (report.json is text) nor printed so that it runs.
pub(crate) fn utf8_path<'p>(what: &str, path: &'p std::path::Path) -> Result<&'p str, JostleError> {
    path.to_str().ok_or_else(|| {
        JostleError::Usage(format!(
            "{what} {}: the path is not UTF-8, and the report's replay commands must name it; rename it, or give a UTF-8 path to it (a link)",
            path.display()
        ))
    })
}

pub(crate) fn resolve_firmware(fw: &FirmwareArgs, host: bool) -> Result<PathBuf, JostleError> {
    match (&fw.elf, &fw.package, &fw.bin) {
        (Some(path), None, None) => Ok(path.clone()),
        (None, Some(p), Some(b)) => {
            let target = if host { None } else { Some(QEMU_TARGET) };
            cargo_build(p, b, target, fw.target_dir.as_deref())
        }
        _ => Err(JostleError::Usage(
            "give a firmware ELF, or -p PACKAGE --bin BIN (not both)".into(),
        )),
    }
}

impl Trace {
    pub(crate) fn level(self) -> TraceLevel {
        match self {
            Trace::Full => TraceLevel::Full,
            Trace::Sync => TraceLevel::Sync,
            Trace::Results => TraceLevel::Results,
        }
    }
}

/// A Random-strategy configuration with these settings, checked.
pub(crate) fn base_config(
    seed: u64,
    step_limit: u32,
    args: &[u32],
    trace: TraceLevel,
) -> Result<Config, JostleError> {
    if step_limit == 0 {
        return Err(JostleError::Usage("--step-limit must be at least 1".into()));
    }
    let args = jostle_kernel::fixed::Vec::from_slice(args).map_err(|()| {
        JostleError::Usage(format!(
            "at most {} --arg values",
            jostle_kernel::config::MAX_ARGS
        ))
    })?;
    Ok(Config {
        seed,
        step_limit,
        trace,
        args,
        ..Config::default()
    })
}

impl EachRun {
    /// The configuration every run starts from (the seed is set per run).
    pub(crate) fn config(&self, trace: TraceLevel) -> Result<Config, JostleError> {
        base_config(self.seed, self.step_limit, &self.args, trace)
    }

    /// Builds or loads the firmware and the runner for it.
    pub(crate) fn runner(&self, firmware: &FirmwareArgs) -> Result<Runner, JostleError> {
        let path = resolve_firmware(firmware, self.host)?;
        Runner::with_limits(path, self.host, self.bounds.limits(self.timeout)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_refuse_what_is_not_a_positive_finite_number() {
        assert_eq!(seconds("2.5"), Ok(2.5));
        assert_eq!(seconds(" 10 "), Ok(10.0));
        for bad in [
            "NaN", "nan", "inf", "-inf", "infinity", "1e400", "-1", "0", "-0", "", "abc", "1s",
        ] {
            assert!(seconds(bad).is_err(), "{bad} accepted");
        }
        assert!(seconds(&(MAX_SECONDS * 2.0).to_string()).is_err());
    }
}
