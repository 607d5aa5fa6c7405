#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

#[cfg(not(feature = "rtt"))]
mod logger;
#[cfg(feature = "rtt")]
mod rtt_record;

use core::panic::PanicInfo;
use jostle_kernel::Stack;

pub use jostle_kernel;

/// Stack of the main task (task 0).
/// In `.uninit`: startup does not zero it, on every warm restart between runs.
#[unsafe(link_section = ".uninit.JOSTLE_MAIN_STACK")]
static MAIN_STACK: Stack<8192> = Stack::new();

/// Ends the run: flushes nothing (frames are written whole) and exits QEMU with `code`.
/// With feature `rtt`, the frames went to `defmt-rtt`'s buffer instead; they are first
/// copied out to stdout, as a probe would have read them (a recorded RTT stream).
pub fn exit(code: u8) -> ! {
    #[cfg(feature = "rtt")]
    rtt_record::write_out();
    semihosting::process::exit(code as i32)
}

/// Starts the kernel with `main` as task 0 and the firmware's interrupt sources. Called by
/// the code [`entry!`] generates. A served boot reads each next run's block from QEMU's
/// standard input ([`next_block`]).
pub fn run(main: fn(), irqs: &'static [&'static jostle_kernel::Interrupt]) -> ! {
    // A recorded RTT stream is copied out at the boot's end only: one run per boot.
    let next: Option<jostle_kernel::port::NextBlock> = if cfg!(feature = "rtt") {
        None
    } else {
        Some(next_block)
    };
    jostle_kernel::port::start_with_host(main, &MAIN_STACK, exit, irqs, next)
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

/// Defines the firmware's entry point: `entry!(main_task)` runs `main_task` as task 0;
/// `entry!(main_task, interrupts: [UART, TIMER])` declares its interrupt sources.
#[macro_export]
macro_rules! entry {
    ($main:path) => {
        $crate::entry!($main, interrupts: []);
    };
    ($main:path, interrupts: [$($irq:path),* $(,)?]) => {
        #[doc(hidden)]
        #[unsafe(export_name = "main")]
        pub unsafe extern "C" fn __jostle_entry() -> ! {
            static IRQS: &[&$crate::jostle_kernel::Interrupt] = &[$(&$irq),*];
            $crate::run($main, IRQS)
        }
    };
}

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    jostle_kernel::port::report_panic(info, exit)
}

// The kernel's HardFault (it reads the frame only where the evidence says it is valid) and
// DefaultHandler (the declared interrupt handlers).
jostle_kernel::exception_handlers!(exit);

// The vector table, startup code and linker script (nothing else names the crate).
use cortex_m_rt as _;
