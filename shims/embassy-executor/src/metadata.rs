//! Task metadata (embassy-executor 0.10's `Metadata`): a name, a priority and a deadline
//! a task may set; kept, but no scheduling decision reads them (the seeded scheduler
//! chooses among every ready task).

use core::cell::Cell;
use core::future::{Future, poll_fn};
use core::task::Poll;

/// A task's metadata.
pub struct Metadata {
    name: Cell<Option<&'static str>>,
    priority: Cell<u8>,
    deadline: Cell<u64>,
}

// SAFETY: one task or handler runs at a time; the cells are touched between scheduling
// points only.
unsafe impl Sync for Metadata {}

impl Metadata {
    pub(crate) const fn new() -> Self {
        Metadata {
            name: Cell::new(None),
            priority: Cell::new(0),
            deadline: Cell::new(u64::MAX),
        }
    }

    pub(crate) fn reset(&self) {
        self.name.set(None);
        self.priority.set(0);
        self.deadline.set(u64::MAX);
    }

    /// The metadata of the task being polled.
    pub fn for_current_task() -> impl Future<Output = &'static Self> {
        poll_fn(|cx| Poll::Ready(crate::raw::task_from_waker(cx.waker()).metadata()))
    }

    /// The task's name, if set.
    pub fn name(&self) -> Option<&'static str> {
        self.name.get()
    }

    /// Sets the task's name.
    pub fn set_name(&self, name: &'static str) {
        self.name.set(Some(name));
    }

    /// The task's priority (kept; not a scheduling input under Jostle).
    pub fn priority(&self) -> u8 {
        self.priority.get()
    }

    /// Sets the task's priority (kept; not a scheduling input under Jostle).
    pub fn set_priority(&self, priority: u8) {
        self.priority.set(priority);
    }

    /// The task's deadline in ticks (`u64::MAX`: none).
    pub fn deadline(&self) -> u64 {
        self.deadline.get()
    }

    /// Sets the task's deadline in ticks.
    pub fn set_deadline(&self, instant_ticks: u64) {
        self.deadline.set(instant_ticks);
    }

    /// Removes the task's deadline.
    pub fn unset_deadline(&self) {
        self.deadline.set(u64::MAX);
    }

    /// Sets the deadline `duration_ticks` after now.
    pub fn set_deadline_after(&self, duration_ticks: u64) {
        self.deadline
            .set(jostle_kernel::clock::now().saturating_add(duration_ticks));
    }

    /// Moves the deadline `duration_ticks` later.
    pub fn increment_deadline(&self, duration_ticks: u64) {
        self.deadline
            .set(self.deadline.get().saturating_add(duration_ticks));
    }
}
