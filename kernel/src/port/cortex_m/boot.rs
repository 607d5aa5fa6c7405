//! Where a boot's configuration comes from, and what carries over between the runs of one
//! boot. Three linker symbols, defined by the board's `memory.x`:
//!
//! - `JOSTLE_CONFIG`: the RAM block the host writes before a run (QEMU `-device loader`, a
//!   probe's RAM write). Startup code does not touch it.
//! - `JOSTLE_CONFIG_FLASH`: a reserved flash page holding a block for replay without a host
//!   (`jostle flash-config`); read only when the RAM block is absent (no magic). A RAM block
//!   serves one boot: after its last run its magic is cleared, so that the next power-up or
//!   reset replays the flash block.
//! - `JOSTLE_BATCH`: three words in the untouched RAM region: the next run of a boot with
//!   several runs per boot (config field `runs`), tagged with the block's checksum.

use crate::config::{BLOCK_LEN, Config, Rejection};

unsafe extern "C" {
    static mut JOSTLE_CONFIG: [u8; BLOCK_LEN];
    static JOSTLE_CONFIG_FLASH: [u8; BLOCK_LEN];
    static mut JOSTLE_BATCH: BatchState;
}

/// What survives the reset between two runs of one boot.
#[repr(C)]
struct BatchState {
    /// [`BATCH_TAG`] when `next` is valid.
    tag: u32,
    /// Checksum of the block the state belongs to (another block starts at run 0).
    crc: u32,
    /// The index of the run to do now.
    next: u32,
}

const BATCH_TAG: u32 = 0x4E55_524A; // "JRUN"

/// Copies a block out of memory that this program does not write (volatile: the host or a
/// flash programmer did), a word at a time.
fn copy(src: *const u32) -> [u8; BLOCK_LEN] {
    const _: () = assert!(BLOCK_LEN.is_multiple_of(4));
    let mut bytes = [0u8; BLOCK_LEN];
    for (i, w) in bytes.chunks_exact_mut(4).enumerate() {
        // SAFETY: `src` names BLOCK_LEN readable bytes at a word-aligned address (the
        // linker-defined regions start on a page).
        w.copy_from_slice(&unsafe { src.add(i).read_volatile() }.to_le_bytes());
    }
    bytes
}

/// Reads the boot's configuration into `config` (which holds the defaults) and returns its
/// block's checksum: the RAM block if present, else the flash page's, else the defaults
/// (checksum 0). A present but invalid block is refused (no fallback: a corrupt block must
/// not turn into another run silently). A later run of the boot does not compute the
/// checksum again (see [`Config::decode_into`]).
pub fn read_config(config: &mut Config) -> Result<u32, Rejection> {
    let crc = |b: &[u8; BLOCK_LEN]| u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
    for block in [
        &raw const JOSTLE_CONFIG as *const u32,
        &raw const JOSTLE_CONFIG_FLASH as *const u32,
    ] {
        let bytes = copy(block);
        if Config::decode_into(&bytes, !batch_continues(crc(&bytes)), config)? {
            return Ok(crc(&bytes));
        }
    }
    Ok(0)
}

/// Has a run of the block with checksum `crc` already run in this boot (which decoded the
/// block, checksum included)?
fn batch_continues(crc: u32) -> bool {
    // SAFETY: three plain words in memory startup code does not touch.
    unsafe {
        let st = &raw mut JOSTLE_BATCH;
        (&raw mut (*st).tag).read_volatile() == BATCH_TAG
            && (&raw mut (*st).crc).read_volatile() == crc
            && (&raw mut (*st).next).read_volatile() > 0
    }
}

/// Does the RAM block hold a block (its magic), whatever its checksum says?
pub fn ram_block_present() -> bool {
    let first = copy(&raw const JOSTLE_CONFIG as *const u32);
    first[..4] == crate::config::MAGIC.to_le_bytes()
}

/// Writes `block` as the RAM block, for a boot's first run (its checksum is checked as any
/// first run's is).
pub fn write_ram_block(block: &[u8; BLOCK_LEN]) {
    let ram = &raw mut JOSTLE_CONFIG as *mut u32;
    for (i, w) in block.chunks_exact(4).enumerate() {
        let word = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        // SAFETY: the RAM block is BLOCK_LEN bytes of word-aligned RAM only the host and
        // this module write.
        unsafe { ram.add(i).write_volatile(word) };
    }
}

/// Clears the RAM block's magic after the boot's last run.
pub fn consume_ram_block() {
    // SAFETY: the block's first word is plain RAM; nothing reads it again in this boot.
    unsafe { (&raw mut JOSTLE_CONFIG as *mut u32).write_volatile(0) }
}

/// The index of this boot's run: 0 on a fresh start, else what the previous run left.
pub fn batch_index(crc: u32, runs: u32) -> u32 {
    // SAFETY: plain words in RAM that only this module writes; volatile because they
    // outlive the program (they carry over a restart).
    unsafe {
        let st = &raw mut JOSTLE_BATCH;
        let tag = (&raw mut (*st).tag).read_volatile();
        let owner = (&raw mut (*st).crc).read_volatile();
        let next = (&raw mut (*st).next).read_volatile();
        (&raw mut (*st).tag).write_volatile(0);
        if tag == BATCH_TAG && owner == crc && next < runs {
            next
        } else {
            0
        }
    }
}

/// Puts the block the host sent for a served boot's next run in the RAM block's place, for
/// the restart. When its checksum holds, the restart is the boot's next run (which then
/// does not check the checksum again); otherwise it is a first run, which refuses the block.
pub fn serve(block: &[u8; BLOCK_LEN]) {
    write_ram_block(block);
    if let Some(crc) = crate::config::block_checksum(block) {
        // Any run index above 0: the next run is not the boot's first. A served run's
        // seed and reported index are its block's (see `run_index`).
        set_next_run(crc, 1);
    }
}

/// Leaves run `next` of the block with checksum `crc` for the restart.
pub fn set_next_run(crc: u32, next: u32) {
    // SAFETY: as in `batch_index`.
    unsafe {
        let st = &raw mut JOSTLE_BATCH;
        (&raw mut (*st).crc).write_volatile(crc);
        (&raw mut (*st).next).write_volatile(next);
        (&raw mut (*st).tag).write_volatile(BATCH_TAG);
    }
}
