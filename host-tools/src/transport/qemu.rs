//! The QEMU transport: the configuration block goes in with `-device loader`, the defmt
//! bytes come out on stdout (semihosting), the verdict is also QEMU's exit code. Several
//! seeds run in one boot (the firmware resets itself between them); the stream is split at
//! each `RunStart`.

use super::Transport;
use crate::error::JostleError;
use crate::trace::board::{Board, ConfigIn, Stream};
use crate::trace::decode::{FrameDecoder, Item, RunStarts};
use crate::trace::elf::Firmware;
use crate::trace::run::{Ending, Port, RunOutcome};
use crate::trace::space::SiteSpace;
use crate::transport::process::{self, Kill, Limits, Progress};
use crate::transport::qmp::QmpSocket;
use crate::transport::served::Sessions;
use jostle_kernel::Config;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// QEMU as a transport: a loaded ELF, how QEMU is started, and the served boots that make
/// its runs ([`super::served`]).
pub struct QemuTransport {
    /// The firmware.
    pub fw: Firmware,
    /// How QEMU is started (its timeout is each run's limit).
    pub qemu: Qemu,
    /// The idle served boots (`None`: one boot per run, or per batch of seeds).
    pub sessions: Option<Sessions>,
}

impl QemuTransport {
    /// Loads the ELF at `path`; each run is limited to `timeout` without output (and to
    /// the default wall-clock time and output).
    pub fn load(path: &Path, timeout: Duration) -> Result<QemuTransport, JostleError> {
        Self::load_limited(path, Limits::quiet(timeout))
    }

    /// Loads the ELF at `path`; each run is held to `limits`.
    pub fn load_limited(path: &Path, limits: Limits) -> Result<QemuTransport, JostleError> {
        let fw = super::load_firmware(path)?;
        let qemu = Qemu {
            timeout: limits.quiet,
            run_limit: limits.wall,
            max_output: limits.output,
            ..Qemu::for_board(&fw.board)?
        };
        // `JOSTLE_SERVE=0`: a QEMU boot per run, or per batch of seeds, as before served
        // boots (to compare, or for a board crate that cannot serve).
        let serve = std::env::var("JOSTLE_SERVE").map_or(true, |v| v != "0");
        let sessions = (serve && Sessions::can_serve(&fw)).then(Sessions::default);
        Ok(QemuTransport { fw, qemu, sessions })
    }
}

impl Transport for QemuTransport {
    fn path(&self) -> &Path {
        &self.fw.path
    }

    fn space(&self) -> SiteSpace<'_> {
        SiteSpace::Elf(&self.fw)
    }

    fn run(&self, config: Config, block: Option<&Path>) -> Result<RunOutcome, JostleError> {
        let (config, raw) = match block {
            // The run is the block's, whatever the options say: its configuration is the
            // one reported (seed, strategy, ...).
            Some(block) => (
                read_block_file(block, "--config-file", RAM_BLOCK_FILE_MAX)?,
                self.qemu.run_with_block(&self.fw, Some(block))?,
            ),
            None => {
                if let Some(sessions) = &self.sessions {
                    return self.served(sessions, Config { runs: 1, ..config });
                }
                let raw = self.qemu.run(&self.fw, &config)?;
                (config, raw)
            }
        };
        Ok(RunOutcome::from_qemu(&self.fw, config, raw))
    }

    fn run_boot(&self, first: Config) -> Result<Vec<RunOutcome>, JostleError> {
        if let Some(sessions) = &self.sessions {
            // Each seed in turn, all in the served boot: a run with an error is the last.
            let mut outcomes = Vec::new();
            for k in 0..first.runs.max(1) {
                let config = Config {
                    seed: first.seed.wrapping_add(u64::from(k)),
                    runs: 1,
                    ..first.clone()
                };
                let outcome = self.served(sessions, config)?;
                let error = outcome.error.is_some();
                outcomes.push(outcome);
                if error {
                    break;
                }
            }
            return Ok(outcomes);
        }
        // The limit is on silence, so each run keeps its own (see `Qemu`).
        let raw = self.qemu.run(&self.fw, &first)?;
        Ok(RunOutcome::batch_from_qemu(&self.fw, first, raw))
    }

    fn run_from_flash(&self, flash: &Path) -> Option<Result<RunOutcome, JostleError>> {
        let run = || {
            // What the flash block says, for the report of this run.
            let config = read_block_file(flash, "--flash-config", FLASH_BLOCK_FILE_MAX)?;
            let raw = self.qemu.run_with_blocks(&self.fw, None, Some(flash))?;
            Ok(RunOutcome::from_qemu(&self.fw, config, raw))
        };
        Some(run())
    }
}

