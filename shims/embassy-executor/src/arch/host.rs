//! The host port: an Embassy app written for `platform-std` (Embassy's `std` shape: a
//! `fn main` that runs the executor, no board) runs as a process of Jostle's host port,
//! every Embassy task a coroutine of the kernel's and each poll a step, as on the device.
//!
//! `#[embassy_executor::main]` (the macros' `std` flavour) makes `fn main` call
//! [`crate::Executor::run`] with the `init` closure; the kernel's host port then makes the
//! block's runs in this process, calling the boot task once per run. So `init` is called
//! once per run, not once: it must capture nothing (the macro's closure does not), and it
//! is made again for each run from its type alone.
//!
//! Stacks: the host port gives each task a coroutine stack of its own, so there is no pool
//! here. Where a task waits: when it registers its waker, the unwinder the standard library
//! links (`_Unwind_Backtrace`) gives the return addresses above the waker's `clone`, each
//! kept as its distance from the kernel's anchor static (the executable is
//! position-independent; distances within it are fixed at link time, and fit 32 bits); the
//! host tool resolves them through the executable's line information (an executable built
//! with `debug = true`), as it does the device's. Where a wake comes from is named the same
//! way, above the waker's `wake`, when that has a frame of its own (an optimised build
//! tail-calls through it: the wake is then shown without its line).

use crate::executor::ExecutorCore;
use crate::spawner::Spawner;
use core::cell::Cell;

/// A stack for a new task: the host port makes its own (the region is not used).
pub(crate) fn take_stack() -> (usize, (*mut u8, usize)) {
    (0, (core::ptr::null_mut(), 0))
}

/// A task's stack is its coroutine's, given back by the host port.
pub(crate) fn give_stack(_: usize) {}

/// The executor `Executor::run` was called on.
struct Started(Cell<usize>);

// SAFETY: the host port runs every context on the process's one thread.
unsafe impl Sync for Started {}

static EXECUTOR: Started = Started(Cell::new(0));

/// Starts the kernel's host port: in each run, task 0 runs `init` with `executor`'s
/// spawner.
pub(crate) fn start<F: FnOnce(Spawner)>(executor: &'static ExecutorCore, init: F) -> ! {
    const {
        assert!(
            core::mem::size_of::<F>() == 0,
            "on the host port, the closure given to Executor::run must capture nothing (it runs once per run)"
        )
    };
    core::mem::forget(init);
    EXECUTOR.0.set(executor as *const ExecutorCore as usize);
    jostle_kernel::port::run(boot_task::<F>)
}

/// Task 0 of each run: runs `init`.
fn boot_task<F: FnOnce(Spawner)>() {
    // SAFETY: `F` has no bytes (checked in `start`), and the value `start` was given was
    // forgotten, not dropped: making it again is making that closure, which captures
    // nothing, once more.
    let init = unsafe { core::mem::zeroed::<F>() };
    // SAFETY: `start` stored a `&'static ExecutorCore` there before the kernel ran.
    let executor = unsafe { &*(EXECUTOR.0.get() as *const ExecutorCore) };
    init(Spawner::new(executor));
}

/// Up to four return addresses above the waker's function (`clone`: the registration;
/// `wake`: the wake), innermost first, as distances from the kernel's anchor static (see the
/// module's text). None when the stack holds neither (a wake through `wake_task`).
#[inline(never)]
pub(crate) fn return_addresses() -> [u32; 4] {
    let mut walk = Walk {
        after: crate::raw::waker_entries(),
        past: false,
        out: [0; 4],
        n: 0,
    };
    // SAFETY: the callback gets the walk's own state back as its argument, and the unwinder
    // calls it only while this frame is live.
    unsafe { _Unwind_Backtrace(frame, (&raw mut walk).cast()) };
    walk.out
}

/// The state of one walk up the stack.
struct Walk {
    /// The functions whose caller's frames are kept (the waker's `clone` and `wake`).
    after: [usize; 2],
    /// The walk has passed `after`'s frame.
    past: bool,
    out: [u32; 4],
    n: usize,
}

/// The unwinder's callback, once per frame, innermost first.
extern "C" fn frame(context: *mut UnwindContext, arg: *mut core::ffi::c_void) -> i32 {
    // SAFETY: `arg` is the `Walk` that `return_addresses` passed, alive during the walk.
    let walk = unsafe { &mut *arg.cast::<Walk>() };
    // SAFETY: `context` is the unwinder's, valid during this call.
    let ip = unsafe { _Unwind_GetIP(context) };
    if !walk.past {
        // SAFETY: asks the unwinder which function holds `ip`, an address it just gave.
        let start = unsafe { _Unwind_FindEnclosingFunction(ip as *mut core::ffi::c_void) };
        walk.past = walk.after.contains(&(start as usize));
        return NO_REASON;
    }
    let anchor = &raw const jostle_kernel::port::JOSTLE_HOST_ANCHOR as usize;
    walk.out[walk.n] = ip.wrapping_sub(anchor) as u32;
    walk.n += 1;
    if walk.n == walk.out.len() {
        STOP
    } else {
        NO_REASON
    }
}

/// The unwinder's `_URC_NO_REASON`: go on.
const NO_REASON: i32 = 0;
/// The unwinder's `_URC_NORMAL_STOP`: enough frames.
const STOP: i32 = 4;

/// The unwinder's opaque frame context.
#[repr(C)]
struct UnwindContext {
    _opaque: [u8; 0],
}

// The unwinder of the platform's C runtime (libgcc_s on Linux, libunwind elsewhere), which
// the standard library links for panics.
unsafe extern "C" {
    fn _Unwind_Backtrace(
        trace: extern "C" fn(*mut UnwindContext, *mut core::ffi::c_void) -> i32,
        arg: *mut core::ffi::c_void,
    ) -> i32;
    fn _Unwind_GetIP(context: *mut UnwindContext) -> usize;
    fn _Unwind_FindEnclosingFunction(pc: *mut core::ffi::c_void) -> *mut core::ffi::c_void;
}
