//! A task that overflows its stack on the host port ends its run with the `stack_overflow`
//! verdict, as on the device, instead of killing the process with no word.
//!
//! Each task's coroutine stack has a guard page below it ([`super::tasks`]); a frame that
//! reaches it faults (`SIGSEGV`, or `SIGBUS` on some systems). The handler, on a signal
//! stack of its own, looks the fault address up among the live tasks' guard pages: if one
//! is hit, the run ends there (its lines, `StackOverflow`, `RunEnd`, exit 14: the
//! process's last run, the host tool starts the next seed in a new process); any other
//! fault gets the default action.

use crate::task::{MAX_TASKS, TaskId};
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Per task: the top of its stack and the lowest address of its mapping, whose first page
/// is the guard (0: no live task).
static STACKS: [(AtomicUsize, AtomicUsize); MAX_TASKS] =
    [const { (AtomicUsize::new(0), AtomicUsize::new(0)) }; MAX_TASKS];

/// The guard's size: one page.
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// The signal stack's size: room for the handler's formatting and writing.
const SIGNAL_STACK: usize = 64 * 1024;

/// Installs the handler (once per process).
pub(super) fn install() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        // SAFETY: plain libc calls on this process; the signal stack is leaked, so it
        // outlives every signal.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            let stack = Box::leak(vec![0u8; SIGNAL_STACK].into_boxed_slice());
            let alt = libc::stack_t {
                ss_sp: stack.as_mut_ptr().cast(),
                ss_flags: 0,
                ss_size: SIGNAL_STACK,
            };
            libc::sigaltstack(&alt, std::ptr::null_mut());
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fault as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            for sig in [libc::SIGSEGV, libc::SIGBUS] {
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
        }
    });
}

/// Task `t` runs on the stack mapped from `limit` (its guard page first) up to `top`.
pub(super) fn watch(t: TaskId, top: usize, limit: usize) {
    let (a, b) = &STACKS[usize::from(t)];
    a.store(top, Ordering::Relaxed);
    b.store(limit, Ordering::Relaxed);
}

/// Task `t`'s stack is no longer its.
pub(super) fn unwatch(t: TaskId) {
    STACKS[usize::from(t)].1.store(0, Ordering::Relaxed);
}

/// The task whose guard page holds `addr`, with the depth it reached (bytes below its
/// stack's top).
fn overflowing(addr: usize) -> Option<(TaskId, usize, usize)> {
    let page = PAGE.load(Ordering::Relaxed);
    STACKS.iter().enumerate().find_map(|(t, (top, limit))| {
        let (top, limit) = (top.load(Ordering::Relaxed), limit.load(Ordering::Relaxed));
        (limit != 0 && addr >= limit && addr < limit + page)
            .then(|| (t as TaskId, top.saturating_sub(addr), top - limit - page))
    })
}

extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid `siginfo_t` for SIGSEGV and SIGBUS.
    let addr = unsafe { (*info).si_addr() } as usize;
    match overflowing(addr) {
        Some((t, depth, size)) => super::overflowed(t, depth, size),
        None => {
            // Not a task's guard: the default action, when the faulting instruction runs
            // again on return.
            // SAFETY: resetting a signal's disposition.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
    }
}
