//! Interrupts: handlers as preemptors the scheduler fires.
//!
//! The firmware declares its sources ([`crate::interrupt::Interrupt`]): a priority in NVIC numbering (a lower
//! number preempts a higher one; tasks run below every handler) and how it may fire:
//! *requested* sources fire only after the firmware pended them, at a time the scheduler
//! chooses (Regehr, "Random testing of interrupt-driven software", EMSOFT 2005); *spontaneous*
//! ones may fire wherever they are enabled and unmasked, at most `max` times per run. A source
//! is eligible at a point of a context of priority `p` when it is enabled (NVIC), not active
//! (no re-entrance), more urgent than `p` (equal priorities do not preempt), not masked (the
//! critical section masks all, the priority mask those at or below its level), and has a
//! firing left (a pending request, or fewer than `max` firings).
//!
//! *When* an eligible source fires is drawn from the run's seed: a request's delay is uniform
//! over the configuration's horizon of scheduling steps, and a spontaneous source with at
//! most `m` firings draws each gap uniformly over `2 · horizon / (m + 1)` steps (its firings
//! spread over the horizon, which the host sets to the length of the runs it has seen); a
//! source due while masked fires as soon as it is unmasked, as a pended interrupt does. A
//! strategy may also fire one at once (RaceFuzzer, to make a race with a handler real; AVIO,
//! to put a handler's access inside a window); a source a run targets that way keeps its
//! last firing for that moment, as RaceFuzzer holds back one side of a race until the other
//! side comes (its other firings then spread over the whole horizon). When no task can run, an eligible source fires before the run is declared
//! over or deadlocked (a handler may be what the tasks wait for).
//!
//! A handler runs to completion: at its own scheduling points it executes at once, unless a
//! more urgent source fires first (nesting); an operation that would block (a held lock, an
//! empty signal, a live task's join) or a handler running past the livelock bound ends the
//! run with the `handler_blocked` verdict, as such a handler would hang the system.

use super::{Core, Next, Sink};
use crate::event::{Event, IRQ_CONTEXT, Verdict, WaitKind};
pub use crate::interrupt::{Firing, IrqSource, MAX_IRQS};
use crate::op::{ALL_IRQS, Op};
use crate::task::TaskId;

/// The context of code the port runs between steps, whose scheduling points are none (an
/// application's timer handler the port calls to move virtual time on tick by tick): only
/// the interrupt requests it makes take effect ([`Core::handler_point`]).
pub const QUIET_CONTEXT: TaskId = 0xFE;

/// The priority tasks run at: below every handler's (whose priorities are `u8`).
pub const THREAD_PRIORITY: u16 = 0x100;

/// A source's state in one run.
#[derive(Clone, Copy, Debug)]
pub(super) struct IrqState {
    source: IrqSource,
    /// The NVIC enable bit (sources start disabled, as after a reset).
    enabled: bool,
    /// A requested source's pended request.
    pending: bool,
    /// Firings so far.
    fired: u8,
    /// Of them, firings with no request pending (a [`Firing::Hardware`] source's budget).
    spontaneous: u8,
    /// The step from which it may fire (drawn; see the module doc).
    due: u32,
    /// One firing kept in reserve for the strategy: the run targets its handler (a race
    /// side or a remote access), so its last firing comes only when the strategy asks (or
    /// when no task can run), never spent early where it cannot make the target real. The
    /// others still fire as drawn: a handler may be needed earlier too (to fill the ring
    /// whose slot the window is about).
    reserved: bool,
    /// Its handler is running (or preempted by a more urgent one).
    active: bool,
    /// The operation its running handler is stopped before, at a scheduling point.
    pending_op: Option<Op>,
}

/// What a handler's scheduling point leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandlerNext {
    /// The operation was executed: the handler goes on.
    Run,
    /// Source `i` fires first (nested); then ask again with [`Core::handler_resume`].
    Fire(u8),
    /// The run is over.
    End(Verdict),
}

/// Does `op` change something another context could see (what a spinning handler never
/// does)?
fn changes_something(op: &Op) -> bool {
    match op {
        Op::Write { .. }
        | Op::Update { .. }
        | Op::Signal { .. }
        | Op::IrqRequest { .. }
        | Op::Spawn { .. }
        | Op::Release { .. } => true,
        Op::AtomicAccess { kind, .. } => *kind != crate::op::AtomicKind::Load,
        _ => false,
    }
}

