//! Unserializable interleavings made real: AVIO's patterns (Lu, Tucek, Qin, Zhou, ASPLOS'06)
//! triggered actively as CTrigger does (Park, Lu, Zhou, ASPLOS'09). A triple targets a
//! context's two consecutive accesses `a1`, `a3` to one location and another context's
//! access `a2`: R-W-R, W-W-R, R-W-W or W-R-W cannot be explained by any serial order.
//!
//! When a task holds `a2`, the strategy holds the context before `a3` (once it has made
//! `a1`) until a task stands at `a2` and goes first. When a handler holds `a2` (a
//! [`role::FIRE`] breakpoint names its source), nothing can wait for it: the strategy fires
//! it somewhere in the window, at each of the context's points with probability 1/2 (until
//! the context crosses a section boundary: a lock, the critical section, a mask) and at
//! `a3` at the latest, until it has run once. Firing before `a3` matters when the window
//! masks the source by `a3` (racebench 019: the store must land before main's mask) or when
//! `a1`'s getter runs on (024, 029). The tracker records `a2` in the window wherever the
//! context stood, and the check in [`crate::targets`] reports the interleaving at `a3`.
//! Between two sections the context left and entered, an access by another context is the
//! programmer's design: only a hold at `a3` (CTrigger) confirms such a triple.
//!
//! An Embassy task's `a1` and `a3` in two of its polls (a check-then-act across an
//! `.await`, each access inside a guard of an async mutex) cannot be lined up at `a3`: a
//! task held there is inside its poll, holding its executor's lock, and no other task of
//! the executor runs until it goes on. Its executor runs others only between two of its
//! polls, so that is where the strategy pauses it: at the acquire that starts its next poll
//! (atomfuzzer-fse08 Algorithm 2, line 16: the pause at the re-acquire of the lock `L` a
//! block released, here the executor's), until another task's `a2` has landed in its window
//! (line 25's condition, the lock's acquire by another thread, made the triple's remote
//! access), and the tracker records what lands there ([`crate::targets::Tracker::between_polls`]).
//! At `a3` inside a poll it does not hold the task (those runs would be spent for nothing).
//!
//! When the window masks the remote's source and a more urgent handler was seen enabling it
//! (racebench 014: isr_1 masks isr_3, isr_2 unmasks it), the host names that handler too
//! ([`role::FIRE`] side 1, the *unmasker*): the strategy fires it where it would fire the
//! remote's, and the remote's at the points after it ran.

use super::{Check, Strategy, View};
use crate::event::IRQ_CONTEXT;
use crate::op::Op;
use crate::rng::SchedRng;
use crate::targets::{access, role};
use crate::task::{MAX_TASKS, TaskId, TaskSet};

/// The Avio strategy; its triple is the run's [`role::FIRST`], [`role::SECOND`] and
/// [`role::REMOTE`] breakpoints, and [`role::FIRE`] when a handler holds the remote access.
#[derive(Clone, Debug, Default)]
pub struct Avio {
    /// Tasks whose current window still waits for the handler (once per window).
    want_fire: TaskSet,
    /// Whether a handler's window got its firing (once per run for handlers).
    fired_for_handler: bool,
    /// Whether any context has made an `a1` in this run.
    opened: bool,
    /// Whether the unmasker's handler has run (or there is none).
    unmasked: bool,
}

impl Avio {
    /// The source to fire for the window: the unmasker until it has run, then the remote's.
    fn to_fire(&self, targets: &crate::targets::Targets) -> Option<u8> {
        match targets.fire_source(1) {
            Some(j) if !self.unmasked => Some(j),
            _ => targets.fire_source(0),
        }
    }
}

impl Strategy for Avio {
    const ANALYZES: bool = true;
    const TRACKS: bool = true;

    fn new(_params: [u32; 4], _rng: &mut SchedRng) -> Self {
        Avio::default()
    }

    fn checks(&self, op: &Op) -> bool {
        access(op).is_some() || !self.want_fire.is_empty() || (self.opened && op.starts_poll())
    }

