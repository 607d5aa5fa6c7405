//! Spinning: tasks that can only spin, and what the loop does about them.
//!
//! A task *spins* when it executes a spin mark (a yield, `hint::spin_loop` being one, or a
//! compare-and-swap that failed) and nothing that any context could see has changed since its
//! previous spin mark: in between, no context executed an operation that may change shared
//! state (a write, a read-modify-write, a successful compare-and-swap, a lock operation, a
//! signal, a spawn, an interrupt request or mask; see [`Op::observes`]). Such a task waits for
//! something another context must do.
//!
//! Two rules follow.
//!
//! - **Spin release** (racefuzzer-pldi08 Algorithm 1 lines 26–27 and §4; calfuzzer-cav09 §4).
//!   The papers release a random postponed task when every enabled task is postponed
//!   (thrashing), and leave the livelock in which "all threads end up in the postponed set,
//!   except for one thread that does something in a loop without synchronizing with other
//!   threads" to a monitor that releases tasks "waiting for a long time" (the livelock bound).
//!   A task that only spins is that thread: so when every enabled task that is not postponed
//!   spins, a random enabled postponed task is released at once (`SpinRelease`), as line 27
//!   releases one, instead of at the bound. A firing the strategy holds in reserve
//!   (`sched::irq`) is released the same way when no task is postponed. The starvation was
//!   the strategy's doing; the bound stays as the fallback for tasks that make progress.
//! - **Starvation.** A task that runs alone while nothing else can act (every other task
//!   ended or blocked, none postponed, no interrupt source able to fire, no timer pending) and
//!   repeats the same iteration — the same operations at the same sites on the same locations,
//!   none of which changes anything, and at least one a read — for [`STARVATION_BOUND`] steps
//!   (the livelock bound when smaller), waits for something nothing can do: the run ends with
//!   the `starvation` verdict, naming the task, the site of its last read and the location it
//!   reads (`Starved`). Its local variables are the only thing that could still differ
//!   between iterations, so a loop bounded by a counter (a delay, a retry limit) of more than
//!   the bound's steps is reported too. The bound is shorter than the livelock bound: the
//!   evidence is stronger (nothing else can act), and every starving run lasts that long.
//!
//! - **Polling spins let time pass.** An async task (an Embassy task) gives the CPU back at
//!   every poll that returns `Pending` ([`Core::poll_pending`]); a task whose poll returns
//!   `Pending` twice with no data changed by anyone since the first of them
//!   ([`Op::changes_data`]: no write, no read-modify-write, no spawn, no task ended, no timer
//!   fired — locks, the critical section, wakes and waits only order or wake) *spins
//!   polling*. Tasks that wake each other and do nothing else (two waiters of embassy-sync's
//!   `Mutex`, whose single waker slot wakes the old waker when another registers) do so for
//!   ever under a clock that moves only when no task is ready, while on a board time passes
//!   as they poll and the deadline comes. But a hand-off inside a library changes no data
//!   the kernel sees: a `Watch`, `PubSub` or `AtomicWaker` of embassy-sync is not
//!   instrumented, and a `Channel` or `Signal` through `jostle-embassy-sync` is seen as a
//!   send and a receive, which order and wake but change no data by this rule (the
//!   executor's wakes are sends and receives too, and two waiters waking each other must
//!   still spin). A producer and a consumer look the same. So a poll is given a cost: once polls
//!   have changed no data for the livelock bound's steps, (1) when every candidate task
//!   spins polling and a timer is pending, the clock jumps to the earliest deadline and the
//!   timers due fire ([`Core::advance_time`]; the tasks they wake then compete as any enabled
//!   tasks, the strategy choosing), and (2) while some candidate does not spin polling, the
//!   strategy picks among those only: a task a timer woke is not starved by spinners a
//!   strategy prefers (PCT's priorities), as Embassy's run queue would poll it. Before the
//!   bound nothing changes, so a timeout never fires in a hand-off of a few polls. With no
//!   timer pending nothing moves, and tasks that spin for ever still end the run at the step
//!   limit, a finding. The marks are kept whatever the trace level (the lean path, which
//!   does not look at operations, is off while any is set).
//!
//! The evidence is kept only while something is held back (a postponed task, a firing in
//! reserve while a task runs alone) or a task runs alone, and cleared after every other
//! step: each keeps the lean path (which does not look at operations) off, so every step is
//! seen, and what is known does not depend on the trace level (a run replayed at full trace
//! makes the same releases as at the results level).

