//! Served QEMU boots: one QEMU runs run after run, so that a campaign's runs do not each
//! pay a QEMU start (some 20 ms, against a fraction of a millisecond for a small run).
//!
//! A boot starts with its first run's block in RAM (`-device loader`), `runs` set to
//! [`SERVED`]. When a run ends, the firmware reads the next run's whole block from
//! semihosting's standard input, which is QEMU's, and restarts with it (the kernel's warm
//! restart). The host writes that block when it wants the next run, and knows a run is
//! over from its `RunEnd` frame followed by the firmware's word that it waits for the next
//! block (`side::AWAITING_BLOCK`; a boot that ends with its run exits instead, and its exit
//! code is checked against the run's verdict). Each run keeps its own limits: a run that goes silent,
//! lasts too long or writes too much is killed with its QEMU, and the next run boots a new
//! one. A boot also ends after a fault (the firmware exits rather than reset, which would
//! bring back the first block) and when the transport is dropped (its input closes, the
//! firmware exits). Idle boots wait in a pool, one per worker at most.

use super::qemu::{Qemu, RawRun};
use crate::error::JostleError;
use crate::trace::board::ConfigIn;
use crate::trace::decode::RunStarts;
use crate::trace::elf::Firmware;
use crate::transport::process::{self, BlockDir};
use crate::transport::qmp::QmpSocket;
use jostle_kernel::Config;
use jostle_kernel::config::SERVED;
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The idle served boots of one firmware.
#[derive(Default)]
pub struct Sessions {
    idle: Mutex<Vec<Session>>,
    /// QEMU processes started so far (for the benchmark and the tests).
    boots: std::sync::atomic::AtomicU64,
}

/// One served boot.
struct Session {
    child: Child,
    input: Option<ChildStdin>,
    /// The firmware's frames, in chunks as they come; disconnected when QEMU has closed them.
    output: Receiver<Vec<u8>>,
    /// What the application prints on QEMU's standard output (frames on a channel of their
    /// own), read without blocking as the run goes (see [`AppText`]).
    app: Option<AppText>,
    /// Reads what QEMU writes on stderr; gives its first MiB when QEMU has exited.
    stderr: Option<std::thread::JoinHandle<String>>,
    /// Bytes read past the last run's end (none, with the firmware waiting for a block).
    pending: Vec<u8>,
    /// The first run's block file (QEMU reads it again on a system reset).
    _block: BlockDir,
    /// Where to ask a silent run's QEMU for its program counter (see `transport::qmp`).
    qmp: Option<QmpSocket>,
}

/// How a served run ended.
pub struct Served {
    /// The run's bytes and how its QEMU ended (`exit_code` only if it ended with the run).
    pub raw: RawRun,
    /// The run ended with its `RunEnd` frame and its QEMU waits for the next block.
    pub served_on: bool,
}

impl Sessions {
    /// Whether runs of `fw` can be served: its stream shows where each run ends (rzCOBS).
    pub fn can_serve(fw: &Firmware) -> bool {
        RunStarts::ends(&fw.table).is_some()
    }

