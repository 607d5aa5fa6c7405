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
static MAIN_STACK: Stack<8192> = Stack::new();

/// Ends the run: flushes nothing (frames are written whole) and exits QEMU with `code`.
/// With feature `rtt`, the frames went to `defmt-rtt`'s buffer instead; they are first
/// copied out to stdout, as a probe would have read them (a recorded RTT stream).
pub fn exit(code: u8) -> ! {
    #[cfg(feature = "rtt")]
    rtt_record::write_out();
    semihosting::process::exit(code as i32)
}

/// Starts the kernel with `main` as task 0. Called by the code [`entry!`] generates.
pub fn run(main: fn()) -> ! {
    jostle_kernel::port::start(main, &MAIN_STACK, exit)
}

/// Defines the firmware's entry point: `entry!(main_task)` runs `main_task` as task 0.
#[macro_export]
macro_rules! entry {
    ($main:path) => {
        #[doc(hidden)]
        #[unsafe(export_name = "main")]
        pub unsafe extern "C" fn __jostle_entry() -> ! {
            $crate::run($main)
        }
    };
}

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    jostle_kernel::port::report_panic(info, exit)
}

// The kernel's handler: it reads the frame only where the evidence says it is valid.
jostle_kernel::hard_fault_handler!(exit);

// The vector table, startup code and linker script (nothing else names the crate).
use cortex_m_rt as _;