/// The context id of source `i`'s handler.
pub fn irq_context(i: u8) -> TaskId {
    IRQ_CONTEXT + i
}

/// The source of a handler context, if `ctx` is one.
pub fn irq_of(ctx: TaskId) -> Option<u8> {
    ctx.checked_sub(IRQ_CONTEXT)
        .filter(|i| (*i as usize) < MAX_IRQS)
}

impl<K: Sink> Core<K> {
    /// Declares the firmware's interrupt sources (index = position), before the first
    /// decision. Each spontaneous source draws its first firing step.
    pub fn declare_irqs(&mut self, sources: &[IrqSource]) {
        self.irqs.clear();
        for source in sources.iter().take(MAX_IRQS) {
            self.add_irq(*source);
        }
    }

    /// Adds an interrupt source while the run goes on (a framework registers its handlers
    /// as it sets up the NVIC): it gets the next index, starts disabled, and a spontaneous
    /// one draws its first firing step from here. `None` when [`MAX_IRQS`] sources exist.
    pub fn add_irq(&mut self, source: IrqSource) -> Option<u8> {
        let i = self.irqs.len();
        if i >= MAX_IRQS {
            return None;
        }
        let reserved = self.targets.fires(i as u8);
        let due = match source.firing.spontaneous_max() {
            Some(max) if max > 0 => self.draw_due(self.gap_span(max, reserved)),
            _ => u32::MAX,
        };
        let _ = self.irqs.push(IrqState {
            source,
            enabled: false,
            pending: false,
            fired: 0,
            spontaneous: 0,
            due,
            reserved,
            active: false,
            pending_op: None,
        });
        self.refresh_lean();
        Some(i as u8)
    }