    /// QEMU processes these sessions have started.
    pub fn boots(&self) -> u64 {
        self.boots.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Makes one run of `fw` under `config` in an idle served boot, or a new one.
    pub fn run(&self, qemu: &Qemu, fw: &Firmware, config: &Config) -> Result<Served, JostleError> {
        let block = Config {
            runs: SERVED,
            ..config.clone()
        };
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        if let Some(mut session) = idle {
            // A boot that died while idle (stopped, or a firmware that cannot serve and
            // exited after its first run) has taken no block, or gives nothing back.
            if session.send(&block).is_ok() {
                let served = session.collect(qemu, fw)?;
                if served.served_on || !served.raw.frames.is_empty() {
                    return Ok(self.keep(session, served));
                }
            }
            session.end();
        }
        let mut session = self.boot(qemu, fw, &block)?;
        let served = session.collect(qemu, fw)?;
        Ok(self.keep(session, served))
    }

    /// Puts `session` back in the pool if it serves on, else ends it.
    fn keep(&self, session: Session, served: Served) -> Served {
        if served.served_on {
            self.idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(session);
        } else {
            session.end();
        }
        served
    }

    /// Boots `fw` with `block` as its first run's.
    fn boot(&self, qemu: &Qemu, fw: &Firmware, block: &Config) -> Result<Session, JostleError> {
        let (dir, file) = process::block_file(block)?;
        // A board that reads its first block from standard input gets it there, as the
        // next ones; the others find it in RAM.
        let in_ram = fw.board.config == ConfigIn::Ram;
        let mut cmd = qemu.command(fw, in_ram.then_some(file.as_path()), None)?;
        cmd.cmd.stdin(Stdio::piped());
        let qmp = cmd.qmp.take();
        let (mut child, out) = cmd.start(|cmd| qemu.spawn_lasting(cmd))?;
        self.boots
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let input = child.stdin.take();
        let mut err = child.stderr.take().expect("piped stderr");
        let output = chunks(out);
        let app = child.stdout.take().map(AppText::new);
        let stderr = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut err).take(1 << 20).read_to_end(&mut buf);
            // Whatever QEMU writes past 1 MiB is not kept, but QEMU must not block.
            let _ = std::io::copy(&mut err, &mut std::io::sink());
            String::from_utf8_lossy(&buf).into_owned()
        });
        let mut session = Session {
            child,
            input,
            output,
            app,
            stderr: Some(stderr),
            pending: Vec::new(),
            _block: dir,
            qmp,
        };
        if !in_ram {
            // A QEMU that cannot take it has ended: its run says why.
            let _ = session.send(block);
        }
        Ok(session)
    }
}

/// The application's text on QEMU's standard output, read without blocking. QEMU writes it
/// (a semihosting write) before the guest goes on, so when a run's `RunEnd` frame has come
/// on the frame pipe, everything the run printed is in this pipe already: draining it then
/// gives the run exactly its own text, however the two pipes were read.
struct AppText {
    out: std::process::ChildStdout,
    /// The current run's text (at most [`super::qemu::APP_OUTPUT_MAX`] bytes; the rest is
    /// read and dropped, so that QEMU never blocks on the pipe).
    run: Vec<u8>,
}

impl AppText {
    fn new(out: std::process::ChildStdout) -> AppText {
        process::set_nonblocking(&out);
        AppText {
            out,
            run: Vec::new(),
        }
    }

