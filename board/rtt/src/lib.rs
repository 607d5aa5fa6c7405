#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

use defmt_rtt as _;
use jostle_kernel::Stack;

pub use jostle_kernel;

/// Bytes of task 0's stack (the `firmware!` main's) unless the firmware says otherwise
/// (`entry!(main_task, main_stack: 2048)`).
pub const MAIN_STACK_BYTES: usize = 8192;

/// Bytes a spawned task's stack takes on these boards unless the firmware needs more (what
/// `jostle new`'s program gives its tasks: `Stack<TASK_STACK_BYTES>`).
pub const TASK_STACK_BYTES: usize = 4096;

/// Stack of the main task for [`run`].
/// In `.uninit`: startup does not zero it, on every warm restart between runs.
#[unsafe(link_section = ".uninit.JOSTLE_MAIN_STACK")]
static MAIN_STACK: Stack<MAIN_STACK_BYTES> = Stack::new();

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

/// Starts the kernel with `main` as task 0 and the firmware's interrupt sources. Called by
/// the code [`entry!`] generates.
pub fn run(main: fn(), irqs: &'static [&'static jostle_kernel::Interrupt]) -> ! {
    run_on(main, irqs, &MAIN_STACK)
}

/// [`run`], with task 0 on `stack` (the firmware's choice of size: [`entry!`]'s
/// `main_stack`).
pub fn run_on<const BYTES: usize>(
    main: fn(),
    irqs: &'static [&'static jostle_kernel::Interrupt],
    stack: &'static Stack<BYTES>,
) -> ! {
    jostle_kernel::port::start_with_interrupts(main, stack, exit, irqs)
}

/// Defines the firmware's entry point: `entry!(main_task)` runs `main_task` as task 0;
/// `entry!(main_task, interrupts: [UART, TIMER])` declares its interrupt sources;
/// `entry!(main_task, main_stack: 2048, interrupts: [..])` gives task 0 a stack of that many
/// bytes (default [`MAIN_STACK_BYTES`]; the `jostle` crate's `firmware!` passes the
/// machine's).
#[macro_export]
macro_rules! entry {
    ($main:path) => {
        $crate::entry!($main, interrupts: []);
    };
    ($main:path, interrupts: [$($irq:path),* $(,)?]) => {
        $crate::entry!($main, main_stack: $crate::MAIN_STACK_BYTES, interrupts: [$($irq),*]);
    };
    ($main:path, main_stack: $bytes:expr, interrupts: [$($irq:path),* $(,)?]) => {
        #[doc(hidden)]
        #[unsafe(export_name = "main")]
        pub unsafe extern "C" fn __jostle_entry() -> ! {
            static IRQS: &[&$crate::jostle_kernel::Interrupt] = &[$(&$irq),*];
            // In `.uninit`: startup does not zero it, on every warm restart between runs.
            #[unsafe(link_section = ".uninit.JOSTLE_MAIN_STACK")]
            static MAIN_STACK: $crate::jostle_kernel::Stack<{ $bytes }> =
                $crate::jostle_kernel::Stack::new();
            $crate::run_on($main, IRQS, &MAIN_STACK)
        }
    };
}

#[cfg(feature = "panic-handler")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    jostle_kernel::port::report_panic(info, exit)
}

// The kernel's HardFault (it reads the frame only where the evidence says it is valid) and
// DefaultHandler (the declared interrupt handlers).
jostle_kernel::exception_handlers!(exit);

// The vector table, startup code and linker script (nothing else names the crate).
use cortex_m_rt as _;
