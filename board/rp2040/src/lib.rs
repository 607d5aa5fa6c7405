#![doc = include_str!("../README.md")]
#![no_std]

pub use jostle_board_rtt::*;

// What the host needs to run this ELF without a board flag (see `jostle_kernel::descriptor`).
jostle_board_rtt::jostle_kernel::board_descriptor!(
    board = "rp2040",
    chip = "RP2040",
    target = "thumbv6m-none-eabi",
    stream = "rtt",
    config = "ram",
);

/// The second-stage bootloader the boot ROM runs from the first 256 bytes of flash: it
/// sets up XIP for the Pico's W25Q080 flash (other boards may need another variant).
#[unsafe(link_section = ".boot2")]
#[used]
pub static BOOT2: [u8; 256] = rp2040_boot2::BOOT_LOADER_W25Q080;
