//! What every run's process needs: its configuration block as a file, its own process
//! group, and a watch that kills it when the run goes silent, runs too long or writes too
//! much.

use crate::error::JostleError;
use jostle_kernel::Config;
use std::path::PathBuf;
use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// The limits of one run (each run of a boot of several has its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest silence (`--timeout`): a run that writes nothing for this long never ends.
    /// On the host port, whose runs write nothing until they are done, it is the run's
    /// wall-clock limit.
    pub quiet: Duration,
    /// Longest run, output or not (`--run-limit`): a run that never stops writing ends
    /// here.
    pub wall: Duration,
    /// Most bytes one run may write (`--max-output`).
    pub output: u64,
}

impl Limits {
    /// A run's wall-clock limit when the command line gives none: 5 minutes (or the
    /// silence limit, when longer).
    pub const DEFAULT_WALL: Duration = Duration::from_secs(300);
    /// Most bytes a run may write when the command line says nothing: 64 MiB, some 8
    /// million scheduling steps at full trace.
    pub const DEFAULT_OUTPUT: u64 = 64 << 20;

    /// The default limits around a silence limit of `quiet`.
    pub fn quiet(quiet: Duration) -> Limits {
        Limits {
            quiet,
            wall: Self::DEFAULT_WALL.max(quiet),
            output: Self::DEFAULT_OUTPUT,
        }
    }

    /// The limits of a boot of `runs` runs whose boundaries cannot be seen in its output:
    /// each run's share, all together.
    pub fn times(self, runs: u32) -> Limits {
        let runs = runs.max(1);
        Limits {
            quiet: self.quiet,
            wall: self.wall.saturating_mul(runs),
            output: self.output.saturating_mul(u64::from(runs)),
        }
    }
}

/// Why the watch killed a run's process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kill {
    /// Silent for [`Limits::quiet`].
    Quiet,
    /// The run lasted [`Limits::wall`].
    Wall,
    /// The run wrote more than [`Limits::output`] bytes.
    Output,
    /// `jostle` is stopping ([`stop`]).
    Stopped,
}

/// What the reader of a process's output tells its watch: when output last came, when the
/// current run started, and whether the run wrote more than it may.
#[derive(Debug)]
pub struct Progress {
    origin: Instant,
    last_output_ms: AtomicU64,
    run_started_ms: AtomicU64,
    over: AtomicBool,
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}

impl Progress {
    /// The clock of a process started now.
    pub fn new() -> Progress {
        Progress {
            origin: Instant::now(),
            last_output_ms: AtomicU64::new(0),
            run_started_ms: AtomicU64::new(0),
            over: AtomicBool::new(false),
        }
    }

    fn now_ms(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64
    }

