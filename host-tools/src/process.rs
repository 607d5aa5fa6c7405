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
