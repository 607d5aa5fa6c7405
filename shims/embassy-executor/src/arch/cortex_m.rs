//! Cortex-M: booting the kernel on the board, the tasks' stacks, and where a task waits.
//!
//! `#[embassy_executor::main]` makes `main` (cortex-m-rt's entry) call
//! [`crate::Executor::run`] with the `init` closure. The closure is moved into a static
//! (the boot stack it lives on becomes the interrupt handlers' when the kernel starts),
//! and a monomorphised trampoline, a plain `fn()`, runs it as the kernel's task 0.
//!
//! Each Embassy task runs on a stack of its own from a pool of `MAX_TASKS - 1` stacks (the
//! boot task has the board's), taken at its spawn and given back when it ends.
//!
//! Where a task waits: when it registers its waker (a clone, inside the future it awaits),
//! the words on its stack that look like Thumb return addresses (odd, inside the code)
//! are kept, innermost first; the host resolves them through the ELF's line information
//! to the first frame in the application's own source, the `.await`.

use crate::executor::ExecutorCore;
use crate::spawner::Spawner;
use core::cell::{Cell, UnsafeCell};
use core::mem::MaybeUninit;
use jostle_kernel::{MAX_TASKS, Stack};

/// Bytes of each Embassy task's stack.
#[cfg(feature = "stack-16k")]
pub const STACK_BYTES: usize = 16 * 1024;
/// Bytes of each Embassy task's stack.
#[cfg(all(feature = "stack-8k", not(feature = "stack-16k")))]
pub const STACK_BYTES: usize = 8 * 1024;
/// Bytes of each Embassy task's stack.
#[cfg(not(any(feature = "stack-8k", feature = "stack-16k")))]
pub const STACK_BYTES: usize = 4 * 1024;

/// Stacks for the tasks beside the boot task.
const STACKS: usize = MAX_TASKS - 1;

/// In `.uninit`: startup does not zero them on every warm restart between runs.
#[unsafe(link_section = ".uninit.JOSTLE_EMBASSY_STACKS")]
static POOL: [Stack<STACK_BYTES>; STACKS] = [const { Stack::new() }; STACKS];

/// Which stacks are in use.
struct InUse(Cell<u128>);

// SAFETY: one task or handler runs at a time; no scheduling point inside.
unsafe impl Sync for InUse {}

static IN_USE: InUse = InUse(Cell::new(0));

/// A free stack: its index and its region (lowest address, size).
pub(crate) fn take_stack() -> (usize, (*mut u8, usize)) {
    let used = IN_USE.0.get();
    let Some(i) = (0..STACKS).find(|&i| used & (1 << i) == 0) else {
        panic!(
            "jostle: more than {STACKS} Embassy tasks at once (the features tasks-16 and tasks-32 of the patched embassy-executor raise it)"
        );
    };
    IN_USE.0.set(used | (1 << i));
    (i, POOL[i].region())
}

/// Stack `i`'s task has ended: the next spawn may take it.
pub(crate) fn give_stack(i: usize) {
    IN_USE.0.set(IN_USE.0.get() & !(1 << i));
}

/// The `init` closure of `Executor::run`, moved off the boot stack.
struct Init(UnsafeCell<MaybeUninit<[usize; 8]>>, Cell<usize>);

// SAFETY: written once before the kernel starts, read once by the boot task.
unsafe impl Sync for Init {}

static INIT: Init = Init(UnsafeCell::new(MaybeUninit::uninit()), Cell::new(0));

/// Starts the kernel on the board: task 0 runs `init` with `executor`'s spawner.
pub(crate) fn start<F: FnOnce(Spawner)>(executor: &'static ExecutorCore, init: F) -> ! {
    const {
        assert!(
            core::mem::size_of::<F>() <= core::mem::size_of::<[usize; 8]>()
                && core::mem::align_of::<F>() <= core::mem::align_of::<usize>(),
            "the closure given to Executor::run captures more than 32 bytes"
        )
    };
    // SAFETY: before the kernel starts, nothing else touches `INIT`; the size and
    // alignment fit (checked above).
    unsafe { (INIT.0.get() as *mut F).write(init) };
    INIT.1.set(executor as *const ExecutorCore as usize);
    crate::board::run(boot_task::<F>, &[])
}

/// Task 0: runs `init` (moved into `INIT` by `start`).
fn boot_task<F: FnOnce(Spawner)>() {
    // SAFETY: `start` wrote an `F` there; it is read once (each run boots anew).
    let init = unsafe { (INIT.0.get() as *const F).read() };
    let executor = crate::raw::executor_of(INIT.1.get() as u32);
    // The interrupt executors `main` started before the kernel ran get their lines now.
    crate::interrupt::kernel_started();
    init(Spawner::new(executor));
}

unsafe extern "C" {
    static __stext: u32;
    static __etext: u32;
}

/// Up to four words on the running task's stack that look like return addresses (odd, in
/// the code), innermost first, skipping this module's own frames.
#[inline(never)]
pub(crate) fn return_addresses() -> [u32; 4] {
    let mut out = [0u32; 4];
    let sp: usize;
    // SAFETY: reads the stack pointer.
    unsafe { core::arch::asm!("mov {}, sp", out(reg) sp) };
    let Some((base, size)) = current_stack() else {
        return out;
    };
    let top = base + size;
    // SAFETY: linker symbols; only their addresses are taken.
    let (lo, hi) = {
        (
            &raw const __stext as usize as u32,
            &raw const __etext as usize as u32,
        )
    };
    let own = return_addresses as *const () as usize as u32 & !1;
    let mut n = 0;
    let mut at = sp & !3;
    // A bounded scan: the frames of an `.await` are near the registration.
    let end = top.min(at + 1024);
    while at < end && n < out.len() {
        // SAFETY: `at` lies between the stack pointer and the top of the task's stack.
        let word = unsafe { (at as *const u32).read_volatile() };
        // A word seen already (also the copies this function stores in `out`) is skipped.
        if word & 1 == 1
            && (lo..hi).contains(&(word & !1))
            && (word & !1) != own
            && !out[..n].contains(&word)
        {
            out[n] = word;
            n += 1;
        }
        at += 4;
    }
    out
}

/// The running Embassy task's stack (lowest address, size), if it runs on one of the pool.
fn current_stack() -> Option<(usize, usize)> {
    let sp: usize;
    // SAFETY: reads the stack pointer.
    unsafe { core::arch::asm!("mov {}, sp", out(reg) sp) };
    POOL.iter()
        .map(|s| {
            let (base, size) = s.region();
            (base as usize, size)
        })
        .find(|&(base, size)| (base..base + size).contains(&sp))
}