    /// Output arrived.
    pub fn output(&self) {
        self.last_output_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// A new run of the boot started (its wall-clock limit starts again).
    pub fn run_started(&self) {
        self.run_started_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// The current run wrote more than it may: the watch kills the process.
    pub fn over(&self) {
        self.over.store(true, Ordering::Relaxed);
    }

    /// Time since the process started.
    pub fn elapsed(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// Waits for `child` until it exits, or kills it (and its process group) when a limit is
/// hit or `jostle` is stopping. Returns the exit code (`None` when killed) and why it was
/// killed. `what` names the process in errors.
pub fn watch(
    child: &mut Child,
    limits: &Limits,
    progress: &Progress,
    what: &str,
) -> Result<(Option<i32>, Option<Kill>), JostleError> {
    watch_then(child, limits, progress, what, || {})
}

/// [`watch`], calling `at_limit` before killing `child` at a time limit (the silence or the
/// run's wall clock), while it still runs: what a silent process is doing can be asked then.
pub fn watch_then(
    child: &mut Child,
    limits: &Limits,
    progress: &Progress,
    what: &str,
    at_limit: impl FnOnce(),
) -> Result<(Option<i32>, Option<Kill>), JostleError> {
    let tick = Duration::from_millis(20).min(limits.quiet);
    loop {
        let status = match child.wait_timeout(tick) {
            Ok(s) => s,
            Err(e) => {
                kill(child);
                return Err(JostleError::io(format!("waiting for {what}"), e));
            }
        };
        if let Some(s) = status {
            forget(child.id());
            // Killed by `stop` (no exit code): not the run's doing. A run whose output was
            // cut may have died of the closed pipe before it could be killed.
            let why = if s.code().is_none() && stopping() {
                Some(Kill::Stopped)
            } else if progress.over.load(Ordering::Relaxed) {
                Some(Kill::Output)
            } else {
                None
            };
            return Ok((s.code(), why));
        }
        let now = progress.elapsed();
        let since =
            |ms: &AtomicU64| now.saturating_sub(Duration::from_millis(ms.load(Ordering::Relaxed)));
        let why = if stopping() {
            Some(Kill::Stopped)
        } else if progress.over.load(Ordering::Relaxed) {
            Some(Kill::Output)
        } else if since(&progress.last_output_ms) >= limits.quiet {
            Some(Kill::Quiet)
        } else if since(&progress.run_started_ms) >= limits.wall {
            Some(Kill::Wall)
        } else {
            None
        };
        if let Some(why) = why {
            if matches!(why, Kill::Quiet | Kill::Wall) {
                at_limit();
            }
            kill(child);
            return Ok((None, Some(why)));
        }
    }
}

/// Kills `child`'s process group and reaps it.
pub fn kill(child: &mut Child) {
    kill_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
    forget(child.id());
}

/// Reads `out` to its end or until it has given more than `cap` bytes (then tells
/// `progress`, which has the process killed), telling `progress` of each chunk.
pub fn read_capped(out: impl std::io::Read, cap: u64, progress: &Progress) -> Vec<u8> {
    read_runs(out, cap, progress, |_| Vec::new())
}

/// Reads a process's output to its end, telling `progress` of each chunk and of each run
/// start, until the current run has written more than `cap` bytes (then tells `progress`,
/// which has the process killed, and cuts what came after). `starts` gives the offsets of
/// the runs that started in the output so far, each once, in order.
pub fn read_runs(
    mut out: impl std::io::Read,
    cap: u64,
    progress: &Progress,
    mut starts: impl FnMut(&[u8]) -> Vec<usize>,
) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    let mut run_from = 0;
    loop {
        let n = match out.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        progress.output();
        // Every run that started in this chunk: the one before it ended there.
        let mut over = false;
        for at in starts(&buf) {
            if (at - run_from) as u64 > cap {
                over = true;
                break;
            }
            run_from = at;
            progress.run_started();
        }
        if over || (buf.len() - run_from) as u64 > cap {
            // The run that wrote too much is the process's last: what came after is cut.
            let cap = usize::try_from(cap).unwrap_or(usize::MAX);
            buf.truncate(run_from.saturating_add(cap).saturating_add(1));
            progress.over();
            break;
        }
    }
    buf
}

/// Writes `config`'s encoded block to a file in a fresh temporary directory (removed when
/// the returned guard drops, or by [`remove_temporary_files`]) and returns both.
pub fn block_file(config: &Config) -> Result<(BlockDir, PathBuf), JostleError> {
    let dir = tempfile::Builder::new()
        .prefix("jostle-")
        .tempdir()
        .map_err(|e| JostleError::io("creating a temp dir", e))?;
    let block = dir.path().join("config.bin");
    std::fs::write(&block, config.encode())
        .map_err(|e| JostleError::io("writing the configuration block", e))?;
    registry().dirs.push(dir.path().to_owned());
    Ok((BlockDir(Some(dir)), block))
}

/// A run's temporary directory: removed when dropped.
pub struct BlockDir(Option<tempfile::TempDir>);

impl Drop for BlockDir {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            let path = dir.path().to_owned();
            registry().dirs.retain(|d| *d != path);
            let _ = dir.close();
        }
    }
}

/// Keeps a run's process out of the terminal's process group, so that Ctrl-C reaches
/// `jostle` (which stops a campaign cleanly, killing the runs in flight) and not the runs;
/// and, on Linux, has it killed when the thread of `jostle` that started it dies (with
/// `jostle` itself, however it ends), so that no QEMU outlives the tool.
pub fn own_group(cmd: &mut std::process::Command) -> &mut std::process::Command {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: the closure runs in the child between fork and exec and calls only
        // async-signal-safe functions (prctl, getppid); it allocates nothing.
        let parent = std::process::id() as libc::pid_t;
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent died before the request was made: it will never fire.
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
    cmd
}

/// Makes reads of `pipe` return at once (`WouldBlock`) when it holds nothing.
pub fn set_nonblocking(pipe: &impl std::os::fd::AsRawFd) {
    let fd = pipe.as_raw_fd();
    // SAFETY: fcntl on a descriptor the caller owns; only the status flags change.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

/// Gives the process `cmd` starts the pipe end `writer` as its file descriptor 3 (a QEMU
/// board's frame channel: the firmware opens `/dev/fd/3` through semihosting).
pub fn as_fd3(cmd: &mut std::process::Command, writer: &std::io::PipeWriter) {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let fd = writer.as_raw_fd();
        // SAFETY: the closure runs in the child between fork and exec and calls only
        // dup2 (async-signal-safe); it allocates nothing. dup2 leaves fd 3 open across
        // exec (the pipe's own descriptor is close-on-exec).
        unsafe {
            cmd.pre_exec(move || {
                if fd != 3 && libc::dup2(fd, 3) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if fd == 3 {
                    let flags = libc::fcntl(3, libc::F_GETFD);
                    libc::fcntl(3, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
                }
                Ok(())
            });
        }
    }
    #[cfg(not(unix))]
    let _ = (cmd, writer);
}

/// Starts `cmd` (made with [`own_group`]) as a run's process, known to [`stop`]; refused
/// with [`JostleError::Interrupted`] once `jostle` is stopping. `error` names a failure to
/// start.
pub fn spawn(
    cmd: &mut std::process::Command,
    error: impl FnOnce(std::io::Error) -> JostleError,
) -> Result<Child, JostleError> {
    registered(|| cmd.spawn(), error)
}

/// Starts a process with `start`, known to [`stop`] (see [`spawn`]).
fn registered(
    start: impl FnOnce() -> std::io::Result<Child>,
    error: impl FnOnce(std::io::Error) -> JostleError,
) -> Result<Child, JostleError> {
    // Under the lock: `stop` either sees this process or this call sees the stop.
    let mut reg = registry();
    if reg.stopping {
        return Err(JostleError::Interrupted);
    }
    let child = start().map_err(error)?;
    reg.pids.push(child.id());
    Ok(child)
}

/// As [`spawn`], from a thread that lives as long as `jostle`: a served QEMU
/// ([`super::served`]) outlives the worker thread that needed it, and on Linux a child is
/// killed when the thread that started it ends (see [`own_group`]).
pub fn spawn_lasting(
    cmd: std::process::Command,
    error: impl FnOnce(std::io::Error) -> JostleError,
) -> Result<Child, JostleError> {
    type Request = (
        std::process::Command,
        std::sync::mpsc::Sender<std::io::Result<Child>>,
    );
    static SPAWNER: std::sync::OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<Request>>> =
        std::sync::OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (send, requests) = std::sync::mpsc::channel::<Request>();
        std::thread::spawn(move || {
            for (mut cmd, reply) in requests {
                let _ = reply.send(cmd.spawn());
            }
        });
        std::sync::Mutex::new(send)
    });
    registered(
        || {
            let (reply, answer) = std::sync::mpsc::channel();
            let gone = || std::io::Error::other("the thread that starts processes is gone");
            let sent = spawner
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .send((cmd, reply));
            match sent {
                Ok(()) => answer.recv().unwrap_or_else(|_| Err(gone())),
                Err(_) => Err(gone()),
            }
        },
        error,
    )
}

