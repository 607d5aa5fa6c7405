//! The board descriptor: a few `key=value` lines a board crate records in the firmware's ELF
//! (section [`SECTION`]), so that the host runs an ELF without being told which board it was
//! built for: the QEMU machine and CPU, or the probe-rs chip, where the frames come out, and
//! how the configuration block goes in.
//!
//! Keys (a board records the ones that apply): `board` (its name), `machine` and `cpu` (QEMU;
//! absent for hardware), `chip` (probe-rs, hardware), `target` (the Rust target it builds
//! for), `framework` (`rtic`, `embassy`: the app owns `main` and may exit through
//! semihosting), `stream` ([`STREAM_FD3`], `stdout` or `rtt`) and `config` (`ram`: the
//! block is written into RAM before boot; `stdin`: the boot's first block comes over
//! semihosting's standard input like every served block).

/// The ELF section that holds the descriptor's text.
pub const SECTION: &str = ".jostle_board";

/// `stream` value: frames go to the semihosting file `/dev/fd/3` (a pipe of the host's), so
/// that QEMU's standard output carries only the application's own text.
pub const STREAM_FD3: &str = "fd3";

/// The file a QEMU board's logger opens for its frames ([`STREAM_FD3`]), as a C string.
pub const FRAME_FILE: &core::ffi::CStr = c"/dev/fd/3";

/// Copies `text` into an array of its length (the descriptor's static, at compile time).
#[doc(hidden)]
pub const fn bytes<const N: usize>(text: &str) -> [u8; N] {
    let b = text.as_bytes();
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N {
        out[i] = b[i];
        i += 1;
    }
    out
}

/// Records the board descriptor in the ELF:
/// `board_descriptor!(board = "mps2-an385", machine = "mps2-an385", cpu = "cortex-m3")`.
/// Each value is a string literal (or `concat!` of them); one descriptor per firmware.
#[macro_export]
macro_rules! board_descriptor {
    ($($key:ident = $value:expr),* $(,)?) => {
        const _: () = {
            const TEXT: &str = concat!($(stringify!($key), "=", $value, "\n"),*);
            #[used]
            #[unsafe(link_section = ".jostle_board")]
            static JOSTLE_BOARD: [u8; TEXT.len()] = $crate::descriptor::bytes(TEXT);
        };
    };
}
