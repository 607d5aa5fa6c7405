//! Feature `rtt`: reads `defmt-rtt`'s up channel 0 the way a probe does (the SEGGER RTT
//! control block at `_SEGGER_RTT`: the channel's buffer, size, write and read offsets) and
//! writes the unread bytes to the frame channel ([`crate::frame_channel`]).

use defmt_rtt as _;

unsafe extern "C" {
    static _SEGGER_RTT: u8;
}

/// Copies the unread part of up channel 0 to the frame channel.
pub fn write_out() {
    // SAFETY: `_SEGGER_RTT` is defmt-rtt's control block: 16 id bytes, two channel counts,
    // then up channel 0's descriptor (name, buffer, size, write, read, flags), all words.
    unsafe {
        let cb = &raw const _SEGGER_RTT;
        let word = |offset: usize| (cb.add(offset) as *const u32).read_volatile();
        let (buf, size) = (word(28) as *const u8, word(32) as usize);
        let (write, mut read) = (word(36) as usize, word(40) as usize);
        while read != write && size > 0 {
            // Up to the write offset, or to the end of the ring first.
            let end = if write > read { write } else { size };
            let bytes = core::slice::from_raw_parts(buf.add(read), end - read);
            crate::write_frames(bytes);
            read = end % size;
        }
    }
}
