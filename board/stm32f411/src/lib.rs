#![doc = include_str!("../README.md")]
#![no_std]

pub use jostle_board_rtt::*;
