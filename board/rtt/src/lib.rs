#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

use core::panic::PanicInfo;
use defmt_rtt as _;
use jostle_kernel::Stack;

pub use jostle_kernel;

static MAIN_STACK: Stack<8192> = Stack::new();

/// Is a debugger attached (DHCSR `C_DEBUGEN`)? Semihosting without one would fault.
fn debugger_attached() -> bool {
    const DHCSR: *const u32 = 0xE000_EDF0 as *const u32;
    // SAFETY: DHCSR is a readable core debug register on every Cortex-M.
    unsafe { DHCSR.read_volatile() & 1 != 0 }
}

/// Ends the run: semihosting exit with `code` under a debugger, else sleep.
pub fn exit(code: u8) -> ! {
    if debugger_attached() {
        semihosting::process::exit(code as i32)
    }
    loop {
        cortex_m::asm::wfi();
    }
}

/// Runs `main` as task 0 under the board's configuration block.
pub fn run(main: fn()) -> ! {
    jostle_kernel::port::start(main, &MAIN_STACK, exit)
}

/// Defines the firmware's entry point: `entry!(main_task)`.
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
