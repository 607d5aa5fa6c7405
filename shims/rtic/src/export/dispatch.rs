//! Async tasks: their requests and their dispatchers' polls.
//!
//! RTIC's dispatcher of a priority level polls each of its tasks in a fixed order, and each
//! poll runs only if the task was woken. Here the dispatcher's body only *collects* those
//! calls ([`collect`]); then the kernel draws, among the collected tasks that wait for a
//! poll, which one is polled next, again and again until none waits (RTIC's order is one
//! of the draws; a task woken meanwhile is polled in the same dispatch, as it would be when
//! it comes later in RTIC's order). Each task is an interrupt source of the kernel of its
//! own, registered at its first request: its polls are firings nested in the dispatcher's,
//! a context of their own in events, named after the task.
//!
//! A task's request ([`pended`]) is made by the expansion's `pend` of the dispatcher that
//! follows every `set_pending` (spawn and wake): one scheduling point, a request of the
//! task's source, which the kernel turns into a request of its dispatcher too.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU8, Ordering};

use jostle_kernel::event::IRQ_CONTEXT;
use jostle_kernel::port;
use jostle_kernel::sched::irq::{Firing, MAX_IRQS};

/// An executor with no source yet.
pub(super) const NO_SOURCE: u8 = 0xFF;

/// Most async tasks one dispatcher polls.
const MAX_LEVEL_TASKS: usize = MAX_IRQS;

/// One task's executor, type-erased.
#[derive(Clone, Copy)]
pub struct Task {
    /// The executor's address.
    pub exec: *const (),
    /// Polls it (if it waits for a poll) with its waker's function.
    pub poll: unsafe fn(*const (), fn()),
    /// Does it wait for a poll (running and woken)?
    pub ready: unsafe fn(*const ()) -> bool,
    /// Its source cell.
    pub source: unsafe fn(*const ()) -> &'static AtomicU8,
    /// Its future's type name (the task's name, for the host).
    pub name: &'static str,
    /// The expansion's wake function for it.
    pub wake: fn(),
}

impl Task {
    fn source(&self) -> u8 {
        // SAFETY: `Task`s are made by their executor with its own functions.
        unsafe { (self.source)(self.exec) }.load(Ordering::Relaxed)
    }

    fn ready(&self) -> bool {
        // SAFETY: as in `source`.
        unsafe { (self.ready)(self.exec) }
    }
}

/// The wake function of a request (unused: a request names no waker).
pub(super) fn no_wake() {}

/// State touched only by the running context, between scheduling points (one core; a
/// preempting handler runs to completion and leaves it as it found it, except where noted).
struct Local<T>(UnsafeCell<T>);

// SAFETY: see the type's doc.
unsafe impl<T> Sync for Local<T> {}

impl<T> Local<T> {
    /// # Safety
    /// No other reference to the value is alive.
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self) -> &mut T {
        // SAFETY: per the contract.
        unsafe { &mut *self.0.get() }
    }
}

/// The task a `set_pending` just asked a poll for, until the expansion's `pend` that
/// follows it.
static PENDED: Local<Option<Task>> = Local(UnsafeCell::new(None));

/// A dispatcher's body is running: its `poll` calls are collected.
static COLLECTING: Local<Option<Collected>> = Local(UnsafeCell::new(None));

/// The sources known to be dispatchers (requested only).
static DISPATCHERS: Once = Once::new();

/// The tasks a dispatcher's body named.
#[derive(Clone, Copy)]
pub(super) struct Collected {
    tasks: [Option<Task>; MAX_LEVEL_TASKS],
    len: usize,
}

/// An executor asked for a poll ([`Task`] of its `set_pending`).
pub(super) fn pended(task: Task) {
    // SAFETY: between scheduling points of the running context.
    unsafe { *PENDED.get() = Some(task) };
}

/// The expansion pends dispatcher `j` (source index): when a `set_pending` came just
/// before, that task's source (registered now if this is its first request) is the one to
/// request.
pub(super) fn take_pended(j: u8) -> Option<u8> {
    // SAFETY: between scheduling points of the running context.
    let task = unsafe { PENDED.get().take()? };
    Some(source_of(&task, j))
}

