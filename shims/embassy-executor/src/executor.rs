//! The executor: each Embassy task a Jostle task of its own, each poll a section of the
//! executor's lock.
//!
//! Embassy polls one task at a time and a task gives the CPU back only at an `.await`
//! that returns `Pending`. Here each spawned task is a Jostle task whose body loops: take
//! the executor's lock, poll the future once, release the lock; if it is `Pending`, wait
//! for its wake-up signal, unless it woke itself during the poll. Polls of one executor
//! never interleave (the lock), as in Embassy, but which ready task polls next is the
//! seeded scheduler's decision at each `Acquire` (Embassy's own order is one of its
//! choices). The release takes no decision (`port::execute_now`): it commutes with every
//! other context's operation, so a decision before it would be one already made at the
//! task's next point. A wake is a `Signal` (see [`crate::raw`]), a wake of itself none; a
//! task waiting on a wake-up declares itself a sleeper first, so that a wake-up that never
//! comes is the run's verdict (`lost_wake`), not a pass or a deadlock.

use crate::raw::{TaskHeader, TaskRef};
use crate::spawner::Spawner;
use core::cell::Cell;
use jostle_kernel::clock;
use jostle_kernel::event::EXECUTOR_CLASS;
use jostle_kernel::{MAX_TASKS, Op, TaskId, port};

/// The state an executor needs: its identity (its address, the lock its polls hold) and,
/// for an [`crate::InterruptExecutor`], its interrupt and the tasks its handler polls.
// (The host port has no interrupt executor: the fields that are only its are not read there.)
#[cfg_attr(not(target_os = "none"), allow(dead_code))]
pub struct ExecutorCore {
    /// The NVIC line of an interrupt executor once started ([`NO_LINE`]: the thread-mode
    /// executor, or one not started).
    pub(crate) line: Cell<u16>,
    /// Its line's priority byte when it was started.
    pub(crate) priority: Cell<u8>,
    /// Its line's index among the kernel's interrupt sources ([`NO_SOURCE`] before the
    /// kernel knows it).
    pub(crate) source: Cell<u8>,
    /// Where it was started (its unmasking's site).
    pub(crate) site: Cell<u32>,
    /// The tasks an interrupt executor's handler polls.
    pub(crate) tasks: [Cell<Option<&'static TaskHeader>>; MAX_POLLED],
}

/// No line (the thread-mode executor's).
pub(crate) const NO_LINE: u16 = u16::MAX;
/// No kernel source yet.
pub(crate) const NO_SOURCE: u8 = 0xFF;
/// Most tasks one interrupt executor runs at once (each is an interrupt source of the
/// kernel's, beside its line: the kernel's default 8 sources bound them).
pub(crate) const MAX_POLLED: usize = 8;

// SAFETY: one task or handler runs at a time; the cells are touched between two scheduling
// points only.
unsafe impl Sync for ExecutorCore {}

impl ExecutorCore {
    pub(crate) const fn new() -> Self {
        ExecutorCore {
            line: Cell::new(NO_LINE),
            priority: Cell::new(0),
            source: Cell::new(NO_SOURCE),
            site: Cell::new(0),
            tasks: [const { Cell::new(None) }; MAX_POLLED],
        }
    }

    /// Its id: its address (a static's), also its polls' lock.
    pub(crate) fn id(&'static self) -> u32 {
        port::addr(self as *const Self as *const ())
    }

    /// The executor whose id is `id`.
    pub(crate) fn of(id: u32) -> &'static ExecutorCore {
        crate::raw::executor_of(id)
    }

    /// Is it an interrupt executor (its tasks polled by its line's handler)?
    pub(crate) fn is_interrupt(&self) -> bool {
        self.line.get() != NO_LINE
    }