/// Most bytes of a `--config-file`: the RAM block's region holds, 2 KiB in, what carries
/// the next run of a boot over a restart, which a longer file would overwrite.
pub const RAM_BLOCK_FILE_MAX: usize = 2048;
/// Most bytes of a `--flash-config` file: one 4 KiB flash page.
pub const FLASH_BLOCK_FILE_MAX: usize = 4096;

/// Reads a configuration block file given as `option` (at most `max` bytes): the
/// configuration it holds. A file that is empty, longer, holds no block (no magic: the
/// firmware would quietly run its defaults) or a block the firmware would reject is refused
/// (exit 15, as the firmware's own rejection), before any run.
pub fn read_block_file(path: &Path, option: &str, max: usize) -> Result<Config, JostleError> {
    let refuse =
        |why: String| JostleError::ConfigRejected(format!("{option} {}: {why}", path.display()));
    let bytes = std::fs::read(path)
        .map_err(|e| JostleError::io(format!("reading {}", path.display()), e))?;
    if bytes.is_empty() {
        return Err(refuse("the file is empty".into()));
    }
    if bytes.len() > max {
        return Err(refuse(format!(
            "{} bytes; a block file holds at most {max} (write one with `jostle config --out`)",
            bytes.len()
        )));
    }
    match Config::decode(&bytes) {
        Ok(Some(config)) => Ok(config),
        Ok(None) => Err(refuse(
            "no configuration block in it (no `JSTL` magic; write one with `jostle config --out`)"
                .into(),
        )),
        Err(rejection) => Err(refuse(rejection.message().into())),
    }
}

/// How to start QEMU.
#[derive(Clone, Debug)]
pub struct Qemu {
    /// The QEMU binary (`qemu-system-arm`, or `JOSTLE_QEMU`).
    pub binary: String,
    /// The machine (`mps2-an385`).
    pub machine: String,
    /// The CPU (`cortex-m3`).
    pub cpu: String,
    /// Silence limit of one run: QEMU is killed after this long without output (every run
    /// writes its start and its end, so with several runs per boot this is still the limit
    /// of each run).
    pub timeout: Duration,
    /// Wall-clock limit of one run, output or not (each run of a boot has its own: the
    /// clock starts again at each `RunStart` frame). QEMU is killed; the run times out.
    pub run_limit: Duration,
    /// Most bytes one run may write (each run of a boot has its own). QEMU is killed; the
    /// run ends with [`JostleError::OutputLimit`].
    pub max_output: u64,
}

impl Default for Qemu {
    fn default() -> Self {
        Qemu {
            binary: std::env::var("JOSTLE_QEMU").unwrap_or_else(|_| "qemu-system-arm".into()),
            machine: "mps2-an385".into(),
            cpu: "cortex-m3".into(),
            timeout: Duration::from_secs(10),
            run_limit: Limits::DEFAULT_WALL,
            max_output: Limits::DEFAULT_OUTPUT,
        }
    }
}

/// QEMU's `-device loader` option that puts `file` at `addr`: the path as its bytes (not
/// text: a `TMPDIR` or a `--config-file` that is not UTF-8 still names the file), its commas
/// doubled (QEMU's option syntax, where a comma separates options).
fn loader(file: &Path, addr: u32) -> std::ffi::OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut arg = b"loader,file=".to_vec();
    for &b in file.as_os_str().as_bytes() {
        arg.push(b);
        if b == b',' {
            arg.push(b',');
        }
    }
    arg.extend_from_slice(format!(",addr={addr:#x},force-raw=on").as_bytes());
    std::ffi::OsString::from_vec(arg)
}

