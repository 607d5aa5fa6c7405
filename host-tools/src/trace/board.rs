//! The board an ELF was built for, from its descriptor (section `.jostle_board`, written by
//! the board crate: `jostle_kernel::descriptor`): which QEMU machine and CPU run it, or which
//! probe-rs chip, where its frames come out, how its configuration block goes in, and
//! whether an application framework owns its `main`.

use jostle_kernel::descriptor::{SECTION, STREAM_FD3};
use object::{Object, ObjectSection};

/// Where a firmware's defmt frames come out under QEMU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// A pipe of the host's, opened by the firmware as `/dev/fd/3`: QEMU's standard output
    /// is the application's own text.
    Fd3,
    /// QEMU's standard output (ELFs built before descriptors, and `stream=stdout`).
    Stdout,
    /// RTT, read by a probe (hardware boards).
    Rtt,
}

/// How the first configuration block of a boot reaches the firmware.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigIn {
    /// Written into RAM at `JOSTLE_CONFIG` before the boot (QEMU's loader, the probe).
    Ram,
    /// Read by the firmware from semihosting's standard input, as every served block is.
    Stdin,
}

/// What the descriptor says (defaults: the QEMU mps2-an385 board of ELFs without one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    /// The board's name.
    pub name: String,
    /// The QEMU machine (`None`: a hardware board).
    pub machine: Option<String>,
    /// The QEMU CPU.
    pub cpu: Option<String>,
    /// The probe-rs chip (hardware boards).
    pub chip: Option<String>,
    /// The Rust target the board builds for.
    pub target: Option<String>,
    /// The application framework that owns `main` (`rtic`, `embassy`), if any.
    pub framework: Option<String>,
    /// Where the frames come out.
    pub stream: Stream,
    /// How the first block goes in.
    pub config: ConfigIn,
}

impl Default for Board {
    fn default() -> Self {
        Board {
            name: "mps2-an385".into(),
            machine: Some("mps2-an385".into()),
            cpu: Some("cortex-m3".into()),
            chip: None,
            target: Some("thumbv7m-none-eabi".into()),
            framework: None,
            stream: Stream::Stdout,
            config: ConfigIn::Ram,
        }
    }
}

impl Board {
    /// The board of the ELF `file`: its descriptor, or the defaults when it has none.
    pub fn of(file: &object::File) -> Result<Board, String> {
        let Some(section) = file.section_by_name(SECTION) else {
            return Ok(Board::default());
        };
        let data = section.data().map_err(|e| format!("{SECTION}: {e}"))?;
        let text = std::str::from_utf8(data).map_err(|_| format!("{SECTION} is not text"))?;
        Board::parse(text).map_err(|e| format!("{SECTION}: {e}"))
    }

    /// Parses a descriptor's `key=value` lines. Unknown keys are kept out (a newer board
    /// may say more); a known key with a value this host does not know is refused.
    pub fn parse(text: &str) -> Result<Board, String> {
        let mut board = Board {
            name: String::new(),
            machine: None,
            cpu: None,
            chip: None,
            target: None,
            framework: None,
            stream: Stream::Stdout,
            config: ConfigIn::Ram,
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| format!("`{line}` is no key=value line"))?;
            let value = value.trim().to_owned();
            match key.trim() {
                "board" => board.name = value,
                "machine" => board.machine = Some(value),
                "cpu" => board.cpu = Some(value),
                "chip" => board.chip = Some(value),
                "target" => board.target = Some(value),
                "framework" => board.framework = Some(value).filter(|v| !v.is_empty()),
                "stream" => {
                    board.stream = match value.as_str() {
                        STREAM_FD3 => Stream::Fd3,
                        "stdout" => Stream::Stdout,
                        "rtt" => Stream::Rtt,
                        other => return Err(format!("unknown stream `{other}`")),
                    }
                }
                "config" => {
                    board.config = match value.as_str() {
                        "ram" => ConfigIn::Ram,
                        "stdin" => ConfigIn::Stdin,
                        other => return Err(format!("unknown config `{other}`")),
                    }
                }
                _ => {}
            }
        }
        if board.name.is_empty() {
            return Err("no `board=` line".into());
        }
        if board.machine.is_some() != board.cpu.is_some() {
            return Err("a QEMU board names both its machine and its cpu".into());
        }
        Ok(board)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descriptor_names_machine_cpu_stream_and_framework() {
        let b = Board::parse(
            "board=lm3s6965evb\nmachine=lm3s6965evb\ncpu=cortex-m3\nframework=rtic\n\
             stream=fd3\nconfig=stdin\nfuture=ignored\n",
        )
        .unwrap();
        assert_eq!(b.name, "lm3s6965evb");
        assert_eq!(b.machine.as_deref(), Some("lm3s6965evb"));
        assert_eq!(b.framework.as_deref(), Some("rtic"));
        assert_eq!((b.stream, b.config), (Stream::Fd3, ConfigIn::Stdin));
        let hw = Board::parse("board=nrf52840\nchip=nRF52840_xxAA\nstream=rtt\n").unwrap();
        assert_eq!(
            (hw.machine, hw.chip.as_deref()),
            (None, Some("nRF52840_xxAA"))
        );
    }

    #[test]
    fn malformed_descriptors_are_refused_with_a_reason() {
        for (text, why) in [
            ("machine=mps2-an385\ncpu=cortex-m3\n", "board="),
            ("board=x\nstream=uart\n", "unknown stream"),
            ("board=x\nconfig=flash\n", "unknown config"),
            ("board=x\nmachine=mps2-an385\n", "both"),
            ("board=x\nno equals sign\n", "key=value"),
        ] {
            let e = Board::parse(text).unwrap_err();
            assert!(e.contains(why), "{text:?}: {e}");
        }
    }
}
