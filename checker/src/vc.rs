//! Vector clocks and the happens-before edges of a trace.
//!
//! The happens-before relation ≺ is the one of racefuzzer-pldi08 §2.1: program order, plus
//! SND(g) ≺ RCV(g) for each message g, transitively closed. The messages are:
//!
//! - spawn: SND by the parent at `Spawn`, RCV by the child (its first event);
//! - join: SND by the child (its end), RCV by the joiner at `Join`;
//! - signal → wait: each `Wait { g }` receives the oldest unconsumed `Signal { g }` (a
//!   counting semaphore, FIFO pairing);
//! - release → acquire of the same lock, **only** with [`Edges::Precise`] (the slides'
//!   "Hybrid: no happens-before relation between REL(l, t) and a subsequent ACQ(l, t)");
//! - instrumented atomics, with both kinds of edges (real synchronisation, like DrFinder's
//!   volatile accesses, drfinder-fse15 §5 line 419). A run is a sequentially consistent
//!   interleaving, so a load reads the last atomic write to its location in trace order.
//!   Each location carries the clock its *release sequence* published: a store or RMW with
//!   release ordering (codes 1 release, 3 acq-rel, 4 seq-cst) publishes the writer's clock
//!   (a store replaces it, an RMW joins it: RMWs continue the sequence they read from), then
//!   the writer ticks; a relaxed RMW continues the sequence (keeps the clock); a relaxed store
//!   ends it (clears it). A load, RMW or failed CAS with acquire ordering (2, 3, 4) joins the
//!   published clock. Other codes count as relaxed;
//! - interrupts, with both kinds of edges: `IrqRequest { i }` → the next `IrqEnter { i }`
//!   (a pended request; several merge); and, because sources start disabled (as after a
//!   reset), when the first `IrqMask` event naming source `i` (or all sources) enables it,
//!   that enable → the next `IrqEnter { i }`. A handler is a context of its own (`t =
//!   IRQ_CONTEXT + i`), its firings in program order; there is no edge from the preempted
//!   context to the handler or back (it could have fired elsewhere);
//! - masks as locks, **only** with [`Edges::Precise`] (see [`crate::irq`]): a handler's entry
//!   acquires its implicit locks (it joins the clocks of the last critical-section exit, the
//!   last unmask of all sources or of its own, the last release of each priority mask `m ≤ p`
//!   and the last exit of a handler of its priority); a handler's exit releases them (a later
//!   mask of its source, of all, or a priority mask `m ≤ p`, and a critical-section entry,
//!   join the clock of its last exit; so does the next handler of its priority). Masks are
//!   one-sided: handlers of different priorities get no edge from each other, nor two masking
//!   contexts.
//!
//! Clocks are Vec-backed, so every task id (`u8`, up to 256 tasks) is supported; a clock
//! only grows to the highest task id it has heard of.

use std::collections::VecDeque;

use jostle_kernel::event::Event;

use crate::hash::FxHashMap;
use crate::irq::{ALL_IRQS, IRQ_ALL_LOCK, irq_lock, prio_lock};

/// Lock identity used for the `critical-section` critical section (one global lock).
pub const CS_LOCK: u32 = u32::MAX;
/// Lock class used for the `critical-section` critical section.
pub const CS_CLASS: u32 = u32::MAX;

/// A vector clock: one logical time per task; absent entries are 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VectorClock(Vec<u32>);

impl VectorClock {
    /// The clock that is 0 everywhere.
    pub fn new() -> Self {
        Self(Vec::new())
    }

    /// Task `t`'s entry.
    #[inline]
    pub fn get(&self, t: u8) -> u32 {
        self.0.get(t as usize).copied().unwrap_or(0)
    }

    /// Sets task `t`'s entry.
    #[inline]
    pub fn set(&mut self, t: u8, v: u32) {
        let i = t as usize;
        if i >= self.0.len() {
            self.0.resize(i + 1, 0);
        }
        self.0[i] = v;
    }

    /// Increments task `t`'s entry (saturating: a clock that reached `u32::MAX` stays there).
    #[inline]
    pub fn tick(&mut self, t: u8) {
        let v = self.get(t).saturating_add(1);
        self.set(t, v);
    }