/// The run processes alive and the temporary directories in use.
struct Registry {
    stopping: bool,
    pids: Vec<u32>,
    dirs: Vec<PathBuf>,
}

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    static REGISTRY: std::sync::Mutex<Registry> = std::sync::Mutex::new(Registry {
        stopping: false,
        pids: Vec::new(),
        dirs: Vec::new(),
    });
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// `pid` has exited and been reaped: [`stop`] has nothing to kill there any more.
pub fn forget(pid: u32) {
    registry().pids.retain(|p| *p != pid);
}

fn kill_group(pid: u32) {
    #[cfg(unix)]
    // SAFETY: kill(2) with a negative pid signals the process group the run leads.
    unsafe {
        libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Stops every run: no run process starts any more, and the ones alive are killed (their
/// runs end [`Kill::Stopped`] and are not counted). For Ctrl-C and termination signals.
pub fn stop() {
    let mut reg = registry();
    reg.stopping = true;
    for pid in &reg.pids {
        kill_group(*pid);
    }
}

/// Whether [`stop`] was called.
pub fn stopping() -> bool {
    registry().stopping
}

/// Removes the temporary directories of the runs in flight (for an exit that does not
/// wait for them: their guards never drop).
pub fn remove_temporary_files() {
    let dirs = std::mem::take(&mut registry().dirs);
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        own_group(&mut cmd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        cmd
    }

    /// Runs `script` under `limits` and returns its output and why it was killed.
    fn watched(script: &str, limits: Limits) -> (Vec<u8>, Option<Kill>, Duration) {
        let started = Instant::now();
        let mut child = spawn(&mut sh(script), |e| JostleError::io("sh", e)).unwrap();
        let out = child.stdout.take().unwrap();
        let progress = Progress::new();
        let (bytes, (_, kill)) = std::thread::scope(|s| {
            let reader = s.spawn(|| read_capped(out, limits.output, &progress));
            let waited = watch(&mut child, &limits, &progress, "sh").unwrap();
            (reader.join().unwrap(), waited)
        });
        (bytes, kill, started.elapsed())
    }

    #[test]
    fn a_run_that_never_stops_writing_ends_at_its_wall_clock_limit() {
        let limits = Limits {
            quiet: Duration::from_secs(5),
            wall: Duration::from_millis(700),
            output: u64::MAX,
        };
        // Writes a line every 50 ms forever: never silent, never too much.
        let (out, kill, took) = watched("while :; do echo tick; sleep 0.05; done", limits);
        assert_eq!(kill, Some(Kill::Wall));
        assert!(!out.is_empty());
        assert!(took < Duration::from_secs(4), "{took:?}");
    }

    #[test]
    fn a_run_that_writes_too_much_is_killed_with_its_output_capped() {
        let limits = Limits {
            quiet: Duration::from_secs(5),
            wall: Duration::from_secs(30),
            output: 1 << 20,
        };
        let (out, kill, took) = watched("yes jostle", limits);
        assert_eq!(kill, Some(Kill::Output));
        assert!(out.len() as u64 > limits.output);
        assert!((out.len() as u64) < limits.output + (64 << 10) + 1);
        assert!(took < Duration::from_secs(10), "{took:?}");
    }

    #[test]
    fn a_silent_run_is_killed_after_its_quiet_limit_and_a_finished_one_is_not() {
        let limits = Limits::quiet(Duration::from_millis(300));
        let (_, kill, _) = watched("sleep 30", limits);
        assert_eq!(kill, Some(Kill::Quiet));
        let (out, kill, _) = watched("echo done", limits);
        assert_eq!((out.as_slice(), kill), (&b"done\n"[..], None));
    }

    #[test]
    fn limits_of_a_boot_scale_with_its_runs() {
        let one = Limits::quiet(Duration::from_secs(10));
        assert_eq!(one.wall, Limits::DEFAULT_WALL);
        let five = one.times(5);
        assert_eq!(five.quiet, one.quiet);
        assert_eq!(five.wall, one.wall * 5);
        assert_eq!(five.output, one.output * 5);
        assert_eq!(
            Limits::quiet(Duration::from_secs(1000)).wall.as_secs(),
            1000
        );
    }
}
