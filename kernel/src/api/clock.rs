//! Virtual time and wake-ups, for framework shims (embassy-time's driver, an Embassy or
//! RTIC executor): the kernel's clock and timers ([`crate::sched::time`]) and its record of
//! sleepers, which makes a wake-up that never comes a verdict ([`crate::sched::wake`]).
//! None of these is a scheduling point.

use crate::event::NO_TASK;
use crate::port;
pub use crate::sched::time::{MAX_TIMERS, TimerAction};
pub use crate::sched::wake::{MAX_SLEEPERS, WaitAddrs};
use crate::task::TaskId;

/// The virtual clock, in ticks since the run started. It moves only when nothing else can
/// happen (no task enabled, no interrupt source eligible; or every task that could go on
/// has only spun polling for the livelock bound, see [`poll_pending`]), to the earliest
/// timer's deadline.
pub fn now() -> u64 {
    port::clockwork(|c, _| c.now())
}

/// Sets timer `key` (a word the caller chooses, such as its wake-up signal's id) to fire at
/// tick `at`, replacing the key's timer if any. At most [`MAX_TIMERS`] at once.
pub fn set_timer(key: u32, at: u64, action: TimerAction) {
    port::clockwork(|c, _| c.set_timer(key, at, action))
}

/// Removes timer `key`, if set.
pub fn cancel_timer(key: u32) {
    port::clockwork(|c, _| c.cancel_timer(key))
}

/// The running task is about to wait (a [`crate::Signal`]-style wait, `Op::Wait`) for
/// wake-up signal `g`, at site `s` (0: unknown), from code addresses `pcs`: if the run can
/// go no further before it is woken, that is a lost wake-up.
pub fn sleep(g: u32, s: u32, pcs: WaitAddrs) {
    port::clockwork(|c, me| c.sleep(me, g, s, pcs))
}

/// A sleeper with no task of its own (an async task polled from a handler) now waits for
/// wake-up `g`; a signal on `g` or [`unsleep`] wakes it.
pub fn sleep_detached(g: u32, s: u32, pcs: WaitAddrs) {
    port::clockwork(|c, _| c.sleep(NO_TASK, g, s, pcs))
}

/// The task-less sleeper on `g` was woken.
pub fn unsleep(g: u32) {
    port::clockwork(|c, _| c.unsleep(g))
}

/// Names task `t` after the object at address `a` (instance `i` of it): the host shows the
/// task by that object's symbol (an Embassy task pool's function, an RTIC task's static).
pub fn name_task(t: TaskId, a: u32, i: u8) {
    port::clockwork(|c, _| c.name_task(t, a, i))
}

/// The running task or handler is about to wake signal `g` (its next step): a `WakeFrom`
/// event with the code addresses `pcs` it wakes from, at the full trace level (check
/// [`crate::port::values_traced`] before finding them).
pub fn note_wake(g: u32, pcs: WaitAddrs) {
    port::clockwork(|c, me| c.note_wake(me, g, pcs))
}

/// The running task's poll returned `Pending` (an async executor's task, after its poll):
/// while a timer is pending, tasks that only poll and wake each other let time pass
/// ([`crate::sched`]'s polling spins). Not a scheduling point.
pub fn poll_pending() {
    port::clockwork(|c, me| c.poll_pending(me))
}