/// The raw outcome of one boot.
#[derive(Debug)]
pub struct RawRun {
    /// Everything the firmware wrote on its frame channel (defmt frames).
    pub frames: Vec<u8>,
    /// What the application itself printed on QEMU's standard output (`hprintln!`, a
    /// panic handler's message), when the frames have a channel of their own (at most
    /// [`APP_OUTPUT_MAX`] bytes).
    pub app_output: Vec<u8>,
    /// QEMU's exit code (`None` if it was killed).
    pub exit_code: Option<i32>,
    /// A time limit (silence, or the run's wall-clock limit) was hit and QEMU was killed.
    pub timed_out: bool,
    /// The last run wrote more than this many bytes (its limit) and QEMU was killed.
    pub over_limit: Option<u64>,
    /// Where the CPU was when a time limit was hit, if QEMU said (see `transport::qmp`).
    pub stuck_pc: Option<u32>,
    /// What QEMU wrote on stderr.
    pub stderr: String,
    /// Wall time of the run.
    pub wall: Duration,
}

/// Most bytes of an application's own output kept per boot (the rest is read and dropped,
/// so that QEMU never blocks on it).
pub const APP_OUTPUT_MAX: u64 = 1 << 20;

/// A QEMU command ready to start, and the frame pipe it will write to (its write end goes to
/// QEMU as fd 3; ours is dropped once QEMU has started).
pub(super) struct QemuCommand {
    /// The command.
    pub cmd: Command,
    /// The frame pipe, when the board writes its frames there ([`Stream::Fd3`]).
    frames: Option<(std::io::PipeReader, std::io::PipeWriter)>,
    /// The QMP socket QEMU listens on, for an application that owns its panic and fault
    /// handlers (where a silent run's CPU spins is asked there before it is killed).
    pub qmp: Option<QmpSocket>,
}

impl QemuCommand {
    /// Starts QEMU with `spawn`: the child, and where its frames come out (the pipe, or
    /// its standard output).
    pub fn start(
        self,
        spawn: impl FnOnce(Command) -> Result<std::process::Child, JostleError>,
    ) -> Result<(std::process::Child, Box<dyn Read + Send>), JostleError> {
        let QemuCommand { cmd, frames, .. } = self;
        let mut child = spawn(cmd)?;
        let out: Box<dyn Read + Send> = match frames {
            // QEMU holds the write end now: ours would keep the pipe open after it exits.
            Some((reader, writer)) => {
                drop(writer);
                Box::new(reader)
            }
            None => Box::new(child.stdout.take().expect("piped stdout")),
        };
        Ok((child, out))
    }
}

impl Qemu {
    /// How to start QEMU for `board` (its machine and CPU); refused for a hardware board.
    pub fn for_board(board: &Board) -> Result<Qemu, JostleError> {
        match (&board.machine, &board.cpu) {
            (Some(machine), Some(cpu)) => Ok(Qemu {
                machine: machine.clone(),
                cpu: cpu.clone(),
                ..Qemu::default()
            }),
            _ => Err(JostleError::Usage(format!(
                "this ELF was built for the {} board, which QEMU does not emulate: run it with --probe",
                board.name
            ))),
        }
    }

    /// Boots `fw` once with `config` written into its configuration block.
    pub fn run(&self, fw: &Firmware, config: &Config) -> Result<RawRun, JostleError> {
        let (_dir, block) = process::block_file(config)?;
        self.boot(fw, Some(&block), None, config.runs)
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
        self.boot(fw, block, flash, 1)
    }

