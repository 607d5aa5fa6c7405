//! `InterruptExecutor`: tasks polled by an interrupt handler, at that interrupt's priority,
//! so that they preempt the thread-mode executor's tasks (Embassy's multi-priority setup).
//!
//! Under Jostle the executor's line is an interrupt source of the kernel registered at run
//! time (contract R1) that fires as a pended line does ([`Firing::Pended`]): a wake of one of
//! its tasks is a request of the line, which the kernel fires at once when it is more urgent
//! than the running context and unmasked, else as soon as it is (at the end of a critical
//! section), as the NVIC takes a pended line. The handler the application writes calls
//! [`InterruptExecutor::on_interrupt`], entered through the vector table with the kernel's
//! entry and exit around the polls.
//!
//! Each task of the executor is a source of its own polled by the line's handler
//! ([`Firing::Polled`]): a context of its own in events, named after its task function, whose
//! scheduling points are a handler's (they run at once, unless a more urgent line fires
//! first). Which of the ready tasks the handler polls next is drawn from the seed (Embassy's
//! run-queue order is one of the draws); a task woken during the handler's polls is polled in
//! the same pass, once, as Embassy's run queue would take it.
//!
//! `start` may come before the kernel runs (from cortex-m-rt's `main`, before
//! `Executor::run`, as Embassy's multi-priority examples do): the line and the tasks spawned
//! meanwhile become sources when the kernel starts ([`kernel_started`]).

use crate::executor::{ExecutorCore, MAX_POLLED, NO_SOURCE};
use crate::raw::TaskHeader;
use crate::spawner::SendSpawner;
use core::cell::Cell;
use core::panic::Location;
use cortex_m::interrupt::InterruptNumber;
use jostle_kernel::clock;
use jostle_kernel::event::IRQ_CONTEXT;
use jostle_kernel::op::Op;
use jostle_kernel::port::{self, HandlerEntry};
use jostle_kernel::sched::irq::{Firing, IrqSource};

/// An executor whose tasks run in an interrupt handler, at its priority (embassy-executor's
/// `InterruptExecutor`): set the line's priority, [`start`](Self::start) it, and call
/// [`on_interrupt`](Self::on_interrupt) from the line's handler.
#[repr(C)]
pub struct InterruptExecutor {
    core: ExecutorCore,
}

impl InterruptExecutor {
    /// An executor not started yet.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        InterruptExecutor {
            core: ExecutorCore::new(),
        }
    }

    /// The line's handler: polls the executor's tasks that were woken.
    ///
    /// # Safety
    /// Only from the handler of the line given to [`start`](Self::start), as Embassy's.
    pub unsafe fn on_interrupt(&'static self) {
        match port::irq_enter_active() {
            HandlerEntry::Source(i) => {
                poll_woken(&self.core);
                port::irq_exit_active(i);
            }
            // The kernel fires the line when it chooses; a line it does not know (the
            // kernel has not started) has nothing to poll yet.
            HandlerEntry::Deferred | HandlerEntry::Unmanaged => {}
        }
    }

    /// Starts the executor on `irq`, whose priority the application has set: the line
    /// becomes an interrupt source of the kernel (now, or when the kernel starts), unmasked.
    /// Returns a spawner for its tasks.
    #[track_caller]
    pub fn start(&'static self, irq: impl InterruptNumber) -> SendSpawner {
        if self.core.is_interrupt() {
            panic!("InterruptExecutor::start() called multiple times on the same executor.");
        }
        let line = irq.number();
        self.core.line.set(line);
        self.core.priority.set(priority_of(line));
        self.core.site.set(port::site(Location::caller()));
        if BOOT.running.get() {
            register(&self.core);
        } else {
            match BOOT.waiting.iter().find(|w| w.get().is_none()) {
                Some(slot) => slot.set(Some(&self.core)),
                None => panic!("jostle: more than {WAITING} InterruptExecutors started"),
            }
        }
        SendSpawner {
            executor: &self.core,
        }
    }

    /// A spawner for its tasks (once started).
    pub fn spawner(&'static self) -> SendSpawner {
        if !self.core.is_interrupt() {
            panic!("InterruptExecutor::spawner() called on uninitialized executor.");
        }
        SendSpawner {
            executor: &self.core,
        }
    }
}

/// The priority byte the application wrote for NVIC line `line`.
fn priority_of(line: u16) -> u8 {
    const IPR: *const u8 = 0xE000_E400 as *const u8;
    // SAFETY: the NVIC's priority byte of a line the PAC names (an implemented line).
    unsafe { IPR.add(line as usize).read_volatile() }
}

/// The instance index of an object that has one (the host shows its name alone).
const NO_INDEX: u8 = 0xFF;

/// Most interrupt executors started before the kernel runs.
const WAITING: usize = 4;

