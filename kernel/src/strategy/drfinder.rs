//! DrFinder (drfinder-fse15 Algorithms 2–3): reverse lock hand-offs to expose races hidden
//! behind happens-before edges. When a task requests a lock of class `c` and another task's
//! current frame `f` may trigger an acquire of `c` (`mt(f, c)` from a previous run), that
//! other task is *escorted*: it runs with top priority until it acquires a lock of class `c`,
//! and only then may the requester go. The cooperative kernel runs the paper's Agent and
//! Scheduler threads as one loop: `requestALock` is [`Strategy::check`] on an acquire,
//! `lockAcquired` is [`Strategy::analyze`], the escort is [`Strategy::pick`]'s priority.

use super::{Check, Strategy, View};
use crate::op::{Op, Slot};
use crate::rng::SchedRng;
use crate::targets::{role, role_of};
use crate::task::{TaskId, TaskSet};

/// An escort in progress: `escorted` must acquire a lock of `class` before `requester`.
#[derive(Clone, Copy, Debug)]
struct Escort {
    escorted: TaskId,
    class: u32,
    requester: TaskId,
}

/// The DrFinder strategy; its may-trigger relations are the run's [`role::RELATION`] and
/// [`role::CLASS`] breakpoints.
#[derive(Clone, Debug, Default)]
pub struct DrFinder {
    escort: Option<Escort>,
    /// The task allowed to acquire next without a new escort (Algorithm 3, line 54).
    allowed: Option<TaskId>,
}

impl DrFinder {
    /// Is an escort in progress (the pick then favours the escorted task)?
    pub fn escorting(&self) -> bool {
        self.escort.is_some()
    }

    /// `mayTrigger` (Algorithm 3, lines 21–27): is `mt(frame of u, class)` a relation?
    fn may_trigger(view: &View<'_>, u: TaskId, class: u32) -> bool {
        let Some(&frame) = view.tracker.tasks[u as usize].frames.as_slice().last() else {
            return false;
        };
        let bps = view.targets.breakpoints();
        bps.iter().any(|r| {
            role_of(r.aux) == role::RELATION
                && r.site == frame
                && bps.iter().any(|c| {
                    role_of(c.aux) == role::CLASS && c.aux as u8 == r.aux as u8 && c.site == class
                })
        })
    }
}

impl Strategy for DrFinder {
    const ANALYZES: bool = true;
    const TRACKS: bool = true;

    fn new(_params: [u32; 4], _rng: &mut SchedRng) -> Self {
        DrFinder::default()
    }

    #[inline(always)]
    fn lean_pick(&mut self, enabled: TaskSet, rng: &mut SchedRng) -> Option<TaskId> {
        if self.escorting() {
            None
        } else {
            Some(super::uniform(enabled, rng))
        }
    }

    /// An escort favours its task in every pick: the lean path must not pick meanwhile.
    fn lean_budget(&self, _steps: u32) -> u32 {
        if self.escorting() { 0 } else { u32::MAX }
    }

    fn checks(&self, op: &Op) -> bool {
        super::is_acquire(op)
    }

    fn pick(&mut self, candidates: TaskSet, view: &View<'_>, rng: &mut SchedRng) -> TaskId {
        if let Some(e) = self.escort {
            if !matches!(view.slots[e.escorted as usize], Slot::Alive(_)) {
                // The escorted task ended without the acquire: the escort is over.
                self.escort = None;
            } else if candidates.contains(e.escorted) {
                // The escorted task executes its events first (Algorithm 3, line 41).
                return e.escorted;
            }
        }
        super::uniform(candidates, rng)
    }

    fn check(&mut self, t: TaskId, op: &Op, view: &View<'_>, rng: &mut SchedRng) -> Check {
        let Op::Acquire { c, .. } = *op else {
            return Check::Execute;
        };
        // requestALock, lines 6–7: the allowed task goes.
        if self.allowed == Some(t) || self.escort.is_some_and(|e| e.escorted == t) {
            self.allowed = None;
            return Check::Execute;
        }
        if self.escort.is_some() {
            // Lines 9–10: wait in RTHs while another escort runs.
            return Check::Postpone;
        }
        // schedule(), lines 33–39: the tasks whose current frame may trigger class `c`.
        let mut triggering = TaskSet::EMPTY;
        for u in Slot::stopped(view.slots).iter() {
            if u != t && Self::may_trigger(view, u, c) {
                triggering.insert(u);
            }
        }
        if triggering.is_empty() {
            return Check::Execute; // lines 52–55
        }
        // Lines 40–47: escort a random one; it leaves the postponed set if it was there.
        let escorted = triggering.nth(rng.below(triggering.len()));
        self.escort = Some(Escort {
            escorted,
            class: c,
            requester: t,
        });
        let mut first = TaskSet::EMPTY;
        if view.postponed.contains(escorted) {
            first.insert(escorted);
        }
        Check::ExecuteFirst(first)
    }

    fn analyze(&mut self, t: TaskId, op: &Op, _view: &View<'_>, _rng: &mut SchedRng) -> TaskSet {
        if matches!(op, Op::Acquire { .. }) && self.allowed == Some(t) {
            self.allowed = None;
        }
        let Some(e) = self.escort else {
            return TaskSet::EMPTY;
        };
        let mut release = TaskSet::EMPTY;
        match *op {
            // lockAcquired, lines 16–18, then lines 52–55: the requester may go now.
            Op::Acquire { c, .. } if t == e.escorted && c == e.class => {
                self.escort = None;
                self.allowed = Some(e.requester);
                release.insert(e.requester);
            }
            // The requester was released by thrashing or the livelock bound and took its lock.
            Op::Acquire { .. } if t == e.requester => self.escort = None,
            _ => {}
        }
        release
    }
}