    /// Pointwise maximum with `other` (the receive of a message carrying `other`).
    #[inline]
    pub fn join(&mut self, other: &VectorClock) {
        if other.0.len() > self.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (a, &b) in self.0.iter_mut().zip(other.0.iter()) {
            *a = (*a).max(b);
        }
    }

    /// Copies `other` into `self`, reusing the allocation.
    #[inline]
    pub fn assign(&mut self, other: &VectorClock) {
        self.0.clear();
        self.0.extend_from_slice(&other.0);
    }

    /// Pointwise `self ⊑ other`.
    pub fn leq(&self, other: &VectorClock) -> bool {
        self.0
            .iter()
            .enumerate()
            .all(|(i, &v)| v <= other.get(i as u8))
    }

    /// The entries, indexed by task id.
    pub fn as_slice(&self) -> &[u32] {
        &self.0
    }

    /// Heap bytes held by this clock.
    pub fn heap_bytes(&self) -> usize {
        self.0.capacity() * 4
    }
}

/// An epoch `c@t` (FastTrack): task `t`'s own entry `c` at some event of `t`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Epoch {
    /// Task `t`'s clock value.
    pub clock: u32,
    /// The task.
    pub task: u8,
}

impl Epoch {
    /// The empty epoch (clock 0): happens before everything.
    pub const NONE: Epoch = Epoch { clock: 0, task: 0 };

    /// Does the event of this epoch happen before an event of clock `vc`? (`c ≤ vc[t]`)
    #[inline]
    pub fn happens_before(self, vc: &VectorClock) -> bool {
        self.clock <= vc.get(self.task)
    }
}

/// Which synchronisation creates happens-before edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edges {
    /// Spawn, join, signal→wait, atomics and interrupt requests/initial enables only (the
    /// hybrid detector's relaxed relation: no lock edges).
    Relaxed,
    /// Those plus release→acquire of the same lock and the mask edges of interrupts (the
    /// precise happens-before detector).
    Precise,
}

/// Does atomic ordering code `o` release (release, acq-rel, seq-cst)?
pub fn releases(o: u8) -> bool {
    matches!(o, 1 | 3 | 4)
}

/// Does atomic ordering code `o` acquire (acquire, acq-rel, seq-cst)?
pub fn acquires(o: u8) -> bool {
    matches!(o, 2..=4)
}

/// Interrupt state of the clocks (module doc).
#[derive(Clone, Debug, Default)]
struct IrqClocks {
    /// Joined clocks of the pending requests of each source.
    requests: FxHashMap<u8, VectorClock>,
    /// Sources named by a mask event so far (bit per source) and whether an all-sources
    /// event was seen.
    named: [u64; 4],
    named_all: bool,
    /// Clock of a source's initial enable, until its next firing consumes it.
    initial: FxHashMap<u8, VectorClock>,
    /// Clock of the first all-sources mask event if it enabled, for the sources not named
    /// before it (`all_before`) and not yet fired since (`all_consumed`).
    initial_all: Option<VectorClock>,
    all_before: [u64; 4],
    all_consumed: [u64; 4],
    /// Precise edges: last release clock of each mask lock (`IRQ_ALL`, `IRQ_LOCK(i)`,
    /// `PRIO_LOCK(m)`; the critical section's is in [`Clocks::locks`]).
    masks: FxHashMap<u32, VectorClock>,
    /// Precise edges: last exit of each source's handler, with its priority.
    exits: FxHashMap<u8, (u8, VectorClock)>,
    /// Precise edges: last exit of a handler of each priority.
    levels: FxHashMap<u8, VectorClock>,
    /// Precise edges: each context's priority mask (0: none).
    basepri: Vec<u8>,
    /// Each handler context's (source, priority) while it runs.
    running: Vec<Option<(u8, u8)>>,
}

fn has(bits: &[u64; 4], i: u8) -> bool {
    bits[i as usize / 64] & (1 << (i % 64)) != 0
}

fn set_bit(bits: &mut [u64; 4], i: u8) {
    bits[i as usize / 64] |= 1 << (i % 64);
}

