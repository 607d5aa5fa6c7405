//! Where a silent firmware's CPU is, asked of QEMU before it is killed at the silence limit.
//!
//! An application that owns its panic handler may spin in it without a word (`panic-halt`'s
//! `loop {}`), and cortex-m-rt's default `HardFault` spins too: to the host both look like a
//! firmware that went quiet, a run listed apart as suspected and not failing the campaign.
//! Before such a run's QEMU is killed, its QMP socket (`-qmp unix:PATH,server=on,wait=off`)
//! is asked for the registers through the human monitor (`info registers`); the program
//! counter then names the function the CPU spins in (`trace::run` reads it).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a question to QEMU may take: QEMU answers its monitor between translation
/// blocks, in microseconds on an idle machine, but a QEMU starved of CPU (campaigns beside
/// it on 2 cores) may answer late, and an unanswered question turns a silent panic into a
/// timeout; a QEMU that does not answer is killed all the same.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// A QMP socket path for one QEMU, removed when dropped.
pub struct QmpSocket {
    path: PathBuf,
}

impl QmpSocket {
    /// A fresh socket path in the temporary directory, or `None` when the path would be too
    /// long for a Unix socket (108 bytes with its NUL) or not UTF-8 (QEMU's option syntax):
    /// the run then goes without the question.
    pub fn new() -> Option<QmpSocket> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("jostle-qmp-{}-{n}.sock", std::process::id()));
        let text = path.to_str()?;
        (text.len() < 100 && !text.contains(',')).then_some(QmpSocket { path })
    }

    /// QEMU's `-qmp` argument for this socket.
    pub fn arg(&self) -> String {
        format!("unix:{},server=on,wait=off", self.path.display())
    }

    /// The CPU's program counter, asked of the QEMU listening on this socket; `None` when
    /// it does not answer as QMP does.
    pub fn program_counter(&self) -> Option<u32> {
        ask_registers(&self.path).as_deref().and_then(r15)
    }
}

impl Drop for QmpSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// `info registers` through the QMP socket at `path`: the monitor's text.
fn ask_registers(path: &Path) -> Option<String> {
    let stream = UnixStream::connect(path).ok()?;
    stream.set_read_timeout(Some(ANSWER_WITHIN)).ok()?;
    stream.set_write_timeout(Some(ANSWER_WITHIN)).ok()?;
    let mut writer = stream.try_clone().ok()?;
    let mut reader = BufReader::new(stream);
    // The greeting, then the capabilities negotiation that opens command mode.
    answer(&mut reader, "QMP")?;
    writer
        .write_all(b"{\"execute\":\"qmp_capabilities\"}\n")
        .ok()?;
    answer(&mut reader, "return")?;
    writer
        .write_all(
            b"{\"execute\":\"human-monitor-command\",\"arguments\":{\"command-line\":\"info registers\"}}\n",
        )
        .ok()?;
    let reply = answer(&mut reader, "return")?;
    let value: serde_json::Value = serde_json::from_str(&reply).ok()?;
    value.get("return")?.as_str().map(str::to_owned)
}

/// The next line holding `key` as a JSON object key (asynchronous events are skipped).
fn answer(reader: &mut impl BufRead, key: &str) -> Option<String> {
    let quoted = format!("\"{key}\"");
    for _ in 0..64 {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line.contains("\"error\"") {
            return None;
        }
        if line.contains(&quoted) {
            return Some(line);
        }
    }
    None
}

/// The program counter in QEMU's Arm register dump (`R15=0000051e`).
fn r15(registers: &str) -> Option<u32> {
    let at = registers.find("R15=")? + "R15=".len();
    let hex: String = registers[at..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    u32::from_str_radix(&hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_counter_is_read_from_the_register_dump() {
        let dump = "R00=00000000 R01=20000f00 R02=00000001 R03=00000000\r\n\
                    R12=00000000 R13=2000ffd0 R14=fffffff9 R15=0000051e\r\nXPSR=61000003 -ZC- A handler\r\n";
        assert_eq!(r15(dump), Some(0x51e));
        assert_eq!(r15("no registers here"), None);
    }

    #[test]
    fn a_qmp_conversation_skips_events_and_stops_at_errors() {
        let text = "{\"event\": \"RESUME\"}\n{\"return\": \"R15=00000100\"}\n";
        let mut reader = BufReader::new(text.as_bytes());
        assert_eq!(
            answer(&mut reader, "return").as_deref(),
            Some("{\"return\": \"R15=00000100\"}\n")
        );
        let mut reader = BufReader::new("{\"error\": {\"class\": \"GenericError\"}}\n".as_bytes());
        assert_eq!(answer(&mut reader, "return"), None);
    }
}