use super::{Core, Next, Sink};
use crate::config::STARVATION_BOUND;
use crate::event::{Event, Verdict};
use crate::op::Op;
use crate::task::{TaskId, TaskSet};

/// FNV-1a 32's offset basis and prime: the hash of an iteration's (site, location) pairs.
const FNV_BASIS: u32 = 0x811c_9dc5;
const FNV_PRIME: u32 = 0x0100_0193;

fn mix(h: u32, s: u32, a: u32) -> u32 {
    let h = (h ^ s).wrapping_mul(FNV_PRIME);
    (h ^ a).wrapping_mul(FNV_PRIME)
}

/// The lone task's iterations, watched while nothing else can act (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SpinWatch {
    /// The task watched.
    task: TaskId,
    /// An iteration's first operation has been seen (`anchor` is set).
    anchored: bool,
    /// An iteration has completed (`last` is set).
    completed: bool,
    /// The bound was reached: the task starves.
    pub(super) starved: bool,
    /// The current iteration read something (a location, not only yields).
    reads: bool,
    /// The previous iteration did.
    last_reads: bool,
    /// The hash of the (site, location) of an iteration's first operation: an iteration ends
    /// when the task comes back to it.
    anchor: u32,
    /// The current iteration's operations, hashed.
    hash: u32,
    /// The previous iteration's hash.
    last: u32,
    /// The step the current iteration began at.
    began: u32,
    /// The step the identical iterations began at.
    since: u32,
    /// The last read's site and location: what the task waits for.
    read: (u32, u32),
}

impl SpinWatch {
    /// Task `t` executed an operation at site `s` on location `a` (0: none; `read`: it read
    /// `a`) that changed nothing, at step `step`; `bound` is how many steps of identical
    /// iterations make a starvation.
    pub(super) fn observe(&mut self, t: TaskId, s: u32, a: u32, read: bool, step: u32, bound: u32) {
        if self.task != t {
            *self = SpinWatch {
                task: t,
                ..SpinWatch::default()
            };
        }
        let key = mix(FNV_BASIS, s, a);
        if !self.anchored {
            self.anchored = true;
            self.anchor = key;
            self.hash = key;
            self.began = step;
        } else if key != self.anchor {
            self.hash = mix(self.hash, s, a);
        } else {
            // Back at the anchor: an iteration ended. A task that only yields (a delay
            // loop) waits for nothing it reads: only iterations that read can starve.
            if self.completed && self.hash == self.last {
                self.starved = self.last_reads && step.wrapping_sub(self.since) >= bound;
            } else {
                self.completed = true;
                self.last = self.hash;
                self.last_reads = self.reads;
                self.since = self.began;
            }
            self.hash = key;
            self.began = step;
            self.reads = false;
        }
        if read {
            self.read = (s, a);
            self.reads = true;
        }
    }

    /// Something changed (or the task is no longer alone): the watch starts over. Only the
    /// flags: [`SpinWatch::observe`] writes every other field before it reads it (an
    /// anchor before the hash, a completed iteration before `last`, `since` and
    /// `last_reads`, a read before `read`), and this runs at every step that makes
    /// progress, where clearing the whole watch cost some 45 instructions.
    #[inline(always)]
    pub(super) fn reset(&mut self) {
        self.anchored = false;
        self.completed = false;
        self.starved = false;
        self.reads = false;
    }
}

impl<K: Sink> Core<K> {
    /// Task or handler `t` executed `op` (the general loop's step): spin marks, progress,
    /// and the lone task's iterations. A compare-and-swap waits for its outcome
    /// ([`Core::cas_spin`]).
    #[inline(always)]
    pub(super) fn note_spin(&mut self, t: TaskId, op: &Op) {
        match op.observes() {
            Some((s, a)) => self.note_observing(t, op, s, a),
            None if matches!(
                op,
                Op::AtomicAccess {
                    kind: crate::op::AtomicKind::Cas,
                    ..
                }
            ) => {}
            None => {
                if op.changes_data() {
                    self.data_changed();
                }
                self.progressed()
            }
        }
    }