/// The vector clocks of every task, maintained over a trace.
#[derive(Clone, Debug)]
pub struct Clocks {
    edges: Edges,
    tasks: Vec<VectorClock>,
    /// Clocks of sent, not yet received signals, oldest first.
    signals: FxHashMap<u32, VecDeque<VectorClock>>,
    /// Clock of each lock's last release (precise edges only).
    locks: FxHashMap<u32, VectorClock>,
    /// Locks each task holds (precise edges only), so a task that ends holding a lock
    /// releases it.
    held: Vec<Vec<u32>>,
    /// Per atomic location, the clock its release sequence published (absent: none).
    atomics: FxHashMap<u32, VectorClock>,
    irq: IrqClocks,
}

impl Clocks {
    /// Clocks for a trace, with the given kind of edges. Every task starts at `1@t`.
    pub fn new(edges: Edges) -> Self {
        Self {
            edges,
            tasks: vec![VectorClock::new(); 256],
            signals: FxHashMap::default(),
            locks: FxHashMap::default(),
            held: vec![Vec::new(); 256],
            atomics: FxHashMap::default(),
            irq: IrqClocks {
                basepri: vec![0; 256],
                running: vec![None; 256],
                ..IrqClocks::default()
            },
        }
    }

    /// Task `t`'s current clock.
    #[inline]
    pub fn clock(&mut self, t: u8) -> &VectorClock {
        self.init(t);
        &self.tasks[t as usize]
    }

    /// Task `t`'s current epoch.
    #[inline]
    pub fn epoch(&mut self, t: u8) -> Epoch {
        let clock = self.clock(t).get(t);
        Epoch { clock, task: t }
    }

    #[inline]
    fn init(&mut self, t: u8) {
        let vc = &mut self.tasks[t as usize];
        if vc.get(t) == 0 {
            vc.set(t, 1);
        }
    }

    /// Applies the happens-before effect of `ev` (non-synchronisation events have none).
    pub fn on_event(&mut self, ev: &Event) {
        match *ev {
            Event::Spawn { t, child, .. } => self.send_to(t, child),
            Event::Join { t, child, .. } => self.send_to(child, t),
            Event::Signal { t, g, .. } => {
                self.init(t);
                let vc = self.tasks[t as usize].clone();
                self.signals.entry(g).or_default().push_back(vc);
                self.tasks[t as usize].tick(t);
            }
            Event::Wait { t, g, .. } => {
                self.init(t);
                if let Some(vc) = self.signals.get_mut(&g).and_then(VecDeque::pop_front) {
                    self.tasks[t as usize].join(&vc);
                }
            }
            Event::Acquire { t, l, .. } => self.acquire(t, l),
            Event::Release { t, l, .. } => self.release(t, l),
            Event::CsEnter { t } => {
                self.acquire(t, CS_LOCK);
                if self.edges == Edges::Precise && !self.irq.exits.is_empty() {
                    self.cs_after_handlers(t);
                }
            }
            Event::CsExit { t } => self.release(t, CS_LOCK),
            Event::TaskExit { t } if self.edges == Edges::Precise => {
                while let Some(&l) = self.held[t as usize].last() {
                    self.release(t, l);
                }
            }
            _ => self.on_other(ev),
        }
    }

    /// Atomics and interrupts (kept out of line: [`Clocks::on_event`] stays small for the
    /// detectors' loops); other events have no effect.
    #[inline(never)]
    fn on_other(&mut self, ev: &Event) {
        match *ev {
            Event::AtomicLoad { .. }
            | Event::AtomicStore { .. }
            | Event::AtomicRmw { .. }
            | Event::CasFailed { .. } => {
                self.atomic_acquire(ev);
                self.atomic_release(ev);
            }
            Event::IrqRequest { .. }
            | Event::IrqEnter { .. }
            | Event::IrqExit { .. }
            | Event::IrqMask { .. }
            | Event::PrioMask { .. } => self.on_irq(ev),
            _ => {}
        }
    }

    /// The acquire half of an atomic access: an acquiring load, RMW or failed CAS joins the
    /// location's published clock. A detector that records the atomic access itself calls
    /// this, records it, then [`Clocks::atomic_release`] ([`Clocks::on_event`] does both).
    pub fn atomic_acquire(&mut self, ev: &Event) {
        let (t, a) = match *ev {
            Event::AtomicLoad { t, a, o, .. }
            | Event::AtomicRmw { t, a, o, .. }
            | Event::CasFailed { t, a, o, .. }
                if acquires(o) =>
            {
                (t, a)
            }
            _ => return,
        };
        self.init(t);
        if let Some(vc) = self.atomics.get(&a) {
            self.tasks[t as usize].join(vc);
        }
    }