    /// The command that boots `fw` with a RAM block file and a flash block file (each
    /// optional), in a process group of its own, its output piped.
    pub(super) fn command(
        &self,
        fw: &Firmware,
        block: Option<&std::path::Path>,
        flash: Option<&std::path::Path>,
    ) -> Result<QemuCommand, JostleError> {
        let mut cmd = Command::new(&self.binary);
        cmd.args(["-machine", &self.machine, "-cpu", &self.cpu])
            .args(["-nographic", "-monitor", "none", "-serial", "none"])
            .args(["-semihosting-config", "enable=on,target=native"])
            // Instruction counting: no decision may depend on host time.
            .args(["-icount", "shift=0"])
            .arg("-kernel")
            .arg(&fw.path);
        if let Some(block) = block {
            cmd.arg("-device").arg(loader(block, fw.config_addr));
        }
        if let Some(flash) = flash {
            let addr = fw.config_flash_addr.ok_or_else(|| {
                JostleError::Usage(format!(
                    "{}: the board has no JOSTLE_CONFIG_FLASH page",
                    fw.path.display()
                ))
            })?;
            cmd.arg("-device").arg(loader(flash, addr));
        }
        // An app's own handlers may spin silently (panic-halt): ask where, at the limit.
        let qmp = fw.board.framework.as_ref().and_then(|_| QmpSocket::new());
        if let Some(qmp) = &qmp {
            cmd.arg("-qmp").arg(qmp.arg());
        }
        process::own_group(&mut cmd)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let frames = match fw.board.stream {
            Stream::Fd3 => {
                let (reader, writer) =
                    std::io::pipe().map_err(|e| JostleError::io("creating the frame pipe", e))?;
                process::as_fd3(&mut cmd, &writer);
                Some((reader, writer))
            }
            Stream::Stdout | Stream::Rtt => None,
        };
        Ok(QemuCommand { cmd, frames, qmp })
    }

    /// Starts a command made by [`Qemu::command`].
    fn spawn(&self, mut cmd: Command) -> Result<std::process::Child, JostleError> {
        process::spawn(&mut cmd, |e| self.not_started(e))
    }

    /// Starts a command made by [`Qemu::command`] that may outlive the calling thread.
    pub(super) fn spawn_lasting(&self, cmd: Command) -> Result<std::process::Child, JostleError> {
        process::spawn_lasting(cmd, |e| self.not_started(e))
    }

    fn not_started(&self, e: std::io::Error) -> JostleError {
        if e.kind() == std::io::ErrorKind::NotFound {
            JostleError::QemuMissing(self.binary.clone())
        } else {
            JostleError::io(format!("starting {}", self.binary), e)
        }
    }

    /// One boot of `runs` runs (each held to the limits).
    fn boot(
        &self,
        fw: &Firmware,
        block: Option<&std::path::Path>,
        flash: Option<&std::path::Path>,
        runs: u32,
    ) -> Result<RawRun, JostleError> {
        // A board that reads its first block from standard input gets it there.
        let by_stdin = match (fw.board.config, block) {
            (ConfigIn::Stdin, Some(block)) => Some(
                std::fs::read(block)
                    .map_err(|e| JostleError::io(format!("reading {}", block.display()), e))?,
            ),
            _ => None,
        };
        let in_ram = if by_stdin.is_some() { None } else { block };
        let mut cmd = self.command(fw, in_ram, flash)?;
        cmd.cmd.stdin(if by_stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let started = Instant::now();
        let qmp = cmd.qmp.take();
        let (mut child, out) = cmd.start(|cmd| self.spawn(cmd))?;
        if let (Some(bytes), Some(mut input)) = (by_stdin, child.stdin.take()) {
            // The input then closes: a boot that wants another block ends.
            use std::io::Write;
            let _ = input.write_all(&bytes);
        }
        let mut err = child.stderr.take().expect("piped stderr");
        // With the frames on a pipe of their own, QEMU's standard output is the app's text.
        let app = child.stdout.take();
        // Each run's limits hold from its `RunStart` frame; where runs cannot be told apart
        // in the stream, the boot as a whole gets the share of all its runs.
        let starts = RunStarts::new(&fw.table);
        let limits = Limits {
            quiet: self.timeout,
            wall: self.run_limit,
            output: self.max_output,
        };
        let limits = if starts.is_some() {
            limits
        } else {
            limits.times(runs)
        };
        let progress = Progress::new();
        let mut stuck_pc = None;
        let (frames, app_output, stderr, waited) = std::thread::scope(|scope| {
            let (progress, limits) = (&progress, &limits);
            let reader = scope.spawn(move || {
                let mut starts = starts;
                process::read_runs(out, limits.output, progress, |buf| {
                    starts.as_mut().map(|s| s.scan(buf)).unwrap_or_default()
                })
            });
            let app_reader = scope.spawn(move || app.map(read_app_output).unwrap_or_default());
            let err_reader = scope.spawn(move || {
                let mut buf = Vec::new();
                let _ = (&mut err).take(1 << 20).read_to_end(&mut buf);
                // Whatever QEMU writes past 1 MiB is not read, but QEMU must not block.
                let _ = std::io::copy(&mut err, &mut std::io::sink());
                String::from_utf8_lossy(&buf).into_owned()
            });
            let waited = process::watch_then(&mut child, limits, progress, "QEMU", || {
                stuck_pc = qmp.as_ref().and_then(QmpSocket::program_counter);
            });
            (
                reader.join().unwrap_or_default(),
                app_reader.join().unwrap_or_default(),
                err_reader.join().unwrap_or_default(),
                waited,
            )
        });
        let (exit_code, kill) = waited?;
        if kill == Some(Kill::Stopped) {
            return Err(JostleError::Interrupted);
        }
        Ok(RawRun {
            frames,
            app_output,
            exit_code,
            timed_out: matches!(kill, Some(Kill::Quiet | Kill::Wall)),
            over_limit: (kill == Some(Kill::Output)).then_some(limits.output),
            stuck_pc,
            stderr,
            wall: started.elapsed(),
        })
    }
}

impl QemuTransport {
    /// One run in a served boot.
    fn served(&self, sessions: &Sessions, config: Config) -> Result<RunOutcome, JostleError> {
        let served = sessions.run(&self.qemu, &self.fw, &config)?;
        let (items, mut ending) = decode_boot(&self.fw, &served.raw, !served.served_on);
        if served.served_on {
            // The boot goes on: as for a run of a boot that reset after it, its exit code
            // is its verdict's.
            ending.exit_code = crate::trace::run::verdict_exit_code(&items);
        }
        Ok(RunOutcome::from_items(
            Port::Qemu,
            config,
            items,
            Some(&self.fw),
            ending,
        ))
    }
}

impl RunOutcome {
    /// Decodes a QEMU boot of `fw`.
    pub fn from_qemu(fw: &Firmware, config: Config, raw: RawRun) -> RunOutcome {
        let (items, ending) = decode_boot(fw, &raw, true);
        Self::from_items(Port::Qemu, config, items, Some(fw), ending)
    }

