//! Who holds each async task's waker, for the lost wake-up verdict (contract E2).
//!
//! A task that returned `Pending` is woken by whatever holds a clone of its waker (a
//! channel's wait queue, the timer queue, a static the application keeps). This crate owns
//! the waker's vtable, so it counts the clones alive per task: a pending task whose waker
//! nobody holds can never be woken, and is declared a sleeper to the kernel
//! (`Core::sleep`); a new clone or a wake withdraws it. When the run can go no further with
//! a sleeper left, the run ends with `lost_wake`, naming the task and where it last handed
//! out its waker (return addresses on the stack at that clone: the `.await`).
//!
//! The waker a poll lends its future (`Context`) counts only while the poll runs (it dies
//! with the poll). Clones of it, and the expansion's `task_waker()`, count until dropped.
//!
//! A pending task whose waker something holds *waits*: the kernel lets an application's
//! SysTick monotonic tick while one does (`port::set_waiting`), since that something may be
//! its timer queue.

use core::cell::UnsafeCell;
use core::mem;
use core::task::{RawWaker, RawWakerVTable};

use jostle_kernel::clock::WaitAddrs;
use jostle_kernel::event::IRQ_CONTEXT;
use jostle_kernel::port;
use jostle_kernel::sched::irq::MAX_IRQS;

/// The counted waker: its data is the expansion's wake function for one task.
pub(super) static COUNTED: RawWakerVTable = RawWakerVTable::new(
    counted_clone,
    counted_wake,
    counted_wake_by_ref,
    counted_drop,
);

/// Reads an executor's state: (running, pending).
type StateFn = unsafe fn(*const ()) -> (bool, bool);

/// What this module knows of one task, by its source index.
#[derive(Clone, Copy)]
struct Held {
    /// The task's wake function (the waker's data), 0 until its first poll.
    wake: usize,
    /// Its executor (the kernel's wake-up signal id) and its state (running, pending).
    exec: usize,
    state: Option<StateFn>,
    /// Counted wakers alive.
    clones: u16,
    /// Where it last handed out its waker.
    pcs: WaitAddrs,
}

struct Table(UnsafeCell<[Held; MAX_IRQS]>);

/// The tasks that wait (pending, their waker held), a bit per source index.
struct Waiting(UnsafeCell<u32>);

// SAFETY: as for `Table`.
unsafe impl Sync for Waiting {}

static WAITING: Waiting = Waiting(UnsafeCell::new(0));

// SAFETY: touched only by the running context, between scheduling points (one core).
unsafe impl Sync for Table {}

static TABLE: Table = Table(UnsafeCell::new(
    [Held {
        wake: 0,
        exec: 0,
        state: None,
        clones: 0,
        pcs: [0; 4],
    }; MAX_IRQS],
));

fn table() -> &'static mut [Held; MAX_IRQS] {
    // SAFETY: see `Table`; no reference outlives the call that takes it.
    unsafe { &mut *TABLE.0.get() }
}

/// The task whose wake function is `wake`.
fn by_wake(wake: usize) -> Option<(u8, &'static mut Held)> {
    table()
        .iter_mut()
        .enumerate()
        .find(|(_, h)| h.wake == wake && wake != 0)
        .map(|(k, h)| (k as u8, h))
}

/// Task `k` (its executor `exec`, whose `state` reads running and pending) is polled with
/// wake function `wake`.
pub(super) fn bind(
    k: u8,
    wake: fn(),
    exec: *const (),
    state: unsafe fn(*const ()) -> (bool, bool),
) {
    if let Some(h) = table().get_mut(k as usize) {
        h.wake = wake as usize;
        h.exec = exec as usize;
        h.state = Some(state);
    }
}

/// A counted waker was made for `wake` (the expansion's `task_waker()`).
pub(super) fn made(wake: fn()) {
    if let Some((k, h)) = by_wake(wake as usize) {
        h.clones = h.clones.saturating_add(1);
        withdraw(k, h);
    }
}

/// A poll of the task with wake function `wake` lends its future a counted waker: it counts
/// until [`returned`], without the bookkeeping of a clone (the task is running, not
/// waiting).
pub(super) fn lent(wake: fn()) {
    if let Some((_, h)) = by_wake(wake as usize) {
        h.clones = h.clones.saturating_add(1);
    }
}

/// The poll that lent a waker returned: the lent waker no longer counts ([`suspended`] or
/// [`woken`] follows and decides).
pub(super) fn returned(wake: fn()) {
    if let Some((_, h)) = by_wake(wake as usize) {
        h.clones = h.clones.saturating_sub(1);
    }
}

/// Task `k`'s poll returned `Pending`: a sleeper if nothing holds its waker and it was not
/// woken meanwhile.
pub(super) fn suspended(k: u8) {
    if let Some(h) = table().get_mut(k as usize) {
        declare_if_forgotten(k, h);
    }
}

/// The task was woken (a `set_pending`): it is no sleeper.
pub(super) fn woken(exec: *const ()) {
    if let Some((k, h)) = table()
        .iter_mut()
        .enumerate()
        .find(|(_, h)| h.exec == exec as usize && h.exec != 0)
    {
        withdraw(k as u8, h);
    }
}

fn withdraw(k: u8, h: &Held) {
    port::clockwork(|c, _| c.unsleep(h.exec as u32));
    note_waiting(k, h);
}

fn declare_if_forgotten(k: u8, h: &Held) {
    let Some(state) = h.state else { return };
    // SAFETY: the executor's own state function, bound at its poll.
    let (running, pending) = unsafe { state(h.exec as *const ()) };
    if running && !pending && h.clones == 0 {
        port::clockwork(|c, _| c.sleep(IRQ_CONTEXT + k, h.exec as u32, 0, h.pcs));
    }
    note_waiting(k, h);
}

/// Task `k` waits, or not, now: tells the kernel whether any does.
fn note_waiting(k: u8, h: &Held) {
    let waits = h.state.is_some_and(|state| {
        // SAFETY: as in `declare_if_forgotten`.
        let (running, pending) = unsafe { state(h.exec as *const ()) };
        running && !pending && h.clones > 0
    });
    // SAFETY: see `Waiting`.
    let bits = unsafe { &mut *WAITING.0.get() };
    let before = *bits;
    if waits {
        *bits |= 1 << k;
    } else {
        *bits &= !(1 << k);
    }
    if (before == 0) != (*bits == 0) {
        port::set_waiting(*bits != 0);
    }
}

unsafe fn counted_clone(p: *const ()) -> RawWaker {
    if let Some((k, h)) = by_wake(p as usize) {
        h.clones = h.clones.saturating_add(1);
        h.pcs = port::return_addresses();
        withdraw(k, h);
    }
    RawWaker::new(p, &COUNTED)
}

unsafe fn counted_wake(p: *const ()) {
    // SAFETY: the data is a wake function (made by `AsyncTaskExecutor::waker`).
    unsafe { counted_wake_by_ref(p) };
    // SAFETY: as above; the waker is consumed.
    unsafe { counted_drop(p) };
}

unsafe fn counted_wake_by_ref(p: *const ()) {
    // The waker's data is the expansion's wake function: it sets the executor pending and
    // pends the dispatcher.
    // SAFETY: the data was made from a `fn()`.
    let f: fn() = unsafe { mem::transmute(p) };
    f();
}

unsafe fn counted_drop(p: *const ()) {
    if let Some((k, h)) = by_wake(p as usize) {
        h.clones = h.clones.saturating_sub(1);
        if h.clones == 0 {
            declare_if_forgotten(k, h);
        }
    }
}