    /// The release half of an atomic access (module doc): a releasing store publishes the
    /// task's clock, a releasing RMW joins it into the published one (then the task ticks);
    /// a relaxed store ends the release sequence; a relaxed RMW keeps it.
    pub fn atomic_release(&mut self, ev: &Event) {
        match *ev {
            Event::AtomicStore { t, a, o, .. } if releases(o) => {
                self.init(t);
                let vc = &self.tasks[t as usize];
                self.atomics.entry(a).or_default().assign(vc);
                self.tasks[t as usize].tick(t);
            }
            Event::AtomicStore { a, .. } => {
                self.atomics.remove(&a);
            }
            Event::AtomicRmw { t, a, o, .. } if releases(o) => {
                self.init(t);
                let vc = &self.tasks[t as usize];
                self.atomics.entry(a).or_default().join(vc);
                self.tasks[t as usize].tick(t);
            }
            _ => {}
        }
    }

    /// `C_t ⊔= other` for a clock not held in `self`.
    fn join_into(&mut self, t: u8, other: &VectorClock) {
        self.init(t);
        self.tasks[t as usize].join(other);
    }

    /// The happens-before effect of an interrupt event (module doc).
    #[cold]
    fn on_irq(&mut self, ev: &Event) {
        let precise = self.edges == Edges::Precise;
        match *ev {
            Event::IrqRequest { t, i, .. } => {
                self.init(t);
                let vc = &self.tasks[t as usize];
                self.irq.requests.entry(i).or_default().join(vc);
                self.tasks[t as usize].tick(t);
            }
            Event::IrqEnter { t, i, p, .. } => {
                self.init(t);
                self.irq.running[t as usize] = Some((i, p));
                if let Some(vc) = self.irq.requests.remove(&i) {
                    self.join_into(t, &vc);
                }
                if let Some(vc) = self.irq.initial.remove(&i) {
                    self.join_into(t, &vc);
                }
                if self.irq.initial_all.is_some()
                    && !has(&self.irq.all_before, i)
                    && !has(&self.irq.all_consumed, i)
                {
                    set_bit(&mut self.irq.all_consumed, i);
                    if let Some(vc) = self.irq.initial_all.take() {
                        self.join_into(t, &vc);
                        self.irq.initial_all = Some(vc);
                    }
                }
                if precise {
                    // Acquire of the implicit locks.
                    let mut joined = VectorClock::new();
                    let releases = [CS_LOCK, IRQ_ALL_LOCK, irq_lock(i)];
                    for l in releases {
                        let from = if l == CS_LOCK {
                            self.locks.get(&l)
                        } else {
                            self.irq.masks.get(&l)
                        };
                        if let Some(vc) = from {
                            joined.join(vc);
                        }
                    }
                    for m in 1..=p {
                        if let Some(vc) = self.irq.masks.get(&prio_lock(m)) {
                            joined.join(vc);
                        }
                    }
                    if let Some(vc) = self.irq.levels.get(&p) {
                        joined.join(vc);
                    }
                    self.join_into(t, &joined);
                }
            }
            Event::IrqExit { t } => {
                let Some((i, p)) = self.irq.running[t as usize].take() else {
                    return;
                };
                if precise {
                    self.init(t);
                    let vc = self.tasks[t as usize].clone();
                    self.irq.levels.entry(p).or_default().assign(&vc);
                    self.irq.exits.insert(i, (p, vc));
                    self.tasks[t as usize].tick(t);
                }
            }
            Event::IrqMask { t, i, on, .. } => {
                self.init(t);
                let enable = on == 0;
                let mut sent = false;
                if i == ALL_IRQS {
                    if !self.irq.named_all {
                        self.irq.named_all = true;
                        self.irq.all_before = self.irq.named;
                        if enable {
                            self.irq.initial_all = Some(self.tasks[t as usize].clone());
                            sent = true;
                        }
                    }
                } else if !has(&self.irq.named, i) {
                    set_bit(&mut self.irq.named, i);
                    if !self.irq.named_all && enable {
                        let vc = self.tasks[t as usize].clone();
                        self.irq.initial.insert(i, vc);
                        sent = true;
                    }
                }
                if precise {
                    let lock = if i == ALL_IRQS {
                        IRQ_ALL_LOCK
                    } else {
                        irq_lock(i)
                    };
                    if enable {
                        let vc = &self.tasks[t as usize];
                        self.irq.masks.entry(lock).or_default().assign(vc);
                        sent = true;
                    } else {
                        self.join_exits(t, |j, _| i == ALL_IRQS || j == i);
                    }
                }
                if sent {
                    self.tasks[t as usize].tick(t);
                }
            }
            Event::PrioMask { t, level, .. } if precise => {
                self.init(t);
                let old = std::mem::replace(&mut self.irq.basepri[t as usize], level);
                if old == level {
                    return;
                }
                if old != 0 {
                    let vc = &self.tasks[t as usize];
                    self.irq.masks.entry(prio_lock(old)).or_default().assign(vc);
                    self.tasks[t as usize].tick(t);
                }
                if level != 0 {
                    self.join_exits(t, |_, p| p >= level);
                }
            }
            _ => {}
        }
    }

