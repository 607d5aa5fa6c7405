#![doc = include_str!("../README.md")]
#![no_std]

pub use jostle_board_qemu::*;

// What the host needs to run this ELF without a board flag (see `jostle_kernel::descriptor`;
// `jostle-board-qemu` adds where the frames go and how the block comes in).
jostle_board_qemu::jostle_kernel::board_descriptor!(
    board = "microbit",
    machine = "microbit",
    cpu = "cortex-m0",
    target = "thumbv6m-none-eabi",
);

/// Task 0's stack on the micro:bit's 16 KiB of RAM (see `jostle_board_qemu::MAIN_STACK_BYTES`).
pub const MAIN_STACK_BYTES: usize = 2048;

/// A spawned task's stack on the micro:bit (see `jostle_board_qemu::TASK_STACK_BYTES`).
pub const TASK_STACK_BYTES: usize = 2048;
