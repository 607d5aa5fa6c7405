#![doc = include_str!("../README.md")]
#![no_std]

pub use jostle_board_qemu::*;

// What the host needs to run this ELF without a board flag (see `jostle_kernel::descriptor`;
// `jostle-board-qemu` adds where the frames go and how the block comes in).
jostle_board_qemu::jostle_kernel::board_descriptor!(
    board = "mps2-an505",
    machine = "mps2-an505",
    cpu = "cortex-m33",
    target = "thumbv8m.main-none-eabihf",
);
