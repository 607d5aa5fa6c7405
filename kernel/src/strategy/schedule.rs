//! Schedule: follows a recorded schedule, for replaying a finding's run and shrinking it
//! (the host's `engine/shrink.rs`, delta debugging over the schedule's entries).
//!
//! The breakpoints carry the schedule's entries, each anchored at one task's operation count
//! rather than at a global step, so that removing an earlier entry leaves the later ones
//! meaning the same thing ("when task A is about to run its n-th operation"):
//!
//! - [`role::SWITCH`]: at a decision where task `A` ran last and has executed `n` operations
//!   (it stands before its operation `n`, counted from 0; or it has ended after `n`), task
//!   `B` runs next if it is enabled. `site` is `n`; `aux` holds `A` and `B`
//!   ([`Schedule::switch`]).
//! - [`role::FIRE_AT`]: when context `A` (a task, or a handler below) executed last and has
//!   executed `n` operations, interrupt source `i` fires first (once per entry)
//!   ([`Schedule::fire`]).
//!
//! Between entries the strategy is non-preemptive: the task that ran last keeps running
//! while it is enabled; when it blocks or ends, the lowest enabled task id goes. So the
//! preemptions of a run under this strategy are exactly its [`role::SWITCH`] entries whose
//! `A` was still enabled, and dropping an entry removes one context switch.
//!
//! Interrupts: the seed draws no firings under this strategy ([`Strategy::DRAWS_FIRINGS`]),
//! since the draws of the recorded run came from a random stream interleaved with its
//! strategy's own draws, which a replay cannot reproduce. A firing the recorded run chose
//! (drawn, or a strategy's: its `IrqEnter` says `f=0`) is an entry instead (below); a
//! request firmware pended fires as soon as it can, and a source still eligible when no
//! task can run fires then, as under every strategy.
//!
//! Every decision and step is the strategy's (it counts each task's operations), so the
//! kernel's lean path has no budget under it.
//!
//! Firmware that runs mostly in handlers (a framework's: RTIC's tasks are handlers, its
//! async tasks sources polled by their dispatcher) anchors entries at handler contexts
//! too: a [`role::FIRE_AT`] entry whose `A` is a handler context (`IRQ_CONTEXT + j`) means
//! "when that handler has executed `n` operations (counted over all its firings)", and
//! fires its source at that handler's point ([`Strategy::handler_fire`]: a firing nested
//! in it, or where it settles its pends). At the decisions of the tasks' context (whether
//! a task can run or not) the entries anchored at the context that executed last, task or
//! handler, fire ([`Strategy::replayed_fire`]): in a framework's firmware task 0 may stand
//! still while many handlers run, so its own count would not tell those decisions apart.
//! A replayed firing competes by urgency with the firings due there, as the recorded run's
//! drawn one did. A [`role::POLL_AT`] entry ([`Schedule::poll`])
//! picks the async task a dispatcher polls next ([`Strategy::poll_pick`]) at the decision
//! of the context that executed last; without one, a dispatcher polls its lowest-indexed
//! ready task (RTIC's order).

use super::{Strategy, View};
use crate::event::IRQ_CONTEXT;
use crate::interrupt::MAX_IRQS;
use crate::op::Op;
use crate::rng::SchedRng;
use crate::targets::{Breakpoint, MAX_BREAKPOINTS, aux, role, role_of};
use crate::task::{MAX_TASKS, TaskId, TaskSet};

/// The schedule-following strategy.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// Operations each task has executed.
    count: [u32; MAX_TASKS],
    /// Operations each handler context has executed (over all its firings).
    handler_count: [u32; MAX_IRQS],
    /// The task that executed last (the one whose decision it is).
    last: TaskId,
    /// The context (task or handler) that executed last.
    last_ctx: TaskId,
    /// Breakpoints (by index) whose firing has been made.
    fired: u16,
}

// One bit per breakpoint in `fired`.
const _: () = assert!(MAX_BREAKPOINTS <= 16);

impl Schedule {
    /// The entry "when task `a` has executed `n` operations, task `b` runs next".
    pub const fn switch(a: TaskId, n: u32, b: TaskId) -> Breakpoint {
        Breakpoint {
            site: n,
            aux: aux(role::SWITCH, b) | (a as u32) << 8,
        }
    }

    /// The entry "when task `a` has executed `n` operations, source `i` fires first".
    pub const fn fire(a: TaskId, n: u32, i: u8) -> Breakpoint {
        Breakpoint {
            site: n,
            aux: aux(role::FIRE_AT, i) | (a as u32) << 8,
        }
    }

    /// The entry "when context `a` (the one that executed last) has executed `n`
    /// operations, its dispatcher polls async task `k` (a source index) next".
    pub const fn poll(a: TaskId, n: u32, k: u8) -> Breakpoint {
        Breakpoint {
            site: n,
            aux: aux(role::POLL_AT, k) | (a as u32) << 8,
        }
    }

