#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

mod logger;

pub use jostle_kernel;

/// Ends the run: exits QEMU with `code` (semihosting).
pub fn exit(code: u8) -> ! {
    semihosting::process::exit(code as i32)
}

/// Starts the kernel with the running thread (the framework's `main`) as task 0, at the
/// framework's first call into its Jostle stand-in; a served boot reads each next run's
/// block from QEMU's standard input ([`next_block`]).
pub fn adopt() {
    jostle_kernel::port::adopt(exit, Some(next_block));
}

/// Reads a served boot's next block from semihosting's standard input (QEMU's, which the
/// host writes); `false` when the input ends before a whole block.
fn next_block(block: &mut [u8; jostle_kernel::config::BLOCK_LEN]) -> bool {
    use semihosting::io::Read;
    let Ok(mut input) = semihosting::io::stdin() else {
        return false;
    };
    let mut got = 0;
    while got < block.len() {
        match input.read(&mut block[got..]) {
            Ok(0) | Err(_) => return false,
            Ok(n) => got += n,
        }
    }
    true
}

// The kernel's HardFault and DefaultHandler (a line nobody registered).
jostle_kernel::exception_handlers!(exit);
