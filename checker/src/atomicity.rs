//! Atomicity-violation candidates: the AtomFuzzer pattern (atomfuzzer-fse08 §2.2,
//! Algorithm 2 lines 6–19).
//!
//! Inside one atomic block, a task acquires a lock `L`, releases it, and later acquires `L`
//! again. Another task acquiring and releasing `L` in between would violate the block's
//! (causal) atomicity; the active phase pauses the task at the re-acquire to try. The
//! analysis keeps, per open block, the locks acquired in it so far (*alreadyAcquired*);
//! an acquire of a lock already in that set is a candidate. Re-entrant acquires of a lock
//! the task still holds are ignored (footnote 2: only 0→1 transitions of the usage count).
//! Nested blocks are each checked (the enclosing blocks see the inner block's acquires too).
//!
//! With the Atomizer heuristic (atomfuzzer-fse08 §1, §5.4) and a trace that has no
//! `AtomicEnter` at all, every outermost lock critical section (a lock acquired while the
//! task holds none, up to its release) is treated as an atomic block whose site is that
//! acquire's site. The heuristic gives false warnings (§5.4); so does the pattern itself
//! when a gate lock serialises the blocks (Figure 3): both are for the active phase to refute.
//!
//! Atomizer's reduction (§1: a block is atomic when all its acquires come before all its
//! releases) also breaks when a block acquires a lock after releasing *another*: a block that
//! takes two locks in turn. Inside a block, such an acquire is a candidate whose `lock` is the
//! lock released (another task taking it in between sees the block half done). With the
//! heuristic, two consecutive outermost critical sections of a task that touch a common
//! location (one of the accesses a write: the second stage works on the first's result) form
//! such a block, when another task acquires the first section's lock somewhere in the trace.

use serde::{Deserialize, Serialize};

use jostle_kernel::event::Event;

use crate::hash::{FxHashMap, FxHashSet};
use crate::locks::{LockChange, LockState};

/// One atomicity candidate: `task`, inside the block at `block`, re-acquired `lock` at
/// `reacquire` after acquiring (and releasing) it at `first_acquire` in the same block.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AtomicityCandidate {
    /// Site of the block (`AtomicEnter`'s site, or the outermost acquire's with the heuristic).
    pub block: u32,
    /// The block came from the Atomizer heuristic, not an annotation.
    pub heuristic: bool,
    /// The task.
    pub task: u8,
    /// Lock identity.
    pub lock: u32,
    /// Lock class.
    pub class: u32,
    /// Site of the first acquire of `lock` in the block.
    pub first_acquire: u32,
    /// Site of the re-acquire (the breakpoint).
    pub reacquire: u32,
    /// Event indices: block entry, first acquire, re-acquire.
    pub events: [u64; 3],
    /// Sites where other tasks acquire `lock` in the trace, sorted: the acquires that would
    /// violate the block if they came while it is paused.
    pub interleavers: Vec<u32>,
}

#[derive(Clone, Debug)]
struct Block {
    site: u32,
    event: u64,
    /// For heuristic blocks: the lock index whose release ends the block.
    lock: Option<u32>,
    /// (lock index, site, event) of the first acquire of each lock in the block.
    acquired: Vec<(u32, u32, u64)>,
}

/// An outermost critical section of a task, for the two-sections heuristic.
#[derive(Clone, Debug, Default)]
struct Section {
    /// Lock index of its outermost acquire.
    lock: u32,
    /// Site and event of that acquire.
    site: u32,
    event: u64,
    /// Locations accessed in it, and whether some access wrote.
    touched: FxHashMap<u32, bool>,
}

/// Per task: its last finished outermost critical section, and the one it is in.
#[derive(Clone, Debug, Default)]
struct Sections {
    last: Option<Section>,
    open: Option<Section>,
}

