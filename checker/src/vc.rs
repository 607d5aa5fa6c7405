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
//!   "Hybrid: no happens-before relation between REL(l, t) and a subsequent ACQ(l, t)").
//!
//! Clocks are Vec-backed, so every task id (`u8`, up to 256 tasks) is supported; a clock
//! only grows to the highest task id it has heard of.

use std::collections::VecDeque;

use jostle_kernel::event::Event;

use crate::hash::FxHashMap;

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
    /// Spawn, join and signal→wait only (the hybrid detector's relaxed relation).
    Relaxed,
    /// Those plus release→acquire of the same lock (the precise happens-before detector).
    Precise,
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
            Event::CsEnter { t } => self.acquire(t, CS_LOCK),
            Event::CsExit { t } => self.release(t, CS_LOCK),
            Event::TaskExit { t } if self.edges == Edges::Precise => {
                while let Some(&l) = self.held[t as usize].last() {
                    self.release(t, l);
                }
            }
            _ => {}
        }
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
        tasks + signals + locks + held
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
}
