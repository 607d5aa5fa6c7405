#![doc = include_str!("../README.md")]
#![no_std]

// The panic handler is the board's (this crate turns its feature on).
use jostle_board_qemu as _;