    /// Starts `task` as a Jostle task of its own (a scheduling point: the spawn), at `site`.
    pub(crate) fn spawn(&'static self, task: TaskRef, site: u32) {
        #[cfg(target_os = "none")]
        if self.is_interrupt() {
            return crate::interrupt::spawn(self, task.header, site);
        }
        let header = task.header;
        header.executor.set(self.id());
        header.site.set(site);
        let (stack, region) = crate::arch::take_stack();
        let t = port::spawn(region, task_main);
        RUNNING.set(t, Some((header, stack)));
        header.task.set(t);
        let (pool, index) = header.pool();
        // The pool's address names the task (the host port: its location's id, named from
        // the executable's symbols as the run's other locations are).
        clock::name_task(t, port::addr(pool as *const ()), index);
        port::point(Op::Spawn { s: site, child: t });
    }
}

/// Jostle's executor: stands in for Embassy's thread-mode executor.
pub struct Executor {
    core: &'static ExecutorCore,
    not_send: core::marker::PhantomData<*mut ()>,
}

/// The thread-mode executor's state: a static, since `#[embassy_executor::main]` keeps the
/// `Executor` itself on the boot stack, which the kernel gives to interrupt handlers.
static THREAD: ExecutorCore = ExecutorCore::new();

/// The thread-mode executor's state.
#[cfg(not(target_os = "none"))]
pub(crate) fn thread() -> &'static ExecutorCore {
    &THREAD
}

impl Executor {
    /// The thread-mode executor.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Executor {
            core: &THREAD,
            not_send: core::marker::PhantomData,
        }
    }

    /// Starts Jostle's kernel: `init` runs as the boot task with this executor's spawner,
    /// and every task it spawns as a Jostle task. The run ends when every task has ended,
    /// when the application exits (semihosting), or with a finding.
    pub fn run(&'static mut self, init: impl FnOnce(Spawner)) -> ! {
        crate::arch::start(self.core, init)
    }
}

/// The Embassy tasks that are running, by Jostle task id: the header and the stack.
struct Running([Cell<Option<(&'static TaskHeader, usize)>>; MAX_TASKS]);

// SAFETY: one task or handler runs at a time; the table is touched between two scheduling
// points only.
unsafe impl Sync for Running {}

impl Running {
    fn set(&self, t: TaskId, entry: Option<(&'static TaskHeader, usize)>) {
        self.0[t as usize].set(entry);
    }
    fn get(&self, t: TaskId) -> Option<(&'static TaskHeader, usize)> {
        self.0[t as usize].get()
    }
}

static RUNNING: Running = Running([const { Cell::new(None) }; MAX_TASKS]);

/// The body of every Embassy task's Jostle task: poll, then wait to be woken, until done.
fn task_main() {
    let t = port::current();
    let Some((header, stack)) = RUNNING.get(t) else {
        panic!("jostle: task {t} is no Embassy task");
    };
    let executor = header.executor.get();
    let site = header.site.get();
    let g = header.wake_signal();
    // The executor's lock has a class of its own: the kernel's triple windows and the
    // checker's iGoodlock tell a poll's bounds from a lock's by it.
    let poll_start = Op::Acquire {
        s: site,
        l: executor,
        c: EXECUTOR_CLASS,
    };
    loop {
        port::point(poll_start);
        header.queued.set(false);
        header.woke_itself.set(false);
        // The futures still waiting on a deadline set the task's timer again as they are
        // polled: a timer no future waits on wakes nobody.
        if header.timer_at.replace(u64::MAX) != u64::MAX {
            clock::cancel_timer(g);
        }
        let done = header.poll().is_ready();
        // No decision before the release (`Core::execute_now`: it commutes with every
        // other context's operation); the next one is at the wait or the acquire below.
        port::execute_now(Op::Release {
            s: site,
            l: executor,
        });
        if done {
            break;
        }
        // While a timer is pending, tasks whose polls only wake each other let time pass.
        clock::poll_pending();
        if header.woke_itself.get() {
            // Woken by itself during the poll (no signal to wait for): ready again, it
            // competes for the next poll at the acquire.
            continue;
        }
        clock::sleep(g, 0, header.wait_pcs.get());
        port::point(Op::Wait { s: site, g });
    }
    if header.timer_at.replace(u64::MAX) != u64::MAX {
        clock::cancel_timer(g);
    }
    RUNNING.set(t, None);
    crate::arch::give_stack(stack);
}
