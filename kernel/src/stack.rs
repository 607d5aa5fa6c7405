//! Task stacks: statically allocated memory the Cortex-M port runs a task on. Plain memory,
//! below every other layer (the port takes one, the primitives hand it over at a spawn).

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;

/// A task's statically allocated stack of `BYTES` bytes. Its lowest 32 bytes are the
/// task's guard: on a CPU with an MPU the kernel forbids every access to them (ARMv7-M) or
/// every write (ARMv8-M, whose stack limit also stops the stack pointer above them) while
/// the task runs, so an overflow faults at once; without one they hold a canary checked
/// whenever the task is switched out. Aligned to 32 bytes, as an MPU region of that size
/// must be.
/// The host port runs each task on a coroutine stack of its own (1 MiB, a guard page below)
/// and leaves this memory unused.
///
/// Its memory starts uninitialised: the kernel writes a task's first frame and its guard
/// at the spawn and never reads what it did not write. So a stack may live in `.uninit`
/// (`#[unsafe(link_section = ".uninit.STACKS")]` on the `static`), which startup does not
/// zero: that spares the warm restart between two runs of a boot a word store per 4 bytes
/// of stack (the boards' main stack lives there).
#[repr(C, align(32))]
pub struct Stack<const BYTES: usize> {
    mem: UnsafeCell<MaybeUninit<[u8; BYTES]>>,
}

// SAFETY: a stack is handed to one task at a time by `spawn`, which refuses a stack in use.
unsafe impl<const BYTES: usize> Sync for Stack<BYTES> {}

impl<const BYTES: usize> Default for Stack<BYTES> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const BYTES: usize> Stack<BYTES> {
    /// A stack (placed in `.bss` unless its `static` says otherwise).
    pub const fn new() -> Self {
        Stack {
            mem: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Lowest address and size in bytes.
    pub fn region(&'static self) -> (*mut u8, usize) {
        (self.mem.get() as *mut u8, BYTES)
    }
}
