//! Building firmware with cargo, as `cargo embed` does: for the board's target, in release.

use crate::error::JostleError;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The target of the QEMU board (`mps2-an385`, Cortex-M3).
pub const QEMU_TARGET: &str = "thumbv7m-none-eabi";

/// Builds `package`'s binary `bin` for `target` (`None`: the host) and returns the path of
/// the executable. `target_dir` keeps nested builds off the caller's build lock.
pub fn cargo_build(
    package: &str,
    bin: &str,
    target: Option<&str>,
    target_dir: Option<&Path>,
) -> Result<PathBuf, JostleError> {
    build(
        None,
        package,
        bin,
        target,
        target.is_some(),
        target_dir,
        None,
    )
}

/// [`cargo_build`] for another board than the default one: the package's features are
/// only `board` (`--no-default-features --features BOARD`), built for `target`.
pub fn cargo_build_board(
    package: &str,
    bin: &str,
    board: &str,
    target: &str,
    target_dir: Option<&Path>,
) -> Result<PathBuf, JostleError> {
    build(
        None,
        package,
        bin,
        Some(target),
        true,
        target_dir,
        Some(board),
    )
}

/// [`cargo_build`] for a project of its own (a workspace outside Jostle's, such as
/// `examples/embassy`), given its `Cargo.toml`.
pub fn cargo_build_project(
    manifest: &Path,
    package: &str,
    bin: &str,
    target: Option<&str>,
    target_dir: Option<&Path>,
) -> Result<PathBuf, JostleError> {
    build(
        Some(manifest),
        package,
        bin,
        target,
        target.is_some(),
        target_dir,
        None,
    )
}

/// Builds `bin` of `package` for the host port in the release profile (for measurements
/// against other release builds); returns the executable.
pub fn cargo_build_host_release(
    package: &str,
    bin: &str,
    target_dir: Option<&Path>,
) -> Result<PathBuf, JostleError> {
    build(None, package, bin, None, true, target_dir, None)
}

fn build(
    manifest: Option<&Path>,
    package: &str,
    bin: &str,
    target: Option<&str>,
    release: bool,
    target_dir: Option<&Path>,
    board: Option<&str>,
) -> Result<PathBuf, JostleError> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--quiet",
        "--message-format=json-render-diagnostics",
    ])
    .args(["-p", package, "--bin", bin]);
    if let Some(manifest) = manifest {
        cmd.arg("--manifest-path").arg(manifest);
    }
    if release {
        cmd.arg("--release");
    }
    if let Some(target) = target {
        cmd.args(["--target", target]);
    }
    if let Some(board) = board {
        cmd.args(["--no-default-features", "--features", board]);
    }
    if let Some(dir) = target_dir {
        cmd.arg("--target-dir").arg(dir);
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::inherit());
    let out = cmd
        .output()
        .map_err(|e| JostleError::io("running cargo", e))?;
    if !out.status.success() {
        return Err(JostleError::BuildFailed(format!(
            "cargo build -p {package} --bin {bin} exited with {}",
            out.status
        )));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines().rev() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] == "compiler-artifact"
            && msg["target"]["name"] == bin
            && let Some(exe) = msg["executable"].as_str()
        {
            return Ok(PathBuf::from(exe));
        }
    }
    Err(JostleError::BuildFailed(format!(
        "cargo built no executable named `{bin}` in package `{package}`"
    )))
}