    /// An entry's role ([`role::SWITCH`], [`role::FIRE_AT`] or [`role::POLL_AT`]), anchor
    /// context, anchor count, and the task or source it names; `None` for another
    /// breakpoint.
    pub const fn entry(bp: &Breakpoint) -> Option<(u8, TaskId, u32, u8)> {
        let r = role_of(bp.aux);
        if r == role::SWITCH || r == role::FIRE_AT || r == role::POLL_AT {
            Some((r, (bp.aux >> 8) as u8, bp.site, bp.aux as u8))
        } else {
            None
        }
    }

    /// Operations context `a` (a task or a handler) has executed.
    fn executed(&self, a: TaskId) -> Option<u32> {
        match a.checked_sub(IRQ_CONTEXT) {
            Some(j) => self.handler_count.get(j as usize).copied(),
            None => self.count.get(a as usize).copied(),
        }
    }

    /// The first entry of role `r`, not yet `used`, whose source or task passes `fits`,
    /// anchored at context `at` having executed the operations it has: its index and the
    /// task or source it names.
    fn anchored(
        &self,
        view: &View<'_>,
        r: u8,
        used: u16,
        at: TaskId,
        fits: impl Fn(u8) -> bool,
    ) -> Option<(usize, u8)> {
        let n = self.executed(at)?;
        view.targets
            .breakpoints()
            .iter()
            .enumerate()
            .find_map(|(k, bp)| match Self::entry(bp) {
                Some((er, a, en, x))
                    if er == r && a == at && en == n && used & (1 << k) == 0 && fits(x) =>
                {
                    Some((k, x))
                }
                _ => None,
            })
    }

    /// A recorded entry of role `r` (a firing, or a poll) anchored at context `at`, once.
    fn take_here(
        &mut self,
        view: &View<'_>,
        r: u8,
        at: TaskId,
        fits: impl Fn(u8) -> bool,
    ) -> Option<u8> {
        let (k, i) = self.anchored(view, r, self.fired, at, fits)?;
        self.fired |= 1 << k;
        Some(i)
    }

    /// A recorded firing anchored at context `at`, once.
    fn fire_here(&mut self, view: &View<'_>, at: TaskId) -> Option<u8> {
        self.take_here(view, role::FIRE_AT, at, |_| true)
    }
}

impl Strategy for Schedule {
    const ANALYZES: bool = true;
    const DRAWS_FIRINGS: bool = false;

    fn new(_params: [u32; 4], _rng: &mut SchedRng) -> Self {
        Schedule {
            count: [0; MAX_TASKS],
            handler_count: [0; MAX_IRQS],
            last: 0,
            last_ctx: 0,
            fired: 0,
        }
    }

    /// The entry's task when one is anchored here and it can run; else the task that ran
    /// last while it can; else the lowest enabled one.
    fn pick(&mut self, candidates: TaskSet, view: &View<'_>, _rng: &mut SchedRng) -> TaskId {
        if let Some((_, b)) = self.anchored(view, role::SWITCH, 0, self.last, |_| true)
            && candidates.contains(b)
        {
            return b;
        }
        if candidates.contains(self.last) {
            self.last
        } else {
            candidates.nth(0)
        }
    }

    fn analyze(&mut self, t: TaskId, _op: &Op, _view: &View<'_>, _rng: &mut SchedRng) -> TaskSet {
        if let Some(c) = self.count.get_mut(t as usize) {
            *c = c.saturating_add(1);
            self.last = t;
            self.last_ctx = t;
        }
        TaskSet::EMPTY
    }

    fn handler_executed(&mut self, ctx: TaskId, _op: &Op) {
        if let Some(c) = ctx
            .checked_sub(IRQ_CONTEXT)
            .and_then(|j| self.handler_count.get_mut(j as usize))
        {
            *c = c.saturating_add(1);
            self.last_ctx = ctx;
        }
    }

    /// A firing anchored at the handler's point.
    fn handler_fire(&mut self, ctx: TaskId, _op: &Op, view: &View<'_>) -> Option<u8> {
        self.fire_here(view, ctx)
    }

    /// A firing anchored at the running handler, or, in the tasks' context, at the context
    /// that executed last (each entry once: the decision is made again after the handler
    /// returns, at the same anchor).
    fn replayed_fire(&mut self, running: Option<TaskId>, view: &View<'_>) -> Option<u8> {
        self.fire_here(view, running.unwrap_or(self.last_ctx))
    }

    /// A recorded pick among `ready`, else the lowest-indexed (RTIC's order).
    fn poll_pick(&mut self, ready: u32, view: &View<'_>) -> Option<u8> {
        self.take_here(view, role::POLL_AT, self.last_ctx, |i| {
            (i as u32) < 32 && ready & (1 << i) != 0
        })
            .or(Some(ready.trailing_zeros() as u8).filter(|_| ready != 0))
    }

    /// Never decided without counting: to the general loop.
    #[inline(always)]
    fn lean_pick(&mut self, _enabled: TaskSet, _rng: &mut SchedRng) -> Option<TaskId> {
        None
    }

    /// Every step is counted.
    #[inline(always)]
    fn lean_budget(&self, _steps: u32) -> u32 {
        0
    }
}