    /// [`Core::note_spin`] for an operation that changes nothing (a read, a yield), at site
    /// `s` on location `a`: a spin mark, and the lone task's iterations. Out of line: the
    /// operations that do change something (locks, signals, writes) pass by cheaply.
    #[inline(never)]
    fn note_observing(&mut self, t: TaskId, op: &Op, s: u32, a: u32) {
        if matches!(op, Op::Yield { .. }) {
            self.spin_mark(t);
        }
        if self.solo && (t as usize) < crate::task::MAX_TASKS {
            let read = matches!(op, Op::Read { .. } | Op::AtomicAccess { .. });
            let bound = self.starvation_bound();
            self.watch.observe(t, s, a, read, self.steps, bound);
        }
    }

    /// The outcome of context `t`'s compare-and-swap at site `s` on `a`: a success changed
    /// something; a failure only read, and is a spin mark (a failed wait).
    pub(super) fn cas_spin(&mut self, t: TaskId, s: u32, a: u32, ok: bool) {
        if ok {
            self.data_changed();
            self.progressed();
            return;
        }
        // Evidence is kept only while something is held back or a task runs alone (module
        // doc), as the last step's `refresh_lean` found.
        if !self.keeps_spins || t as usize >= crate::task::MAX_TASKS {
            return;
        }
        self.spin_mark(t);
        if self.solo {
            let bound = self.starvation_bound();
            self.watch.observe(t, s, a, true, self.steps, bound);
        }
    }

    /// Steps of identical iterations that make a lone spinner starve: [`STARVATION_BOUND`],
    /// or the livelock bound when it is smaller.
    fn starvation_bound(&self) -> u32 {
        self.livelock_bound.min(STARVATION_BOUND)
    }

    /// Task `t` reached a spin mark: it spins if it reached one before and nothing changed
    /// since.
    fn spin_mark(&mut self, t: TaskId) {
        if (t as usize) >= crate::task::MAX_TASKS {
            return;
        }
        if self.quiet.contains(t) {
            self.spinning.insert(t);
        } else {
            self.quiet.insert(t);
        }
    }

    /// Something changed: no task is known to spin any more.
    pub(super) fn progressed(&mut self) {
        self.forget_spins();
        self.watch.reset();
    }

    /// Clears the spin marks (something changed, or nothing is held back and no task runs
    /// alone).
    pub(super) fn forget_spins(&mut self) {
        self.quiet = TaskSet::EMPTY;
        self.spinning = TaskSet::EMPTY;
    }

    /// The spin release (module doc): when every enabled task that is not postponed
    /// (`candidates`) spins, a random enabled postponed task executes now, or, with none, a
    /// firing the strategy holds in reserve fires. `None`: nothing to release.
    pub(super) fn spin_release(&mut self, enabled: TaskSet, candidates: TaskSet) -> Option<Next> {
        if !candidates.minus(self.spinning).is_empty() {
            return None;
        }
        let held = enabled.and(self.postponed);
        if !held.is_empty() {
            let t = held.nth(self.rng.below(held.len()));
            self.postponed.remove(t);
            self.record(Event::SpinRelease { t });
            return Some(self.run(t, self.pending(t)));
        }
        let i = self.reserved_firing()?;
        self.record(Event::SpinRelease {
            t: super::irq::irq_context(i),
        });
        Some(Next::Fire(i))
    }

    /// Task `t`'s poll returned `Pending` (module doc, polling spins): a mark. Not a
    /// scheduling point.
    pub fn poll_pending(&mut self, t: TaskId) {
        if (t as usize) >= crate::task::MAX_TASKS {
            return;
        }
        if self.polled_quiet.is_empty() {
            self.polls_quiet_since = self.steps;
        }
        if self.polled_quiet.contains(t) {
            self.poll_spinning.insert(t);
        } else {
            self.polled_quiet.insert(t);
        }
        // Marks must see every operation: the next point goes through the general loop.
        self.lean_budget = 0;
    }

    /// Data changed (or a task ended): no task is known to spin polling.
    pub(super) fn data_changed(&mut self) {
        self.polled_quiet = TaskSet::EMPTY;
        self.poll_spinning = TaskSet::EMPTY;
    }