    /// A critical-section entry acquires every source's mask: it joins every handler's
    /// last exit.
    #[cold]
    fn cs_after_handlers(&mut self, t: u8) {
        self.join_exits(t, |_, _| true);
    }

    /// Joins into `t` the last exit clock of each source's handler that `masked(source,
    /// priority)` accepts (a mask acquired: the handlers it keeps out ran before).
    fn join_exits(&mut self, t: u8, masked: impl Fn(u8, u8) -> bool) {
        let mut joined = VectorClock::new();
        for (&j, (p, vc)) in &self.irq.exits {
            if masked(j, *p) {
                joined.join(vc);
            }
        }
        self.join_into(t, &joined);
    }

    /// A message from `from` to `to`: `to ⊔= from`, then `from` ticks.
    fn send_to(&mut self, from: u8, to: u8) {
        self.init(from);
        self.init(to);
        if from == to {
            return;
        }
        let (a, b) = (from as usize, to as usize);
        let (src, dst) = if a < b {
            let (lo, hi) = self.tasks.split_at_mut(b);
            (&lo[a], &mut hi[0])
        } else {
            let (lo, hi) = self.tasks.split_at_mut(a);
            (&hi[0], &mut lo[b])
        };
        dst.join(src);
        self.tasks[a].tick(from);
    }

    /// Acquire of lock `l` by `t`: `C_t ⊔= L_l` (FastTrack [ACQUIRE]).
    #[inline]
    fn acquire(&mut self, t: u8, l: u32) {
        if self.edges != Edges::Precise {
            return;
        }
        self.init(t);
        self.held[t as usize].push(l);
        if let Some(lv) = self.locks.get(&l) {
            self.tasks[t as usize].join(lv);
        }
    }

    /// Release of lock `l` by `t`: `L_l := C_t; C_t := inc_t(C_t)` (FastTrack [RELEASE]).
    #[inline]
    fn release(&mut self, t: u8, l: u32) {
        if self.edges != Edges::Precise {
            return;
        }
        let held = &mut self.held[t as usize];
        let Some(pos) = held.iter().rposition(|&h| h == l) else {
            return; // not held: no edge
        };
        held.remove(pos);
        self.init(t);
        let vc = &self.tasks[t as usize];
        self.locks.entry(l).or_default().assign(vc);
        self.tasks[t as usize].tick(t);
    }

