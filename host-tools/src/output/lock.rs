//! A report directory's lock: one `jostle` at a time writes into a report directory (two
//! campaigns into one directory would overwrite each other's temporary files and reports).
//!
//! The lock is the file `report.lock` in the directory, holding the pid of its holder,
//! created with `create_new` and removed when the holder is done. Whether it is held is
//! the holder's advisory file lock on it (`flock`), which the system drops when the holder
//! dies however it dies; so a lock file left by a dead process is taken over. Where the
//! file system has no file locks, a lock file whose pid is not alive is taken over.

use crate::error::JostleError;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The name of the lock file in a report directory.
pub const LOCK_FILE: &str = "report.lock";

/// A held report directory: the lock file is removed when this drops (or by
/// [`release_all`], for an exit that does not drop it), and so are the directories the lock
/// created, if nothing was written in them: a command refused after it took the lock leaves
/// no trace.
#[derive(Debug)]
pub struct ReportLock {
    path: PathBuf,
    file: Option<File>,
    /// Dropped after the lock file is removed.
    _created: CreatedDirs,
}

impl ReportLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ReportLock {
    fn drop(&mut self) {
        // Removed while still locked, so that nobody takes over a file about to vanish.
        let _ = std::fs::remove_file(&self.path);
        held().retain(|p| *p != self.path);
        drop(self.file.take());
    }
}

/// Directories [`lock`] created (outermost first), removed when dropped if they are empty.
#[derive(Debug)]
struct CreatedDirs(Vec<PathBuf>);

impl CreatedDirs {
    /// Creates `dir` and its missing parents.
    fn create(dir: &Path) -> std::io::Result<CreatedDirs> {
        let missing: Vec<PathBuf> = dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
            .map(Path::to_owned)
            .collect();
        // Made before the directories, so that a failure removes what was made.
        let created = CreatedDirs(missing.into_iter().rev().collect());
        std::fs::create_dir_all(dir)?;
        Ok(created)
    }
}

impl Drop for CreatedDirs {
    fn drop(&mut self) {
        // Innermost first; `remove_dir` leaves a directory that holds anything.
        for dir in self.0.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Takes the report directory `dir` (creating it) for this process, or says who holds it
/// ([`JostleError::ReportLocked`]).
pub fn lock(dir: &Path) -> Result<ReportLock, JostleError> {
    let created = CreatedDirs::create(dir)
        .map_err(|e| JostleError::io(format!("creating {}", dir.display()), e))?;
    let path = dir.join(LOCK_FILE);
    let io = |e| JostleError::io(format!("locking {}", path.display()), e);
    // A holder that finishes between two steps below removes its file: try again.
    for _ in 0..16 {
        let (mut file, made) = match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => (file, true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                match OpenOptions::new().read(true).write(true).open(&path) {
                    Ok(file) => (file, false),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(io(e)),
                }
            }
            Err(e) => return Err(io(e)),
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(locked(dir, holder(&mut file)));
            }
            Err(std::fs::TryLockError::Error(_)) => {
                // No file locks here: the pid in the file says whether it is held.
                if let Some(pid) = holder(&mut file)
                    && pid != std::process::id()
                    && alive(pid)
                {
                    return Err(locked(dir, Some(pid)));
                }
            }
        }
        if !still_at(&file, &path) {
            continue;
        }
        let taken = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "{}", std::process::id()))
            .and_then(|()| file.sync_all());
        if let Err(e) = taken {
            // A file that cannot take the pid (a full disk): not left behind.
            if made {
                let _ = std::fs::remove_file(&path);
            }
            return Err(io(e));
        }
        held().push(path.clone());
        return Ok(ReportLock {
            path,
            file: Some(file),
            _created: created,
        });
    }
    Err(locked(dir, None))
}

/// Removes the lock files this process holds (for an exit that drops nothing, e.g. a
/// second Ctrl-C).
pub fn release_all() {
    let paths = std::mem::take(&mut *held());
    for path in paths {
        let _ = std::fs::remove_file(path);
    }
}

fn held() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    static HELD: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

fn locked(dir: &Path, pid: Option<u32>) -> JostleError {
    let by = pid.map_or("another jostle".to_owned(), |p| {
        format!("another jostle (pid {p})")
    });
    JostleError::ReportLocked(format!(
        "{}: the report directory is in use by {by}; wait for it or choose another --out (a lock left by a dead process is taken over: {LOCK_FILE})",
        dir.display()
    ))
}

/// The pid written in a lock file.
fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.take(64).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// Whether process `pid` is alive.
fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the process exists.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Whether `file` is still the file at `path` (not one its holder removed meanwhile).
fn still_at(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let reports = dir.path().join("jostle-report");
        let first = lock(&reports).unwrap();
        let text = std::fs::read_to_string(first.path()).unwrap();
        assert_eq!(text.trim(), std::process::id().to_string());
        let e = lock(&reports).unwrap_err();
        assert_eq!(e.exit_code(), 43);
        let message = e.to_string();
        assert!(message.contains("in use by another jostle"), "{message}");
        assert!(
            message.contains(&format!("pid {}", std::process::id())),
            "{message}"
        );
        assert_eq!(message.lines().count(), 1);
        drop(first);
        assert!(!reports.join(LOCK_FILE).exists(), "removed on release");
        let again = lock(&reports).unwrap();
        drop(again);
    }

    #[test]
    fn a_lock_left_by_a_dead_process_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        // A pid that is surely dead: a child that has exited and been reaped.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        std::fs::write(dir.path().join(LOCK_FILE), format!("{dead}\n")).unwrap();
        let taken = lock(dir.path()).unwrap();
        let text = std::fs::read_to_string(taken.path()).unwrap();
        assert_eq!(text.trim(), std::process::id().to_string());
        // So is an empty or garbled one (its writer died before writing its pid).
        drop(taken);
        std::fs::write(dir.path().join(LOCK_FILE), "").unwrap();
        drop(lock(dir.path()).unwrap());
    }
}
