//! Processes in the end-to-end tests: copies of firmware whose QEMUs can be found, signals,
//! waits with limits, and stand-ins for QEMU.

use super::elf;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A copy of `bin`'s ELF at a path of its own, so that its QEMUs can be told from those of
/// other tests.
pub fn own_copy(dir: &Path, bin: &str) -> PathBuf {
    let path = dir.join(format!("{bin}-{}", std::process::id()));
    std::fs::copy(elf(bin), &path).unwrap();
    path
}

/// The QEMUs booting `path` (`-kernel PATH` on their command line).
pub fn processes_of(path: &Path) -> Vec<u32> {
    let needle = [b"-kernel\0", path.to_str().unwrap().as_bytes()].concat();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        // A zombie has an empty command line: it is dead.
        if cmdline.windows(needle.len()).any(|w| w == needle) {
            pids.push(pid);
        }
    }
    pids
}

/// Waits until `done`, at most `limit` (then fails, naming `what`).
pub fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends signal `name` (`INT`, `TERM`, ...) to `child`.
pub fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits for `child`, at most `limit` (then kills it and fails).
pub fn exit_code_within(child: &mut Child, limit: Duration) -> Option<i32> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("jostle did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What `child` wrote on its (piped) stderr.
pub fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut text).unwrap();
    text
}

/// No QEMU of `fw` is left, and the temporary directory `tmp` is empty.
pub fn assert_clean(fw: &Path, tmp: &Path) {
    // The kernel reaps a killed QEMU quickly, but not synchronously.
    wait_until(
        "every QEMU of the campaign is gone",
        Duration::from_secs(5),
        || processes_of(fw).is_empty(),
    );
    let left: Vec<_> = std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// A stand-in for QEMU (`JOSTLE_QEMU`): an executable shell script in `dir`.
pub fn fake_qemu(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}
