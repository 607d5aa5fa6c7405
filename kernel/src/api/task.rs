use super::caller_site;
use crate::port;
use crate::sched::{Op, TaskId};
use core::cell::UnsafeCell;

/// A task's statically allocated stack of `BYTES` bytes (8-byte aligned). The lowest words
/// hold a canary that the kernel checks at every scheduling point of the task.
/// The host port runs tasks on OS threads and leaves this memory unused.
#[repr(C, align(8))]
pub struct Stack<const BYTES: usize> {
    mem: UnsafeCell<[u8; BYTES]>,
}

// SAFETY: a stack is handed to one task at a time by `spawn`, which refuses a stack in use.
unsafe impl<const BYTES: usize> Sync for Stack<BYTES> {}

impl<const BYTES: usize> Default for Stack<BYTES> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const BYTES: usize> Stack<BYTES> {
    /// A zeroed stack (placed in `.bss`).
    pub const fn new() -> Self {
        Stack {
            mem: UnsafeCell::new([0; BYTES]),
        }
    }

    /// Lowest address and size in bytes.
    pub(crate) fn region(&'static self) -> (*mut u8, usize) {
        (self.mem.get() as *mut u8, BYTES)
    }
}

/// A spawned task, to be joined.
#[must_use = "a task should be joined"]
pub struct JoinHandle {
    id: TaskId,
}

impl JoinHandle {
    /// The task's id.
    pub fn id(&self) -> TaskId {
        self.id
    }

    /// Waits for the task to end (a join: happens-before from its end to here).
    #[track_caller]
    pub fn join(self) {
        port::point(Op::Join {
            s: caller_site(),
            child: self.id,
        });
    }
}

/// Spawns a task running `entry` on `stack`. The spawn is a scheduling point.
#[track_caller]
pub fn spawn<const BYTES: usize>(stack: &'static Stack<BYTES>, entry: fn()) -> JoinHandle {
    let s = caller_site();
    let id = port::spawn(stack.region(), entry);
    port::point(Op::Spawn { s, child: id });
    JoinHandle { id }
}

/// A scheduling point with no shared effect.
#[track_caller]
pub fn yield_now() {
    port::point(Op::Yield { s: caller_site() });
}

/// Runs `f` as an instrumented frame: entry and exit are events (DrFinder's call stacks).
#[track_caller]
pub fn frame<R>(f: impl FnOnce() -> R) -> R {
    let s = caller_site();
    port::point(Op::FrameEnter { s });
    let r = f();
    port::point(Op::FrameExit { s });
    r
}

/// The running task's id.
pub fn current_task() -> TaskId {
    port::current()
}

/// Firmware argument `i` from the configuration block (`jostle run --arg`), if given.
pub fn arg(i: usize) -> Option<u32> {
    port::arg(i)
}

/// Firmware argument `i`, or `default` when the block does not set it.
pub fn arg_or(i: usize, default: u32) -> u32 {
    arg(i).unwrap_or(default)
}