    /// Decodes a QEMU boot that ran several seeds (`config.runs`): one outcome per run, in
    /// order, split at each `RunStart`. Each outcome's configuration is that run's alone
    /// (seed `config.seed + k`, one run), so it replays by itself. Runs the boot did not
    /// reach (a run that never ended was killed) are absent: the caller runs them again.
    pub fn batch_from_qemu(fw: &Firmware, config: Config, raw: RawRun) -> Vec<RunOutcome> {
        let (items, ending) = decode_boot(fw, &raw, true);
        Self::split_boot(Port::Qemu, config, items, Some(fw), ending)
    }
}

/// Reads an application's own output to its end, keeping the first [`APP_OUTPUT_MAX`]
/// bytes (QEMU must never block on a pipe nobody reads).
pub(super) fn read_app_output(mut out: impl Read) -> Vec<u8> {
    let mut buf = Vec::new();
    let _ = (&mut out).take(APP_OUTPUT_MAX).read_to_end(&mut buf);
    let _ = std::io::copy(&mut out, &mut std::io::sink());
    buf
}

/// A boot's items and how it ended (`ended`: QEMU is gone; a served boot that goes on has
/// no exit code yet).
fn decode_boot(fw: &Firmware, raw: &RawRun, ended: bool) -> (Vec<Item>, Ending) {
    let mut decoded = FrameDecoder::new(&fw.table).decode_all(&raw.frames);
    if !raw.app_output.is_empty() {
        let text = String::from_utf8_lossy(&raw.app_output).into_owned();
        decoded.items.push(Item::AppOutput(text));
    }
    let error = boot_error(decoded.error, decoded.frames, raw, ended);
    let ending = Ending {
        exit_code: raw.exit_code,
        timed_out: raw.timed_out,
        stuck_pc: raw.stuck_pc,
        error,
        frames: decoded.frames,
    };
    (decoded.items, ending)
}

/// What went wrong with a boot, besides its verdicts: the last run wrote more than it may
/// (its partial stream is cut, so that comes first), QEMU died of a signal `jostle` did not
/// send (whatever the stream looked like: cut anywhere, or whole but for the exit code the
/// verdict needs), the stream's own error, or QEMU ended before the firmware wrote anything
/// (whatever its exit code: a QEMU that exits at once, or a `JOSTLE_QEMU` that is no QEMU).
fn boot_error(
    stream: Option<JostleError>,
    frames: usize,
    raw: &RawRun,
    ended: bool,
) -> Option<JostleError> {
    if let Some(cap) = raw.over_limit {
        return Some(JostleError::OutputLimit(format!(
            "the run wrote more than {cap} bytes and was killed (raise --max-output if it is meant to)"
        )));
    }
    // Killed, and not by a limit (nor by a stop: that run is no run at all).
    if ended && raw.exit_code.is_none() && !raw.timed_out {
        return Some(JostleError::BootDied(format!(
            "killed by a signal jostle did not send, {frames} frames into the run"
        )));
    }
    if let (None, 0, Some(code)) = (&stream, frames, raw.exit_code) {
        let code = format!("exited with code {code}");
        return Some(JostleError::QemuFailed(
            match raw.stderr.lines().map(str::trim).find(|l| !l.is_empty()) {
                Some(line) => format!("{line} ({code})"),
                None => format!("{code} before the firmware wrote anything"),
            },
        ));
    }
    stream
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_boot_without_output_is_qemu_failing_whatever_its_exit_code() {
        let raw = |exit_code, stderr: &str| RawRun {
            frames: Vec::new(),
            app_output: Vec::new(),
            exit_code,
            timed_out: false,
            over_limit: None,
            stuck_pc: None,
            stderr: stderr.into(),
            wall: Duration::ZERO,
        };
        for (r, says) in [
            (
                raw(Some(0), ""),
                "exited with code 0 before the firmware wrote anything",
            ),
            (
                raw(Some(1), "\n  qemu: bad machine\n"),
                "qemu: bad machine (exited with code 1)",
            ),
        ] {
            let e = boot_error(None, 0, &r, true).expect("an error");
            assert_eq!(e.exit_code(), 27, "{e}");
            assert_eq!(e.to_string(), format!("QEMU failed: {says}"));
        }
        // Killed by a signal jostle did not send: a dead boot, whatever its stream said.
        let stream = JostleError::StreamCorrupt("the verdict disagrees".into());
        for (error, frames) in [(None, 0), (Some(stream), 40)] {
            let e = boot_error(error, frames, &raw(None, ""), true).expect("an error");
            assert!(matches!(e, JostleError::BootDied(_)), "{e}");
            assert_eq!(e.exit_code(), 27);
        }
        // A served boot that goes on has no exit code yet: it did not die.
        assert!(boot_error(None, 40, &raw(None, ""), false).is_none());
        // Output cut by the limit comes first; a silent run that timed out is no failure.
        let mut over = raw(None, "");
        over.over_limit = Some(10);
        assert_eq!(boot_error(None, 0, &over, true).unwrap().exit_code(), 42);
        let mut silent = raw(None, "");
        silent.timed_out = true;
        assert!(boot_error(None, 0, &silent, true).is_none());
    }

    #[test]
    fn block_files_that_hold_no_valid_block_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let good = Config {
            seed: 77,
            ..Config::default()
        };
        let ok = file("ok.bin", &good.encode());
        assert_eq!(read_block_file(&ok, "--config-file", 2048).unwrap(), good);
        let mut page = vec![0u8; 4096];
        good.encode_page(&mut page);
        let page = file("page.bin", &page);
        assert_eq!(
            read_block_file(&page, "--flash-config", 4096).unwrap(),
            good
        );
        let mut corrupt = good.encode();
        corrupt[30] ^= 1;
        for (name, bytes, why) in [
            ("empty.bin", vec![], "empty"),
            (
                "garbage.bin",
                b"not a block at all".repeat(20),
                "no configuration block",
            ),
            ("big.bin", vec![0u8; 5000], "5000 bytes"),
            ("corrupt.bin", corrupt.to_vec(), "checksum"),
        ] {
            let e = read_block_file(&file(name, &bytes), "--config-file", 2048).unwrap_err();
            assert_eq!(e.exit_code(), 15, "{name}: {e}");
            let text = e.to_string();
            assert!(text.contains(why) && text.contains(name), "{name}: {text}");
            assert_eq!(text.lines().count(), 1);
        }
        // A whole page is too long for the RAM block.
        assert!(read_block_file(&page, "--config-file", 2048).is_err());
    }
}
