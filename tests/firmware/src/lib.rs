//! Test firmware: see `src/bin`.
#![no_std]