/// The task's source, registered as one polled by dispatcher `j` if it has none yet.
fn source_of(task: &Task, j: u8) -> u8 {
    let k = task.source();
    if k != NO_SOURCE {
        return k;
    }
    let k = port::register_polled(j);
    // SAFETY: as in `Task::source`.
    unsafe { (task.source)(task.exec) }.store(k, Ordering::Relaxed);
    port::name_context(IRQ_CONTEXT + k, task.name);
    k
}

/// The dispatcher's `poll` call of `task`: collected (`true`) while a dispatcher's body
/// runs; `false` elsewhere.
pub(super) fn collect(task: Task) -> bool {
    // SAFETY: between scheduling points of the running context.
    let Some(c) = (unsafe { COLLECTING.get() }) else {
        return false;
    };
    if c.len < MAX_LEVEL_TASKS {
        c.tasks[c.len] = Some(task);
        c.len += 1;
    }
    true
}

/// The body `f` of the handler of source `i`: a dispatcher's polls (the tasks it names, in
/// the drawn order), or a hardware task's body as it is.
pub(super) fn run(i: u8, f: impl FnOnce()) {
    // SAFETY: the body collects without reaching a scheduling point (the expansion's
    // dispatcher only calls `poll`), so no other context runs in between.
    let collected = unsafe {
        let outer = COLLECTING.get().replace(Collected {
            tasks: [None; MAX_LEVEL_TASKS],
            len: 0,
        });
        f();
        let mine = COLLECTING.get().take();
        *COLLECTING.get() = outer;
        mine
    };
    let Some(collected) = collected.filter(|c| c.len > 0) else {
        return;
    };
    // A dispatcher: it fires when one of its tasks is requested, never on its own.
    if DISPATCHERS.first(i) {
        port::set_firing(i, Firing::Requested);
    }
    let tasks = &collected.tasks[..collected.len];
    let mut remaining = 0u32;
    for task in tasks.iter().flatten() {
        if task.ready() || task.source() != NO_SOURCE {
            remaining |= 1 << source_of(task, i);
        }
    }
    loop {
        let ready = tasks
            .iter()
            .flatten()
            .filter(|t| t.source() != NO_SOURCE && remaining & (1 << t.source()) != 0)
            .filter(|t| t.ready())
            .fold(0u32, |m, t| m | 1 << t.source());
        let Some(k) = port::next_poll(ready) else {
            break;
        };
        remaining &= !(1 << k);
        let Some(task) = tasks.iter().flatten().find(|t| t.source() == k) else {
            break;
        };
        port::poll_enter(k);
        // SAFETY: the task's own poll function on its own executor.
        unsafe { (task.poll)(task.exec, task.wake) };
        port::poll_exit(k);
    }
}

/// One bit per source: whether something was done for it in this run.
pub(super) struct Once(UnsafeCell<u32>);

// SAFETY: touched only by the running context, between scheduling points.
unsafe impl Sync for Once {}

impl Once {
    /// No source yet.
    pub(super) const fn new() -> Self {
        Once(UnsafeCell::new(0))
    }

    /// Is this the first call for source `i`?
    pub(super) fn first(&self, i: u8) -> bool {
        // SAFETY: see the type's doc.
        let bits = unsafe { &mut *self.0.get() };
        let first = *bits & (1 << i) == 0;
        *bits |= 1 << i;
        first
    }
}

/// The executors `main`'s priority-0 dispatcher polled since one was last ready.
static IDLE_SEEN: Local<([usize; MAX_LEVEL_TASKS], usize)> =
    Local(UnsafeCell::new(([0; MAX_LEVEL_TASKS], 0)));

/// `main`'s priority-0 dispatcher polled `exec`, which did not wait for a poll: once every
/// executor it polls came round without work, task 0 waits for an interrupt.
pub(super) fn idle_poll(exec: *const ()) {
    // SAFETY: task 0's state, between its scheduling points.
    let (seen, len) = unsafe { IDLE_SEEN.get() };
    if seen[..*len].contains(&(exec as usize)) {
        *len = 0;
        port::idle(0);
    } else if *len < MAX_LEVEL_TASKS {
        seen[*len] = exec as usize;
        *len += 1;
    }
}

/// `main`'s priority-0 dispatcher polled a task that had work.
pub(super) fn progress() {
    // SAFETY: as in `idle_poll`.
    unsafe { IDLE_SEEN.get().1 = 0 };
}
