#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

#[cfg(not(feature = "rtt"))]
mod logger;
#[cfg(feature = "rtt")]
mod rtt_record;

use jostle_kernel::Stack;

pub use jostle_kernel;

// The descriptor's lines every QEMU board shares (the machine crate adds its board,
// machine, cpu and target; see `jostle_kernel::descriptor`).
jostle_kernel::board_descriptor!(stream = "fd3");
#[cfg(not(feature = "config-static"))]
jostle_kernel::board_descriptor!(config = "ram");
#[cfg(feature = "config-static")]
jostle_kernel::board_descriptor!(config = "stdin");

/// With the memory layout the application's (feature `config-static`: its PAC's memory.x, or
/// its own), the configuration block is a static that startup code
/// does not touch (`.uninit`), with the words that carry a boot's next run 2 KiB in, as in
/// the board's CONFIG region; the host cannot write it before the boot (QEMU refuses a blob
/// inside the ELF's RAM segment), so each boot's first block comes over standard input
/// ([`jostle_kernel::port::take_first_block`]). There is no flash page: its symbol names
/// the RAM block, which the kernel then reads twice.
#[cfg(feature = "config-static")]
mod config_block {
    #[repr(C, align(4))]
    struct Region(core::cell::UnsafeCell<[u8; 4096]>);
    // SAFETY: the kernel reads and writes it through its own symbol only.
    unsafe impl Sync for Region {}

    #[unsafe(no_mangle)]
    #[unsafe(link_section = ".uninit.JOSTLE_CONFIG")]
    static JOSTLE_CONFIG: Region = Region(core::cell::UnsafeCell::new([0; 4096]));

    core::arch::global_asm!(
        ".globl JOSTLE_BATCH",
        ".set JOSTLE_BATCH, JOSTLE_CONFIG + 0x800",
        ".globl JOSTLE_CONFIG_FLASH",
        ".set JOSTLE_CONFIG_FLASH, JOSTLE_CONFIG",
    );
}

/// The semihosting handle the frames go to, tagged, kept in `.uninit`: the file `/dev/fd/3`,
/// which the host's QEMU transport opens as a pipe of its own, so that QEMU's standard output
/// keeps only what the application itself prints; QEMU's standard output when that file
/// cannot be opened (QEMU started by hand). Kept across the warm restarts between runs of a
/// boot (every open of `/dev/fd/3` takes a host file descriptor of QEMU's, so a served QEMU
/// opens it once, not once per run), and out of the statics a task's stack overflow can
/// reach (`.bss` below the stacks; a frame larger than a stack's guard may skip it): a
/// corrupted handle fails its tag and the file is opened again. QEMU starts with RAM
/// zeroed (no tag).
struct KeptHandle(core::cell::UnsafeCell<[i32; 2]>);

// SAFETY: touched only by the logger, inside its critical section, on one core.
unsafe impl Sync for KeptHandle {}

#[unsafe(link_section = ".uninit.JOSTLE_FRAME_HANDLE")]
static FRAME_HANDLE: KeptHandle = KeptHandle(core::cell::UnsafeCell::new([0; 2]));

/// Tags a kept handle (see [`FRAME_HANDLE`]).
const HANDLE_TAG: i32 = 0x4A46_4433;

/// Writes `bytes` to the frame channel (see [`FRAME_HANDLE`]), opening it first if this
/// QEMU has not.
pub(crate) fn write_frames(bytes: &[u8]) {
    use semihosting::fd::{AsFd, OwnedFd};
    use semihosting::io::Write;
    let kept = FRAME_HANDLE.0.get();
    // SAFETY: the logger's critical section (or the end of the boot); a tagged handle was
    // opened by this QEMU and is never closed.
    let [tag, handle] = unsafe { kept.read_volatile() };
    let handle = if tag == HANDLE_TAG ^ handle {
        handle
    } else {
        let pipe = semihosting::fs::File::options()
            .write(true)
            .append(true)
            // (The crate's append mode is "a": write, append, create.)
            .create(true)
            .open(jostle_kernel::descriptor::FRAME_FILE);
        let handle = match pipe {
            Ok(f) => {
                let h = f.as_fd().as_raw_fd();
                core::mem::forget(f);
                h
            }
            Err(_) => match semihosting::io::stdout() {
                Ok(out) => {
                    let h = out.as_fd().as_raw_fd();
                    core::mem::forget(out);
                    h
                }
                Err(_) => return,
            },
        };
        // (Neither `File` nor `Stdout` was dropped: the handle stays open.)
        // SAFETY: as above.
        unsafe { kept.write_volatile([HANDLE_TAG ^ handle, handle]) };
        handle
    };
    // SAFETY: a handle this QEMU opened and never closes (the file is not dropped).
    let mut file = core::mem::ManuallyDrop::new(semihosting::fs::File::from(unsafe {
        OwnedFd::from_raw_fd(handle)
    }));
    let _ = file.write_all(bytes);
}

/// Bytes of task 0's stack (the `firmware!` main's) unless the firmware says otherwise
/// (`entry!(main_task, main_stack: 2048)`); a machine crate with little RAM says less.
pub const MAIN_STACK_BYTES: usize = 8192;

/// Bytes a spawned task's stack takes on this machine unless the firmware needs more (what
/// `jostle new`'s program and the examples that fit give their tasks: `Stack<TASK_STACK_BYTES>`).
pub const TASK_STACK_BYTES: usize = 4096;

/// Stack of the main task (task 0) for [`run`].
/// In `.uninit`: startup does not zero it, on every warm restart between runs.
#[unsafe(link_section = ".uninit.JOSTLE_MAIN_STACK")]
static MAIN_STACK: Stack<MAIN_STACK_BYTES> = Stack::new();

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
    run_on(main, irqs, &MAIN_STACK)
}

/// [`run`], with task 0 on `stack` (the firmware's choice of size: [`entry!`]'s
/// `main_stack`).
pub fn run_on<const BYTES: usize>(
    main: fn(),
    irqs: &'static [&'static jostle_kernel::Interrupt],
    stack: &'static Stack<BYTES>,
) -> ! {
    #[cfg(feature = "config-static")]
    jostle_kernel::port::take_first_block(next_block);
    // A recorded RTT stream is copied out at the boot's end only: one run per boot.
    let next: Option<jostle_kernel::port::NextBlock> = if cfg!(feature = "rtt") {
        None
    } else {
        Some(next_block)
    };
    jostle_kernel::port::start_with_host(main, stack, exit, irqs, next)
}

/// Reads a served boot's next block from semihosting's standard input (QEMU's, which the
/// host writes); `false` when the input ends before a whole block.
pub fn next_block(block: &mut [u8; jostle_kernel::config::BLOCK_LEN]) -> bool {
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
