#![doc = include_str!("../README.md")]
#![no_std]

pub use jostle_board_rtt::*;

// What the host needs to run this ELF without a board flag (see `jostle_kernel::descriptor`).
jostle_board_rtt::jostle_kernel::board_descriptor!(
    board = "rp2350",
    chip = "RP235x",
    target = "thumbv8m.main-none-eabihf",
    stream = "rtt",
    config = "ram",
);

/// The smallest block the RP2350's boot ROM accepts as an Arm executable's image definition
/// (the datasheet's "minimum viable image metadata", section 5.9.5): without a valid block
/// in the first 4 KiB of flash the ROM does not boot the image. Its words:
///
/// - the block's start marker;
/// - an IMAGE_TYPE item (type 0x42, one word): an executable (bits 3:0 = 1) for the Secure
///   state (bits 5:4 = 2), for the Arm cores (bits 10:8 = 0), of the RP2350 (bits 14:12 = 1);
/// - the LAST item (type 0xff) giving the items' size before it (one word);
/// - the offset of the next block in the loop of blocks (0: this block is the only one);
/// - the block's end marker.
///
/// With no entry point item, the ROM starts the image through the vector table at the start
/// of flash (cortex-m-rt's).
#[unsafe(link_section = ".start_block")]
#[used]
pub static IMAGE_DEF: [u32; 5] = [
    0xffff_ded3,
    0x1021_0142,
    0x0000_01ff,
    0x0000_0000,
    0xab12_3579,
];