    /// Have polls changed no data for the livelock bound's steps, some task spinning polling
    /// (module doc)?
    fn polls_spun_long(&self) -> bool {
        !self.poll_spinning.is_empty()
            && self.steps.wrapping_sub(self.polls_quiet_since) >= self.livelock_bound
    }

    /// Are polls marked (the lean path must stay off)?
    pub(super) fn polls_marked(&self) -> bool {
        !self.polled_quiet.is_empty()
    }

    /// When polls have changed no data for the livelock bound, every candidate task spins
    /// polling and a timer is pending, time passes: the clock jumps to the earliest deadline
    /// and the timers due fire (module doc). Returns whether it did.
    pub(super) fn let_time_pass(&mut self, candidates: TaskSet) -> bool {
        if !self.polls_spun_long()
            || !candidates.minus(self.poll_spinning).is_empty()
            || !self.timer_pending()
        {
            return false;
        }
        self.progressed();
        self.advance_time(true)
    }

    /// The candidates a strategy picks among: once polls have changed no data for the
    /// livelock bound, those that do not spin polling, when there are any (module doc: a task
    /// whose polls change nothing goes after one that may).
    pub(super) fn before_spinners(&self, candidates: TaskSet) -> TaskSet {
        if !self.polls_spun_long() {
            return candidates;
        }
        let rest = candidates.minus(self.poll_spinning);
        if rest.is_empty() { candidates } else { rest }
    }

    /// Does the task running now run alone: no other task may be picked (`allowed`: the
    /// stopped tasks whose operation is enabled), none is postponed or forced, no handler
    /// runs and no timer is pending? (Whether an interrupt source could fire is the caller's
    /// question: alone with none that could, the task is *solo*.)
    pub(super) fn runs_alone(&self, allowed: TaskSet) -> bool {
        self.irq_running.is_empty()
            && (self.forced.0 | self.postponed.0) == 0
            && self.stopped.and(allowed).is_empty()
            && !self.timer_pending()
    }

    /// Is a timer pending (`sched::time`), which would wake a task or request a handler once
    /// time advances? Then a lone spinning task may be waiting for it: not a starvation.
    /// (Virtual time advances only when no task is enabled, so such a spin never ends either;
    /// the step limit ends it, as a suspected livelock.)
    pub(super) fn timer_pending(&self) -> bool {
        !self.timers.is_empty()
    }

    /// Ends the run: the lone task starves (its `Starved` event, then the verdict).
    pub(super) fn starve(&mut self) -> Next {
        let w = self.watch;
        self.sink.emit(&Event::Starved {
            t: w.task,
            s: w.read.0,
            a: w.read.1,
            steps: self.steps.wrapping_sub(w.since),
        });
        self.abort(Verdict::Starvation);
        Next::End(Verdict::Starvation)
    }
}

#[cfg(test)]
mod tests {
    use super::SpinWatch;

    #[test]
    fn identical_iterations_starve_at_the_bound_and_a_changing_one_never() {
        // read X at 1, yield at 2: the same iteration over and over.
        let mut w = SpinWatch::default();
        let mut step = 0;
        while !w.starved {
            w.observe(0, 1, 100, true, step, 20);
            w.observe(0, 2, 0, false, step + 1, 20);
            step += 2;
            assert!(step < 100, "never starved");
        }
        assert_eq!(w.read, (1, 100));
        assert!(step >= 20);
        // Only yields (a delay loop): it waits for nothing it reads.
        let mut w = SpinWatch::default();
        for i in 0..1000 {
            w.observe(0, 2, 0, false, i, 20);
        }
        assert!(!w.starved);
        // Reading another element each time (an array scan): never the same iteration.
        let mut w = SpinWatch::default();
        for i in 0..1000 {
            w.observe(0, 1, 100 + i, true, 2 * i, 20);
            w.observe(0, 2, 0, false, 2 * i + 1, 20);
        }
        assert!(!w.starved);
        // A reset (progress) starts over.
        let mut w = SpinWatch::default();
        for i in 0..15 {
            w.observe(0, 1, 100, true, i, 20);
        }
        w.reset();
        for i in 15..30 {
            w.observe(0, 1, 100, true, i, 20);
        }
        assert!(!w.starved);
    }
}
