//! What every run's process needs: its configuration block as a file, and a wall-clock
//! limit.

use crate::error::JostleError;
use jostle_kernel::Config;
use std::path::PathBuf;
use std::process::Child;
use std::time::Duration;
use wait_timeout::ChildExt;

/// Waits for `child` at most `timeout`; past it, kills it. Returns the exit code (`None`
/// when killed) and whether the limit was hit. `what` names the process in errors.
pub fn wait_or_kill(
    child: &mut Child,
    timeout: Duration,
    what: &str,
) -> Result<(Option<i32>, bool), JostleError> {
    let status = child
        .wait_timeout(timeout)
        .map_err(|e| JostleError::io(format!("waiting for {what}"), e))?;
    Ok(match status {
        Some(s) => (s.code(), false),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            (None, true)
        }
    })
}

/// Waits for `child` until it exits or has been silent for `quiet`: `progress` holds the
/// milliseconds after `started` at which its output last arrived. A boot of several runs
/// writes at least the start and the end of each run, so silence longer than `quiet` is one
/// run that does not end (a run's own wall-clock limit, whatever the number of runs per
/// boot). Returns the exit code (`None` when killed) and whether it was killed.
pub fn wait_quiet_or_kill(
    child: &mut Child,
    quiet: Duration,
    started: std::time::Instant,
    progress: &std::sync::atomic::AtomicU64,
) -> Result<(Option<i32>, bool), JostleError> {
    let tick = Duration::from_millis(20).min(quiet);
    loop {
        if let Some(s) = child
            .wait_timeout(tick)
            .map_err(|e| JostleError::io("waiting for QEMU", e))?
        {
            return Ok((s.code(), false));
        }
        let last = Duration::from_millis(progress.load(std::sync::atomic::Ordering::Relaxed));
        if started.elapsed().saturating_sub(last) >= quiet {
            let _ = child.kill();
            let _ = child.wait();
            return Ok((None, true));
        }
    }
}

/// Writes `config`'s encoded block to a file in a fresh temporary directory (removed when
/// the returned guard drops) and returns both.
pub fn block_file(config: &Config) -> Result<(tempfile::TempDir, PathBuf), JostleError> {
    let dir = tempfile::tempdir().map_err(|e| JostleError::io("creating a temp dir", e))?;
    let block = dir.path().join("config.bin");
    std::fs::write(&block, config.encode())
        .map_err(|e| JostleError::io("writing the configuration block", e))?;
    Ok((dir, block))
}

/// Keeps a run's process out of the terminal's process group, so that Ctrl-C reaches
/// `jostle` (which stops the campaign cleanly) and not the runs in flight (which finish).
pub fn own_group(cmd: &mut std::process::Command) -> &mut std::process::Command {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    cmd
}
