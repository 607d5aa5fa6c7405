#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

pub use jostle_board_qemu::*;

// What the host needs to run this ELF without a board flag (see `jostle_kernel::descriptor`;
// `jostle-board-qemu` adds where the frames go and how the block comes in).
jostle_board_qemu::jostle_kernel::board_descriptor!(
    board = "lm3s6965evb",
    machine = "lm3s6965evb",
    cpu = "cortex-m3",
    target = "thumbv7m-none-eabi",
);

/// Starts the kernel with the running thread (a framework's `main`) as task 0, at the
/// framework's first call into its Jostle stand-in (contract R2): each boot's first block
/// comes over semihosting's standard input (feature `config-static`), a served boot's next
/// ones too ([`next_block`]).
pub fn adopt() {
    #[cfg(feature = "config-static")]
    jostle_board_qemu::jostle_kernel::port::take_first_block(next_block);
    jostle_board_qemu::jostle_kernel::port::adopt(exit, Some(next_block));
}
