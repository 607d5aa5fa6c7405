//! A firmware of three concurrency tests (`tests/concurrency.rs`), declared with
//! `jostle::tests!`: `cargo test --target thumbv7m-none-eabi -p jostle-test-suite` builds it
//! and hands it to the runner, which runs each test as a campaign on QEMU and prints
//! libtest's lines. The library is empty: the package exists for its test.
#![no_std]
