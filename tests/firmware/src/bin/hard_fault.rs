//! A task faults (`--arg 0` picks how): 0, a load from an address with nothing behind it (a
//! precise bus error); 1, an undefined instruction. The run must end with the `hard_fault`
//! verdict and the fault status registers, never with `stack_overflow`.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static STACK1: Stack<4096> = Stack::new();

/// An address with no memory or device behind it on mps2-an385.
#[cfg(target_os = "none")]
const NOTHING: usize = 0x6000_0000;

fn faulty() {
    yield_now();
    #[cfg(target_os = "none")]
    match arg_or(0, 0) {
        // SAFETY: deliberately faults; the kernel's handler ends the run.
        0 => unsafe {
            core::hint::black_box((NOTHING as *const u32).read_volatile());
        },
        // SAFETY: as above.
        _ => unsafe { core::arch::asm!("udf #7") },
    }
}

fn main_task() {
    spawn(&STACK1, faulty).join();
}

firmware!(main_task);