/// Whether the kernel runs, and the interrupt executors started before it did.
struct Boot {
    running: Cell<bool>,
    waiting: [Cell<Option<&'static ExecutorCore>>; WAITING],
}

// SAFETY: one task or handler runs at a time; touched between scheduling points only (and
// before the kernel starts, by `main` alone).
unsafe impl Sync for Boot {}

/// Zeroed at every boot (each run boots anew).
static BOOT: Boot = Boot {
    running: Cell::new(false),
    waiting: [const { Cell::new(None) }; WAITING],
};

/// The kernel runs (task 0's first code): the interrupt executors started before get their
/// lines, and the tasks spawned on them their sources.
pub(crate) fn kernel_started() {
    BOOT.running.set(true);
    for slot in &BOOT.waiting {
        if let Some(core) = slot.take() {
            register(core);
        }
    }
}

/// Makes `core`'s line a source of the kernel, unmasked (as `start` unmasks it), and its
/// tasks sources polled by it; the tasks spawned already wait for their first poll.
fn register(core: &'static ExecutorCore) {
    let i = port::register_irq(
        core.line.get(),
        IrqSource {
            priority: core.priority.get(),
            firing: Firing::Pended,
        },
    );
    core.source.set(i);
    // The line's context is named after the executor's static (its first field is `core`).
    clock::name_task(IRQ_CONTEXT + i, core.id(), NO_INDEX);
    port::point(Op::IrqMask {
        s: core.site.get(),
        i,
        on: false,
    });
    for header in core.tasks.iter().filter_map(Cell::get) {
        let k = task_source(core, header);
        if header.queued.get() {
            pend(k, header.site.get());
        }
    }
    port::settle();
}

/// The source of `header`'s task on `core` (registered now if it has none).
fn task_source(core: &'static ExecutorCore, header: &'static TaskHeader) -> u8 {
    let k = header.source.get();
    if k != NO_SOURCE {
        return k;
    }
    let k = port::register_polled(core.source.get());
    header.source.set(k);
    header.task.set(IRQ_CONTEXT + k);
    let (pool, index) = header.pool();
    clock::name_task(IRQ_CONTEXT + k, pool as u32, index);
    k
}

/// Spawns `header`'s task on interrupt executor `core`, at `site`: it waits for its first
/// poll (a request of its source, when the kernel knows the line).
pub(crate) fn spawn(core: &'static ExecutorCore, header: &'static TaskHeader, site: u32) {
    header.executor.set(core.id());
    header.site.set(site);
    header.queued.set(true);
    if !core.tasks.iter().any(|t| t.get() == Some(header)) {
        match core.tasks.iter().find(|t| t.get().is_none()) {
            Some(slot) => slot.set(Some(header)),
            None => panic!("jostle: more than {MAX_POLLED} tasks on one InterruptExecutor"),
        }
    }
    if core.source.get() != NO_SOURCE {
        let k = task_source(core, header);
        pend(k, site);
        port::settle();
    }
}

/// Wakes `header`'s task of an interrupt executor (its `queued` just set): a request of its
/// source, which pends the executor's line; the line fires at once if it can.
pub(crate) fn request(header: &'static TaskHeader, at: &'static Location<'static>) {
    let k = header.source.get();
    if k == NO_SOURCE {
        // Spawned before the kernel ran: requested when the line is registered.
        return;
    }
    clock::unsleep(header.wake_signal());
    pend(k, port::site(at));
    port::settle();
}

/// A request of source `k` at site `s` (a scheduling point).
fn pend(k: u8, s: u32) {
    port::point(Op::IrqRequest { s, i: k });
}

/// The handler's polls: the woken tasks, each once, in the order the seed draws.
fn poll_woken(core: &'static ExecutorCore) {
    let mut unpolled = u32::MAX;
    loop {
        let ready = core
            .tasks
            .iter()
            .filter_map(Cell::get)
            .filter(|h| h.is_spawned() && h.source.get() != NO_SOURCE)
            .filter(|h| h.queued.get() || h.timer_at.get() <= clock::now())
            .map(|h| 1u32 << h.source.get())
            .fold(0, |m, b| m | b)
            & unpolled;
        let Some(k) = port::next_poll(ready) else {
            break;
        };
        unpolled &= !(1 << k);
        let Some(header) = core
            .tasks
            .iter()
            .filter_map(Cell::get)
            .find(|h| h.source.get() == k)
        else {
            break;
        };
        port::poll_enter(k);
        poll(core, header);
        port::poll_exit(k);
    }
}

/// One poll of `header`'s task, in its source's context.
fn poll(core: &'static ExecutorCore, header: &'static TaskHeader) {
    let g = header.wake_signal();
    clock::unsleep(g);
    header.queued.set(false);
    // As in a thread-mode task's poll: the futures still waiting on a deadline set the
    // timer again.
    if header.timer_at.replace(u64::MAX) != u64::MAX {
        clock::cancel_timer(g);
    }
    if header.poll().is_ready() {
        if header.timer_at.replace(u64::MAX) != u64::MAX {
            clock::cancel_timer(g);
        }
        if let Some(slot) = core.tasks.iter().find(|t| t.get() == Some(header)) {
            slot.set(None);
        }
    } else if !header.queued.get() && header.timer_at.get() == u64::MAX {
        // Waiting for a wake that only another context can send: if none comes, that is a
        // lost wake-up, of this context (named after the task), where it registered its
        // waker. A request or the next poll withdraws it.
        clock::sleep(g, 0, header.wait_pcs.get());
    }
}
