#![doc = include_str!("../README.md")]
#![no_std]

pub use jostle_board_rtt::*;

// What the host needs to run this ELF without a board flag (see `jostle_kernel::descriptor`).
jostle_board_rtt::jostle_kernel::board_descriptor!(
    board = "nrf52840",
    chip = "nRF52840_xxAA",
    target = "thumbv7em-none-eabihf",
    stream = "rtt",
    config = "ram",
);
