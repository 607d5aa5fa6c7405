//! Wake-ups and the lost wake-up: futures-based firmware (an Embassy task, an RTIC async
//! task) sleeps until something holding its waker wakes it. When the run can go no further
//! — no task enabled, no interrupt source eligible, no timer pending — a sleeper that
//! nothing woke never will be: the run ends with [`Verdict::LostWake`] and one
//! [`Event::LostWake`] per sleeper (its task, where it waits, its wake-up signal), unless
//! tasks are caught in a lock cycle (a deadlock, reported as such).
//!
//! A sleeper is declared by the port for the running task just before it waits on its
//! wake-up signal `g` ([`Core::sleep`]); executing that wait (it was woken) removes it. A
//! sleeper with no task of its own (`NO_TASK`: an RTIC async task polled from a
//! dispatcher) is removed by a signal on `g` or by [`Core::unsleep`].

use super::{Core, Sink};
use crate::event::{Event, NO_TASK, Verdict};
use crate::task::{MAX_TASKS, TaskId};

/// Most sleepers at once: one per task.
pub const MAX_SLEEPERS: usize = MAX_TASKS;

/// Code addresses a sleeper keeps to say where it waits (return addresses found on its
/// stack when it registered its waker; the host resolves them through the ELF's debug
/// information). 0: none.
pub type WaitAddrs = [u32; 4];

/// A context waiting for its wake-up.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sleeper {
    t: TaskId,
    s: u32,
    pcs: WaitAddrs,
}

impl<K: Sink> Core<K> {
    /// Task `t` (or `NO_TASK`) is about to wait for wake-up signal `g`, at site `s` (0 when
    /// unknown) and code addresses `pcs`. Not a scheduling point and no event: the wait
    /// that follows is both.
    pub fn sleep(&mut self, t: TaskId, g: u32, s: u32, pcs: WaitAddrs) {
        if self.sleepers.insert(g, Sleeper { t, s, pcs }).is_err() {
            panic!("more than {} sleepers at once", MAX_SLEEPERS);
        }
    }

    /// The sleeper on `g` was woken without a task's wait (a task-less sleeper).
    pub fn unsleep(&mut self, g: u32) {
        self.sleepers.remove(&g);
    }

    /// Context `t` is about to wake signal `g` from code addresses `pcs` (the `WakeFrom`
    /// event, at the full trace level only).
    pub fn note_wake(&mut self, t: TaskId, g: u32, pcs: WaitAddrs) {
        let [p0, p1, p2, p3] = pcs;
        self.record(Event::WakeFrom {
            t,
            g,
            p0,
            p1,
            p2,
            p3,
        });
    }

    /// Names task `t` after the object at address `a` (an Embassy task pool, an RTIC task's
    /// static: the host names it from the ELF's symbols), instance `i` of it.
    pub fn name_task(&mut self, t: TaskId, a: u32, i: u8) {
        self.record(Event::TaskName { t, a, i });
    }

    /// The effect on sleepers of a signal or wait on `g` by context `t`.
    #[inline]
    pub(super) fn wake_effect(&mut self, t: TaskId, g: u32, wait: bool) {
        if self.sleepers.is_empty() {
            return;
        }
        if let Some(sl) = self.sleepers.get(&g)
            && ((wait && sl.t == t) || (!wait && sl.t == NO_TASK))
        {
            self.sleepers.remove(&g);
        }
    }

    /// At the end of a run that can go no further: if some sleeper was never woken and no
    /// lock cycle holds tasks, emits one `LostWake` per sleeper and returns the verdict.
    /// Out of line, with nothing on its stack: it runs on a task's stack, inside `decide`.
    #[inline(never)]
    pub(super) fn lost_wake(&mut self) -> Option<Verdict> {
        if self.sleepers.is_empty() || self.lock_cycle().is_some() {
            return None;
        }
        // In (task, signal) order, so that the report does not depend on the order of
        // sleeping: the next one each time (a handful of entries).
        let mut last: Option<(TaskId, u32)> = None;
        while let Some(&(g, sl)) = self
            .sleepers
            .iter()
            .filter(|(g, sl)| last.is_none_or(|l| (sl.t, *g) > l))
            .min_by_key(|(g, sl)| (sl.t, *g))
        {
            last = Some((sl.t, g));
            let [p0, p1, p2, p3] = sl.pcs;
            self.sink.emit(&Event::LostWake {
                t: sl.t,
                s: sl.s,
                g,
                p0,
                p1,
                p2,
                p3,
            });
        }
        Some(Verdict::LostWake)
    }
}
