//! Waiting for a run's process under a wall-clock limit.

use crate::error::JostleError;
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