/// The atomicity candidates of `trace`, one per distinct (block, lock, first acquire,
/// re-acquire) (the first occurrence), in trace order.
pub fn detect(trace: &[Event], atomizer_heuristic: bool) -> Vec<AtomicityCandidate> {
    let heuristic =
        atomizer_heuristic && !trace.iter().any(|e| matches!(e, Event::AtomicEnter { .. }));
    let mut locks = LockState::new();
    let mut blocks: Vec<Vec<Block>> = vec![Vec::new(); 256];
    let mut seen = FxHashSet::default();
    let mut out = Vec::new();
    let mut sections: Vec<Sections> = vec![Sections::default(); 256];
    // Two sections in turn, kept when another task acquires the first one's lock.
    let mut in_turn: Vec<AtomicityCandidate> = Vec::new();
    let mut in_turn_seen = FxHashSet::default();
    // (lock identity, task, site) of every acquire.
    let mut acquirers: FxHashSet<(u32, u8, u32)> = FxHashSet::default();

    for (i, ev) in trace.iter().enumerate() {
        let idx = i as u64;
        match *ev {
            // Algorithm 2 lines 6–8.
            Event::AtomicEnter { t, s } => blocks[t as usize].push(Block {
                site: s,
                event: idx,
                lock: None,
                acquired: Vec::new(),
            }),
            // Lines 9–12 (the inner block only; enclosing blocks stay open).
            Event::AtomicExit { t, .. } => {
                if let Some(p) = blocks[t as usize].iter().rposition(|b| b.lock.is_none()) {
                    blocks[t as usize].truncate(p);
                }
            }
            Event::TaskExit { t } => {
                blocks[t as usize].clear();
                locks.on_event(ev);
            }
            Event::Acquire { t, .. } | Event::CsEnter { t } => {
                let was_free = locks.task(t).held.is_empty();
                let LockChange::Acquired(li) = locks.on_event(ev) else {
                    continue; // re-entry
                };
                let site = ev.site().unwrap_or(0);
                acquirers.insert((locks.lock(li).0, t, site));
                let held = &locks.task(t).held;
                let stack = &mut blocks[t as usize];
                // Lines 13–19; an acquire after the block released another lock breaks it
                // too (the released lock is the one another task may take in between).
                for b in stack.iter_mut() {
                    let again = b.acquired.iter().copied().find(|a| a.0 == li);
                    let is_held = |a: &(u32, u32, u64)| held.iter().any(|h| h.0 == a.0);
                    let released = || b.acquired.iter().copied().find(|a| !is_held(a));
                    let broken = again.or_else(released);
                    if again.is_none() {
                        b.acquired.push((li, site, idx));
                    }
                    if let Some((lj, first_site, first_event)) = broken {
                        let (lock, class) = locks.lock(lj);
                        let key = (b.site, lock, first_site, site);
                        if seen.insert(key) {
                            out.push(AtomicityCandidate {
                                block: b.site,
                                heuristic: b.lock.is_some(),
                                task: t,
                                lock,
                                class,
                                first_acquire: first_site,
                                reacquire: site,
                                events: [b.event, first_event, idx],
                                interleavers: Vec::new(),
                            });
                        }
                    }
                }
                if heuristic && was_free {
                    sections[t as usize].open = Some(Section {
                        lock: li,
                        site,
                        event: idx,
                        touched: FxHashMap::default(),
                    });
                    stack.push(Block {
                        site,
                        event: idx,
                        lock: Some(li),
                        acquired: Vec::new(),
                    });
                }
            }
            Event::Release { t, .. } | Event::CsExit { t } => {
                if let LockChange::Released(li) = locks.on_event(ev) {
                    let stack = &mut blocks[t as usize];
                    if let Some(p) = stack.iter().rposition(|b| b.lock == Some(li)) {
                        stack.truncate(p);
                    }
                    if locks.task(t).held.is_empty() {
                        let s = &mut sections[t as usize];
                        // A loop repeats its pairs: each task's first one stands.
                        if let (Some(first), Some(second)) = (&s.last, &s.open)
                            && shares_a_write(first, second)
                            && in_turn_seen.insert((first.site, second.site, first.lock, t))
                        {
                            let (lock, class) = locks.lock(first.lock);
                            in_turn.push(AtomicityCandidate {
                                block: first.site,
                                heuristic: true,
                                task: t,
                                lock,
                                class,
                                first_acquire: first.site,
                                reacquire: second.site,
                                events: [first.event, first.event, second.event],
                                interleavers: Vec::new(),
                            });
                        }
                        if let Some(done) = s.open.take() {
                            s.last = Some(done);
                        }
                    }
                }
            }
            _ => {
                if let Some((a, _, t, write, _)) = crate::mixed::access(ev)
                    && let Some(open) = &mut sections[t as usize].open
                {
                    *open.touched.entry(a).or_default() |= write;
                }
            }
        }
    }
    for c in in_turn {
        let taken_by_another = |&(lock, u, _): &(u32, u8, u32)| u != c.task && lock == c.lock;
        let key = (c.block, c.lock, c.first_acquire, c.reacquire);
        if acquirers.iter().any(taken_by_another) && seen.insert(key) {
            out.push(c);
        }
    }
    for c in &mut out {
        let mut sites: Vec<u32> = acquirers
            .iter()
            .filter(|&&(lock, u, _)| u != c.task && lock == c.lock)
            .map(|&(_, _, site)| site)
            .collect();
        sites.sort_unstable();
        sites.dedup();
        c.interleavers = sites;
    }
    out
}

/// Do two critical sections touch a common location, one of the accesses a write?
fn shares_a_write(first: &Section, second: &Section) -> bool {
    first
        .touched
        .iter()
        .any(|(a, &w1)| second.touched.get(a).is_some_and(|&w2| w1 || w2))
}