    /// Approximate heap bytes of this state.
    pub fn heap_bytes(&self) -> usize {
        let tasks: usize = self
            .tasks
            .iter()
            .map(VectorClock::heap_bytes)
            .sum::<usize>()
            + self.tasks.capacity() * size_of::<VectorClock>();
        let signals: usize = self
            .signals
            .values()
            .map(|q| {
                q.capacity() * size_of::<VectorClock>()
                    + q.iter().map(VectorClock::heap_bytes).sum::<usize>()
            })
            .sum::<usize>()
            + self.signals.capacity() * (4 + size_of::<VecDeque<VectorClock>>());
        let locks: usize = self
            .locks
            .values()
            .map(VectorClock::heap_bytes)
            .sum::<usize>()
            + self.locks.capacity() * (4 + size_of::<VectorClock>());
        let held: usize = self.held.iter().map(|h| h.capacity() * 4).sum::<usize>()
            + self.held.capacity() * size_of::<Vec<u32>>();
        let atomics: usize = self
            .atomics
            .values()
            .map(VectorClock::heap_bytes)
            .sum::<usize>()
            + self.atomics.capacity() * (4 + size_of::<VectorClock>());
        let irq = self.irq.basepri.capacity()
            + self.irq.running.capacity() * 3
            + (self.irq.requests.len()
                + self.irq.initial.len()
                + self.irq.masks.len()
                + self.irq.exits.len()
                + self.irq.levels.len())
                * (8 + size_of::<VectorClock>() + 4 * 32);
        tasks + signals + locks + held + atomics + irq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_and_leq() {
        let mut a = VectorClock::new();
        a.set(0, 3);
        let mut b = VectorClock::new();
        b.set(2, 5);
        assert!(!a.leq(&b));
        b.join(&a);
        assert!(a.leq(&b));
        assert_eq!(b.as_slice(), &[3, 0, 5]);
    }

    #[test]
    fn spawn_orders_parent_before_child_but_not_after() {
        let mut c = Clocks::new(Edges::Relaxed);
        let before = c.epoch(0);
        c.on_event(&Event::Spawn {
            t: 0,
            child: 1,
            s: 1,
        });
        let after = c.epoch(0);
        assert!(before.happens_before(c.clock(1)));
        assert!(!after.happens_before(c.clock(1)));
    }

    #[test]
    fn lock_edges_only_when_precise() {
        for (edges, ordered) in [(Edges::Relaxed, false), (Edges::Precise, true)] {
            let mut c = Clocks::new(edges);
            c.on_event(&Event::Acquire {
                t: 1,
                s: 1,
                l: 9,
                c: 0,
            });
            let e = c.epoch(1);
            c.on_event(&Event::Release { t: 1, s: 2, l: 9 });
            c.on_event(&Event::Acquire {
                t: 2,
                s: 3,
                l: 9,
                c: 0,
            });
            assert_eq!(e.happens_before(c.clock(2)), ordered, "{edges:?}");
        }
    }

    #[test]
    fn waits_pair_with_signals_in_fifo_order() {
        let mut c = Clocks::new(Edges::Relaxed);
        let first = c.epoch(1);
        c.on_event(&Event::Signal { t: 1, s: 1, g: 4 });
        let second = c.epoch(1);
        c.on_event(&Event::Signal { t: 1, s: 1, g: 4 });
        c.on_event(&Event::Wait { t: 2, s: 2, g: 4 });
        assert!(first.happens_before(c.clock(2)));
        assert!(!second.happens_before(c.clock(2)));
        c.on_event(&Event::Wait { t: 2, s: 2, g: 4 });
        assert!(second.happens_before(c.clock(2)));
    }

    #[test]
    fn join_orders_child_before_joiner_and_high_task_ids_work() {
        let mut c = Clocks::new(Edges::Relaxed);
        let e = c.epoch(200);
        assert!(!e.happens_before(c.clock(3)));
        c.on_event(&Event::Join {
            t: 3,
            child: 200,
            s: 0,
        });
        assert!(e.happens_before(c.clock(3)));
    }

    fn ordered(c: &mut Clocks, before: Epoch, t: u8) -> bool {
        before.happens_before(c.clock(t))
    }

    #[test]
    fn atomic_release_sequences_in_both_kinds_of_edges() {
        for edges in [Edges::Relaxed, Edges::Precise] {
            let ev = |k: u8, t: u8, o: u8| match k {
                0 => Event::AtomicLoad { t, s: 0, a: 7, o },
                1 => Event::AtomicStore { t, s: 0, a: 7, o },
                2 => Event::AtomicRmw { t, s: 0, a: 7, o },
                _ => Event::CasFailed { t, s: 0, a: 7, o },
            };
            // (store ordering, middle event, acquiring event, ordered?)
            let cases = [
                (1, None, ev(0, 2, 2), true),
                (4, None, ev(0, 2, 4), true),
                (3, None, ev(3, 2, 2), true),
                (1, None, ev(2, 2, 3), true),
                (0, None, ev(0, 2, 2), false),
                (1, None, ev(0, 2, 0), false),
                (1, Some(ev(2, 3, 0)), ev(0, 2, 2), true),
                (1, Some(ev(1, 3, 0)), ev(0, 2, 2), false),
                (1, Some(ev(0, 3, 0)), ev(0, 2, 2), true),
            ];
            for (o, middle, acq, want) in cases {
                let mut c = Clocks::new(edges);
                let e = c.epoch(1);
                c.on_event(&ev(1, 1, o));
                let after = c.epoch(1);
                if let Some(m) = middle {
                    c.on_event(&m);
                }
                c.on_event(&acq);
                assert_eq!(
                    ordered(&mut c, e, 2),
                    want,
                    "{edges:?} {o} {middle:?} {acq:?}"
                );
                assert!(!ordered(&mut c, after, 2), "the release ticked");
            }
        }
    }

    #[test]
    fn interrupt_requests_and_initial_enables_order_the_next_firing() {
        let enter = |i: u8| Event::IrqEnter {
            t: 0x80 + i,
            i,
            p: 1,
            by: 1,
            f: 0,
        };
        let mask = |i: u8, on: u8| Event::IrqMask { t: 1, s: 0, i, on };
        for edges in [Edges::Relaxed, Edges::Precise] {
            let mut c = Clocks::new(edges);
            let e = c.epoch(1);
            c.on_event(&Event::IrqRequest { t: 1, s: 0, i: 0 });
            let after = c.epoch(1);
            c.on_event(&enter(1));
            assert!(!ordered(&mut c, e, 0x81), "another source");
            c.on_event(&enter(0));
            assert!(ordered(&mut c, e, 0x80));
            assert!(!ordered(&mut c, after, 0x80));
            // Initial enable of all sources: each source's next firing.
            let mut c = Clocks::new(edges);
            let e = c.epoch(1);
            c.on_event(&mask(0xFF, 0));
            for i in [2, 3] {
                c.on_event(&enter(i));
                assert!(ordered(&mut c, e, 0x80 + i), "{edges:?} {i}");
            }
        }
        // A source first disabled: no initial enable edge without lock edges.
        let mut c = Clocks::new(Edges::Relaxed);
        let e = c.epoch(1);
        c.on_event(&mask(0, 1));
        c.on_event(&mask(0, 0));
        c.on_event(&enter(0));
        assert!(!ordered(&mut c, e, 0x80));
    }

    #[test]
    fn precise_mask_edges_are_one_sided() {
        let enter = |i: u8, p: u8| Event::IrqEnter {
            t: 0x80 + i,
            i,
            p,
            by: 1,
            f: 0,
        };
        // Unmasking source 0 releases to its handler, not to source 1's.
        let mut c = Clocks::new(Edges::Precise);
        c.on_event(&Event::IrqMask {
            t: 1,
            s: 0,
            i: 0,
            on: 1,
        });
        let e = c.epoch(1);
        c.on_event(&Event::IrqMask {
            t: 1,
            s: 0,
            i: 0,
            on: 0,
        });
        c.on_event(&enter(1, 1));
        assert!(!ordered(&mut c, e, 0x81));
        c.on_event(&enter(0, 1));
        assert!(ordered(&mut c, e, 0x80));
        // A handler's exit releases to the next mask of its source and to its level, not to
        // a handler of another priority.
        let mut c = Clocks::new(Edges::Precise);
        c.on_event(&enter(0, 2));
        let h = c.epoch(0x80);
        c.on_event(&Event::IrqExit { t: 0x80 });
        c.on_event(&enter(1, 1));
        assert!(!ordered(&mut c, h, 0x81));
        c.on_event(&enter(2, 2));
        assert!(ordered(&mut c, h, 0x82));
        c.on_event(&Event::PrioMask {
            t: 1,
            s: 0,
            level: 3,
            r: 0,
        });
        assert!(!ordered(&mut c, h, 1), "level 3 does not mask priority 2");
        c.on_event(&Event::PrioMask {
            t: 1,
            s: 0,
            level: 2,
            r: 0,
        });
        assert!(ordered(&mut c, h, 1));
        // Without lock edges, none of this.
        let mut c = Clocks::new(Edges::Relaxed);
        c.on_event(&enter(0, 2));
        let h = c.epoch(0x80);
        c.on_event(&Event::IrqExit { t: 0x80 });
        c.on_event(&Event::CsEnter { t: 1 });
        c.on_event(&enter(2, 2));
        assert!(!ordered(&mut c, h, 1));
        assert!(!ordered(&mut c, h, 0x82));
    }
}