    fn check(&mut self, t: TaskId, op: &Op, view: &View<'_>, rng: &mut SchedRng) -> Check {
        let targets = view.targets;
        let at_second = view.tracker.at_second(t, op, targets).is_some();
        if let Some(i) = self.to_fire(targets) {
            // A point at `a1`'s site opens another window (a loop over elements, racebench
            // 001): the firing is kept for a window that goes on to `a3`.
            let at_first = access(op).is_some_and(|(s, _, _)| targets.has(s, role::FIRST));
            // Before `a3`, only while the window has crossed no section boundary (see
            // `targets::Windows`): between two sections the programmer drew, a firing is
            // the design. At `a3` itself, as CTrigger does.
            if self.want_fire.contains(t)
                && (at_second
                    || (view.tracker.in_window(t) && !at_first && rng.below(2) == 0))
            {
                // The handler runs first if it can fire now; otherwise `t` goes on and the
                // next point tries again.
                return Check::FireFirst(i);
            }
            return Check::Execute;
        }
        if op.starts_poll() && view.tracker.awaits_remote(t) {
            // Between two polls, with `a1` made: paused until `a2` lands (see the module's
            // comment; released by `analyze`, or by the thrashing and livelock rules).
            return Check::Postpone;
        }
        if !at_second || view.tracker.in_poll(t) {
            // `a2` by anyone runs at once: the check makes the interleaving real. And a
            // task at `a3` inside a poll goes on: nobody of its executor could come first.
            return Check::Execute;
        }
        // `t` stands at `a3`, having made `a1`.
        let Some((_, a, _)) = access(op) else {
            return Check::Execute;
        };
        let mut remote = TaskSet::EMPTY;
        for u in 0..MAX_TASKS as TaskId {
            if u != t
                && let Some((s2, a2, _)) = view.pending(u).and_then(access)
                && a2 == a
                && targets.has(s2, role::REMOTE)
            {
                remote.insert(u);
            }
        }
        if remote.is_empty() {
            Check::Postpone // until a task stands at `a2` (or the livelock bound)
        } else {
            Check::ExecuteFirst(remote)
        }
    }

    fn analyze(&mut self, t: TaskId, op: &Op, view: &View<'_>, _rng: &mut SchedRng) -> TaskSet {
        let Some((s, a, _)) = access(op) else {
            return TaskSet::EMPTY;
        };
        // A new `a1` opens a new window, which waits for its firing.
        if view.targets.has(s, role::FIRST) {
            self.opened = true;
            if view.targets.fire_source(0).is_some() {
                self.want_fire.insert(t);
            }
        }
        // `a2` landed in the window of tasks paused between two polls: they go on
        // (atomfuzzer-fse08 Algorithm 2, line 26).
        let mut landed = TaskSet::EMPTY;
        if view.targets.has(s, role::REMOTE) {
            for p in view.postponed.iter() {
                if view.pending(p).is_some_and(Op::starts_poll)
                    && view.tracker.remote(p, a).is_some()
                {
                    landed.insert(p);
                }
            }
        }
        landed
    }

    /// Keeps the kernel's lean path off once a window has opened: every access must reach
    /// the tracker (any access to a window's location closes it) and every point of a window
    /// that waits for its firing must reach [`Strategy::check`].
    fn lean_budget(&self, _steps: u32) -> u32 {
        if self.opened { 0 } else { u32::MAX }
    }

    fn handler_fire(&mut self, ctx: TaskId, op: &Op, view: &View<'_>) -> Option<u8> {
        let targets = view.targets;
        if let Some(i) = targets.fire_source(0)
            && ctx == IRQ_CONTEXT + i
        {
            // The handler holding `a2` runs: every task's window got its firing.
            self.want_fire = TaskSet::EMPTY;
        }
        if let Some(j) = targets.fire_source(1)
            && ctx == IRQ_CONTEXT + j
        {
            self.unmasked = true;
        }
        if self.fired_for_handler || view.tracker.at_second(ctx, op, targets).is_none() {
            return None;
        }
        // The unmasker first (the point comes back once it returned), then the remote.
        let i = self.to_fire(targets)?;
        self.fired_for_handler = targets.fire_source(0) == Some(i);
        Some(i)
    }
}