    /// Reads what the pipe holds now, or (`to_end`) up to its end.
    fn drain(&mut self, to_end: bool) {
        let mut chunk = [0u8; 16 << 10];
        loop {
            match self.out.read(&mut chunk) {
                Ok(0) => return,
                Ok(n) => {
                    let room =
                        (super::qemu::APP_OUTPUT_MAX as usize).saturating_sub(self.run.len());
                    self.run.extend_from_slice(&chunk[..n.min(room)]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && to_end => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }
}

/// Reads `out` on a thread of its own, in chunks as they come (the receiver is disconnected
/// at its end).
fn chunks(mut out: impl Read + Send + 'static) -> Receiver<Vec<u8>> {
    let (send, chunks) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            match out.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if send.send(chunk[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    chunks
}

impl Drop for Sessions {
    fn drop(&mut self) {
        let idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|p| p.into_inner()));
        for session in idle {
            session.end();
        }
    }
}

impl Session {
    /// Sends the next run's block.
    fn send(&mut self, block: &Config) -> std::io::Result<()> {
        let input = self.input.as_mut().ok_or(std::io::ErrorKind::BrokenPipe)?;
        input.write_all(&block.encode())?;
        input.flush()
    }

    /// Reads the current run's output to its `RunEnd` frame and the firmware's word that
    /// it waits for the next block, or until QEMU ends (the run ended the boot: its exit
    /// code is checked against the verdict) or a limit kills it.
    fn collect(&mut self, qemu: &Qemu, fw: &Firmware) -> Result<Served, JostleError> {
        let started = Instant::now();
        let mut last_output = started;
        let framed = "a served firmware frames its stream";
        let mut ends = RunStarts::ends(&fw.table).expect(framed);
        let mut awaits = RunStarts::awaiting_block(&fw.table).expect(framed);
        let mut stdout = std::mem::take(&mut self.pending);
        // Frame delimiters before the run's first frame belong to no run (a boot that
        // exits after a fault writes some after its last `RunEnd`).
        let unframed = |bytes: &mut Vec<u8>| {
            if bytes.iter().all(|b| *b == 0) {
                bytes.clear();
            }
        };
        unframed(&mut stdout);
        let mut over_limit = None;
        let mut timed_out = false;
        let mut end = None;
        let mut served_on = None;
        loop {
            end = end.or_else(|| ends.scan(&stdout).first().copied());
            let written = end.unwrap_or(stdout.len()) as u64;
            if written > qemu.max_output {
                over_limit = Some(qemu.max_output);
                let keep = usize::try_from(qemu.max_output).unwrap_or(usize::MAX);
                stdout.truncate(keep.saturating_add(1));
                break;
            }
            if let Some(end) = end {
                served_on = awaits.scan(&stdout).into_iter().find(|at| *at > end);
            }
            if served_on.is_some() {
                break;
            }
            if let Some(app) = self.app.as_mut() {
                app.drain(false);
            }
            if process::stopping() {
                process::kill(&mut self.child);
                return Err(JostleError::Interrupted);
            }
            let now = Instant::now();
            let quiet = qemu.timeout.saturating_sub(now - last_output);
            let wall = qemu.run_limit.saturating_sub(now - started);
            if quiet.is_zero() || wall.is_zero() {
                timed_out = true;
                break;
            }
            // A short tick, so that a stop is seen soon.
            match self
                .output
                .recv_timeout(quiet.min(wall).min(Duration::from_millis(20)))
            {
                Ok(chunk) => {
                    stdout.extend_from_slice(&chunk);
                    unframed(&mut stdout);
                    last_output = Instant::now();
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        if let (Some(end), Some(next)) = (end, served_on) {
            self.pending = stdout.split_off(next);
            stdout.truncate(end);
            return Ok(Served {
                raw: RawRun {
                    frames: stdout,
                    app_output: self.app_output(false),
                    exit_code: None,
                    timed_out: false,
                    over_limit: None,
                    stuck_pc: None,
                    stderr: String::new(),
                    wall: started.elapsed(),
                },
                served_on: true,
            });
        }
        // The boot ends with this run: killed at a limit, or QEMU exited.
        let stuck_pc = if timed_out {
            self.qmp.as_ref().and_then(QmpSocket::program_counter)
        } else {
            None
        };
        let exit_code = if timed_out || over_limit.is_some() {
            process::kill(&mut self.child);
            None
        } else {
            self.input = None;
            let code = self.child.wait().ok().and_then(|s| s.code());
            process::forget(self.child.id());
            if code.is_none() && process::stopping() {
                return Err(JostleError::Interrupted);
            }
            code
        };
        // QEMU has exited or been killed: its stderr is closed.
        let stderr = self
            .stderr
            .take()
            .and_then(|r| r.join().ok())
            .unwrap_or_default();
        Ok(Served {
            raw: RawRun {
                frames: stdout,
                app_output: self.app_output(true),
                exit_code,
                timed_out,
                over_limit,
                stuck_pc,
                stderr,
                wall: started.elapsed(),
            },
            served_on: false,
        })
    }

    /// What the application printed during the run that just ended: everything in its pipe
    /// now, or up to its end when QEMU has ended (`to_end`).
    fn app_output(&mut self, to_end: bool) -> Vec<u8> {
        let Some(app) = self.app.as_mut() else {
            return Vec::new();
        };
        app.drain(to_end);
        let text = std::mem::take(&mut app.run);
        if to_end {
            self.app = None;
        }
        text
    }

    /// Ends the boot: its input closes (the firmware exits) and QEMU is killed and reaped.
    fn end(mut self) {
        self.input = None;
        process::kill(&mut self.child);
    }
}