    /// The interrupt sources of this run, in index order.
    pub fn irq_sources(&self) -> impl Iterator<Item = IrqSource> + '_ {
        self.irqs.iter().map(|q| q.source)
    }

    /// A firing step drawn uniformly from the next `span` steps (at least 1); never, when
    /// the strategy replays firings instead ([`crate::strategy::Strategy::DRAWS_FIRINGS`]).
    fn draw_due(&mut self, span: u32) -> u32 {
        if !self.draws_firings {
            return u32::MAX;
        }
        self.steps
            .saturating_add(1)
            .saturating_add(self.rng.below(span.max(1)))
    }

    /// The span a spontaneous source with at most `max` firings draws each gap from:
    /// `2 · horizon / (n + 1)` for its `n` drawn firings, so that they (a mean gap of
    /// `horizon / (n + 1)`) spread over the horizon, which the host sets to the length of the
    /// runs it has seen. A source that fires once draws its step uniformly over the horizon.
    /// A `reserved` source's last firing is the strategy's, not drawn: its others spread over
    /// the whole horizon, since a window late in the run may need one before it (racebench
    /// 031: a stored 0 between two reads takes main down the branch whose window is aimed at).
    fn gap_span(&self, max: u8, reserved: bool) -> u32 {
        let drawn = if reserved {
            max.saturating_sub(1).max(1)
        } else {
            max
        };
        self.irq_horizon.saturating_mul(2) / (u32::from(drawn) + 1)
    }

    /// The priority of the context now running (a handler's, or the tasks').
    fn context_priority(&self) -> u16 {
        match self.irq_running.last() {
            Some(&i) => u16::from(self.irqs[i as usize].source.priority),
            None => THREAD_PRIORITY,
        }
    }

    /// Could source `i` fire now, above priority `above` (timing aside)?
    fn eligible(&self, i: usize, above: u16) -> bool {
        let q = &self.irqs[i];
        q.enabled
            && !q.active
            && u16::from(q.source.priority) < above
            && self.cs_holder.is_none()
            && (self.basepri == 0 || q.source.priority < self.basepri)
            && match q.source.firing {
                Firing::Requested | Firing::Pended => q.pending,
                Firing::Spontaneous { max } => q.fired < max,
                Firing::Hardware { max } => q.pending || q.spontaneous < max,
                Firing::Polled { .. } => false,
            }
    }

    /// Is source `i`'s next firing the one kept for the strategy (see `IrqState::reserved`)?
    fn in_reserve(&self, i: usize) -> bool {
        let q = &self.irqs[i];
        q.reserved
            && match q.source.firing {
                Firing::Spontaneous { max } => q.fired.saturating_add(1) >= max,
                Firing::Hardware { max } => !q.pending && q.spontaneous.saturating_add(1) >= max,
                Firing::Requested | Firing::Pended | Firing::Polled { .. } => false,
            }
    }

    /// The most urgent eligible source (lowest priority number, then index) that is due
    /// (or that a strategy asked to fire next), or any eligible one with `any`; `only_requested`
    /// leaves spontaneous sources out.
    /// Inline, the test for firmware with no source (no call at every decision).
    #[inline(always)]
    pub(super) fn irq_to_fire(&self, any: bool, only_requested: bool) -> Option<u8> {
        if self.irqs.is_empty() {
            return None;
        }
        self.irq_to_fire_among(any, only_requested)
    }

    /// [`Core::irq_to_fire`] when there are sources.
    #[inline(never)]
    fn irq_to_fire_among(&self, any: bool, only_requested: bool) -> Option<u8> {
        let above = self.context_priority();
        let mut best: Option<usize> = None;
        for i in 0..self.irqs.len() {
            let q = &self.irqs[i];
            let asked = any || self.fire_next == Some(i as u8);
            let timely = asked || (q.due <= self.steps && !self.in_reserve(i));
            let kind_ok = !only_requested
                || match q.source.firing {
                    Firing::Requested | Firing::Pended => true,
                    Firing::Hardware { .. } => q.pending,
                    Firing::Spontaneous { .. } | Firing::Polled { .. } => false,
                };
            if timely
                && kind_ok
                && self.eligible(i, above)
                && best.is_none_or(|b| q.source.priority < self.irqs[b].source.priority)
            {
                best = Some(i);
            }
        }
        best.map(|i| i as u8)
    }

    /// Could any source fire at the tasks' priority, now or later, without a task changing
    /// anything (enabled, unmasked, with a firing left; one held in reserve counts)?
    pub(super) fn irq_may_fire(&self) -> bool {
        (0..self.irqs.len()).any(|i| self.eligible(i, THREAD_PRIORITY))
    }

    /// The eligible source whose next firing the strategy holds in reserve, if any (the
    /// spin release fires it when every task only spins).
    pub(super) fn reserved_firing(&self) -> Option<u8> {
        let above = self.context_priority();
        (0..self.irqs.len())
            .find(|&i| self.in_reserve(i) && self.eligible(i, above))
            .map(|i| i as u8)
    }

    /// Steps the lean path may take before a source could be due (0: one is due now, or a
    /// strategy asked for one).
    pub(super) fn steps_to_irq(&self) -> u32 {
        if self.fire_next.is_some() {
            return 0;
        }
        let mut budget = u32::MAX;
        for i in 0..self.irqs.len() {
            if self.eligible(i, THREAD_PRIORITY) && !self.in_reserve(i) {
                budget = budget.min(self.irqs[i].due.saturating_sub(self.steps));
            }
        }
        budget
    }

    /// Source `i` fires from now on as `firing` (a framework learns what a source is from
    /// its first run: an RTIC dispatcher is requested only).
    pub fn set_firing(&mut self, i: u8, firing: Firing) {
        if let Some(q) = self.irqs.get_mut(i as usize) {
            q.source.firing = firing;
            if firing.spontaneous_max().is_none() && !q.pending {
                q.due = u32::MAX;
            }
        }
        self.refresh_lean();
    }

    /// The async task to poll next among `ready` (a bit per source index: the tasks of the
    /// running dispatcher that wait for a poll), drawn from the seed (RTIC's fixed order,
    /// the lowest index, is one of the draws; under a strategy that replays firings, it is
    /// the one taken); `None` when none is ready.
    pub fn next_poll(&mut self, ready: u32) -> Option<u8> {
        let n = ready.count_ones();
        if n == 0 {
            return None;
        }
        let view = crate::strategy::View {
            slots: &self.slots,
            postponed: self.postponed,
            step: self.steps,
            targets: &self.targets,
            tracker: &self.tracker,
        };
        if let Some(k) = self.strategy.poll_pick(ready, &view)
            && ready & (1 << k) != 0
        {
            return Some(self.picked_poll(ready, k));
        }
        let k = if n == 1 || !self.draws_firings {
            0
        } else {
            self.rng.below(n)
        };
        let mut bits = ready;
        for _ in 0..k {
            bits &= bits - 1;
        }
        Some(self.picked_poll(ready, bits.trailing_zeros() as u8))
    }

    /// Poll `k` of `ready` was picked: remembered when it is the dispatcher's own order (the
    /// lowest ready index), so that its firing is marked as one any strategy makes.
    fn picked_poll(&mut self, ready: u32, k: u8) -> u8 {
        self.poll_in_order = (u32::from(k) == ready.trailing_zeros()).then_some(k);
        k
    }

    /// Code the port runs in [`QUIET_CONTEXT`] stands for handler context `ctx` (its
    /// requests are recorded as that context's).
    pub fn quiet_as(&mut self, ctx: TaskId) {
        self.quiet_as = ctx;
    }

    /// A source pended by firmware ([`Firing::pends_at_once`]) that can fire above the
    /// running context now (after the pend, a mask's release, a critical section's end: the
    /// port fires it before the context goes on, as the NVIC would). A more urgent firing
    /// due (drawn, or replayed) holds it back: that one comes first, at the running
    /// context's next scheduling point.
    pub fn due_firing(&mut self) -> Option<u8> {
        self.ask_replayed_firing();
        let i = self.irq_to_fire(false, false)?;
        let q = &self.irqs[i as usize];
        (q.pending && q.source.firing.pends_at_once()).then_some(i)
    }

    /// The sources with a request pending, a bit per index.
    pub fn pending_sources(&self) -> u32 {
        self.irqs
            .iter()
            .enumerate()
            .filter(|(_, q)| q.pending)
            .fold(0, |m, (i, _)| m | 1 << i)
    }

    /// The priority mask now in force (0: none).
    pub fn prio_mask(&self) -> u8 {
        self.basepri
    }

    /// Handler entries so far in this run (the port checks that a firing happened).
    pub fn irq_entries(&self) -> u32 {
        self.irq_entered
    }

    /// The port is about to run source `i`'s handler (preempting `by`): its entry.
    pub fn irq_enter(&mut self, i: u8, by: TaskId) -> TaskId {
        self.irq_entered = self.irq_entered.wrapping_add(1);
        let ctx = irq_context(i);
        let q = &mut self.irqs[i as usize];
        // A pend taken as soon as it could be, or a poll in its dispatcher's order: any
        // strategy makes it (a schedule needs no entry for it).
        let forced = match q.source.firing {
            Firing::Polled { .. } => self.poll_in_order.take() == Some(i),
            firing => q.pending && firing.pends_at_once(),
        };
        q.active = true;
        if !q.pending {
            q.spontaneous = q.spontaneous.saturating_add(1);
        }
        q.pending = false;
        if self.fire_next == Some(i) {
            self.fire_next = None;
        }
        let p = q.source.priority;
        let _ = self.irq_running.push(i);
        self.handler_steps = 0;
        self.record(Event::IrqEnter {
            t: ctx,
            i,
            p,
            by,
            f: u8::from(forced),
        });
        ctx
    }

    /// Source `i`'s handler returned.
    pub fn irq_exit(&mut self, i: u8) {
        self.irq_running.pop();
        let spontaneous = {
            let q = &mut self.irqs[i as usize];
            q.active = false;
            q.fired = q.fired.saturating_add(1);
            match q.source.firing {
                Firing::Spontaneous { max } => Some((max, q.reserved)),
                Firing::Hardware { max } if q.spontaneous < max => Some((max, q.reserved)),
                Firing::Hardware { .. } => {
                    q.due = u32::MAX;
                    None
                }
                Firing::Requested | Firing::Pended | Firing::Polled { .. } => None,
            }
        };
        if let Some((max, reserved)) = spontaneous {
            let due = self.draw_due(self.gap_span(max, reserved));
            self.irqs[i as usize].due = due;
        }
        self.record(Event::IrqExit { t: irq_context(i) });
        self.refresh_lean();
    }

    /// Handler context `ctx` stops before `op`: a more urgent source may fire first;
    /// otherwise `op` executes at once (a handler is never postponed or switched out).
    /// In [`QUIET_CONTEXT`] (code the port runs between steps) only a request takes effect,
    /// recorded as the handler `quiet_as`'s; nothing else is a step or an event.
    pub fn handler_point(&mut self, ctx: TaskId, op: Op) -> HandlerNext {
        if ctx == QUIET_CONTEXT {
            if let Op::IrqRequest { .. } = op {
                self.execute_irq_op(&op);
                if let Some(event) = op.event(self.quiet_as) {
                    self.record(event);
                }
            }
            return HandlerNext::Run;
        }
        if let Some(i) = irq_of(ctx) {
            self.irqs[i as usize].pending_op = Some(op);
        }
        self.handler_resume(ctx)
    }

    /// The handlers stopped at a scheduling point below the running one, with their
    /// operations (the targets' checks see them as they see stopped tasks), into `out`
    /// (empty). Filled in place: a vector returned by value was copied whole, some 170
    /// instructions at every checked step, though it is empty unless handlers run.
    pub(super) fn preempted_handlers(&self, out: &mut crate::fixed::Vec<(TaskId, Op), MAX_IRQS>) {
        for &i in self.irq_running.iter() {
            if let Some(op) = self.irqs[i as usize].pending_op {
                let _ = out.push((irq_context(i), op));
            }
        }
    }

    /// Continues the point of handler `ctx` after a nested handler returned.
    pub fn handler_resume(&mut self, ctx: TaskId) -> HandlerNext {
        let Some(me) = irq_of(ctx) else {
            return HandlerNext::Run;
        };
        let Some(op) = self.irqs[me as usize].pending_op else {
            return HandlerNext::Run;
        };
        // A strategy may want a more urgent handler first (e.g. between a handler's two
        // accesses of a targeted triple).
        if self.fire_next.is_none() {
            let view = crate::strategy::View {
                slots: &self.slots,
                postponed: self.postponed,
                step: self.steps,
                targets: &self.targets,
                tracker: &self.tracker,
            };
            if let Some(i) = self.strategy.handler_fire(ctx, &op, &view) {
                let _ = self.fire_soon(i);
            }
        }
        if let Some(i) = self.irq_to_fire(false, false) {
            return HandlerNext::Fire(i);
        }
        self.irqs[me as usize].pending_op = None;
        if self.steps >= self.step_limit {
            self.abort(Verdict::StepLimit);
            return HandlerNext::End(Verdict::StepLimit);
        }
        // Steps that change nothing another context could see count towards the spin bound;
        // one that does (a write, a request, a signal) is progress (a handler doing real
        // work for long, an RTIC task's loop of locked updates, is no spin).
        self.handler_steps = if changes_something(&op) {
            0
        } else {
            self.handler_steps + 1
        };
        let blocked = match op {
            Op::Acquire { l, .. } if self.locks.contains_key(&l) => Some((WaitKind::Lock, l)),
            Op::Join { child, .. } if !self.is_done(child) => {
                Some((WaitKind::Join, u32::from(child)))
            }
            Op::Wait { g, .. } if self.signals.get(&g).is_none_or(|n| *n == 0) => {
                Some((WaitKind::Signal, g))
            }
            _ if self.handler_steps > self.livelock_bound => Some((WaitKind::Spin, 0)),
            _ => None,
        };
        if let Some((kind, on)) = blocked {
            self.sink.emit(&Event::HandlerBlocked {
                t: ctx,
                s: op.site().unwrap_or(0),
                kind: kind as u8,
                on,
            });
            self.abort(Verdict::HandlerBlocked);
            return HandlerNext::End(Verdict::HandlerBlocked);
        }
        self.run_in_handler(ctx, op);
        HandlerNext::Run
    }

    /// The effects of an interrupt operation (request, masks), by any context.
    pub(super) fn execute_irq_op(&mut self, op: &Op) {
        match *op {
            // A request while one is pending merges with it (one pended bit).
            Op::IrqRequest { i, .. }
                if (i as usize) < self.irqs.len() && !self.irqs[i as usize].pending =>
            {
                // A pend by firmware fires as soon as the source can (not drawn, so the same
                // under every strategy); a peripheral's request after a drawn delay.
                let due = if self.irqs[i as usize].source.firing.pends_at_once() {
                    self.steps
                } else {
                    self.draw_due(self.irq_horizon)
                };
                let q = &mut self.irqs[i as usize];
                q.pending = true;
                q.due = due;
                // An async task's request pends its dispatcher too (its waker does both).
                if let Firing::Polled { by } = q.source.firing {
                    self.execute_irq_op(&Op::IrqRequest { s: 0, i: by });
                }
            }
            Op::IrqMask { i, on, .. } => {
                for (n, q) in self.irqs.iter_mut().enumerate() {
                    if i == ALL_IRQS || n == i as usize {
                        q.enabled = !on;
                    }
                }
            }
            Op::PrioMask { level, .. } => self.basepri = level,
            _ => {}
        }
    }

    /// The hardware took source `i`'s pended line although the kernel did not fire it
    /// (firmware pended it through the NVIC itself): the pend becomes a request, which the
    /// scheduler fires at a point of its choosing. No scheduling point: where the context
    /// pended it is not known (the event names the running context `t`).
    pub fn request_from_hardware(&mut self, t: TaskId, i: u8) {
        let op = Op::IrqRequest { s: 0, i };
        self.execute_irq_op(&op);
        if let Some(event) = op.event(t) {
            self.record(event);
        }
        self.refresh_lean();
    }

    /// Under a strategy that replays firings instead of drawing them, the firing it replays
    /// here (at a decision of the tasks' context, or where the running handler settles its
    /// pends), asked for as a strategy's request: it then competes by urgency with the
    /// firings due, as the recorded run's drawn one did.
    #[inline(always)]
    pub(super) fn ask_replayed_firing(&mut self) {
        if self.draws_firings || self.fire_next.is_some() {
            return;
        }
        self.ask_strategy_for_firing();
    }

    /// [`Core::ask_replayed_firing`] past its test.
    #[inline(never)]
    fn ask_strategy_for_firing(&mut self) {
        let running = self.irq_running.last().map(|&i| irq_context(i));
        let view = crate::strategy::View {
            slots: &self.slots,
            postponed: self.postponed,
            step: self.steps,
            targets: &self.targets,
            tracker: &self.tracker,
        };
        if let Some(i) = self.strategy.replayed_fire(running, &view) {
            let _ = self.fire_soon(i);
        }
    }

    /// Fires source `i` at the next decision (a strategy's request), if it is eligible
    /// above the running context; returns whether it is.
    pub(super) fn fire_soon(&mut self, i: u8) -> bool {
        if (i as usize) < self.irqs.len() && self.eligible(i as usize, self.context_priority()) {
            self.fire_next = Some(i);
            self.lean_budget = 0;
            true
        } else {
            false
        }
    }

    /// Is task `t` done (a join of it would not block)?
    fn is_done(&self, t: TaskId) -> bool {
        matches!(self.slots.get(t as usize), Some(crate::op::Slot::Done))
    }

    /// A handler's step: the targets' check (a handler completes a race with a task
    /// stopped at the other side), the effect, the event.
    fn run_in_handler(&mut self, ctx: TaskId, op: Op) {
        if self.checking {
            self.check_targets(ctx, &op);
        }
        self.apply(ctx, &op);
        if self.tracking {
            self.tracker.after_access(ctx, &op, &self.targets);
        }
        if self.analyzing {
            self.strategy.handler_executed(ctx, &op);
        }
        // A handler's write (or lock, signal, mask) may be what a spinning task waits for.
        self.note_spin(ctx, &op);
        self.steps += 1;
        if op.level() <= self.trace
            && let Some(event) = op.event(ctx)
        {
            self.sink.emit(&event);
        }
    }

    /// The next decision of the task context, after a handler fired at its point returned.
    pub fn resume(&mut self) -> Next {
        self.decide()
    }
}
