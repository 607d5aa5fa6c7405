//! Deadlock prediction with iGoodlock (Joshi, Park, Sen, Naik: DeadlockFuzzer, PLDI'09).
//!
//! Each acquire of a lock `l` by task `t` while holding the non-empty lockset `L` gives a
//! *lock dependency* `(t, L, l, C)` whose context `C` is the stack of acquire sites of the
//! held locks (in acquisition order) followed by the site of this acquire. A sequence of
//! dependencies `⟨(t_1, L_1, l_1, C_1), …, (t_m, L_m, l_m, C_m)⟩` is a *chain* when the tasks
//! are distinct, the acquired locks are distinct, the held sets are pairwise disjoint (a gate
//! lock held by every party prevents the deadlock) and `l_i ∈ L_{i+1}`; a chain is a
//! *potential deadlock cycle* when also `l_m ∈ L_1`. Cycles up to length `k` are computed
//! by extending chains one dependency at a time (iGoodlock's iterations `D^1 … D^k`); each
//! cycle is reported once, starting with its first-recorded dependency.
//!
//! Re-entrant acquires are ignored; the critical section is lock [`crate::CS_LOCK`].
//!
//! An acquire inside an Embassy task's poll (its executor's lock held, class
//! [`EXECUTOR_CLASS`]) gives no dependency: it never waits. Polls of one executor do not
//! interleave, so a lock taken inside a poll is free unless another task holds it across
//! an `.await`, and the locks that can be held so are async mutexes, whose acquire event
//! comes once the real lock was taken (a poll that finds it taken returns `Pending`
//! instead, releasing the executor's lock); a critical section cannot span an `.await`.
//! The holder of the executor's lock never waits, then, and no cycle through it can close:
//! a guard held across an `.await` (a mutex held, the executor's lock wanted at the next
//! poll, while another task's poll acquires the mutex) would otherwise be a candidate
//! that no run makes real.

use serde::{Deserialize, Serialize};

use jostle_kernel::event::{EXECUTOR_CLASS, Event};

use crate::hash::{FxHashMap, FxHashSet};
use crate::locks::{LockChange, LockState};

/// A lock: identity (address) and class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LockRef {
    /// Identity (the lock's address on the device).
    pub id: u32,
    /// Class (the lock's type, shared by its instances).
    pub class: u32,
}

/// One component of a potential deadlock cycle: what one task holds and wants, and where.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DeadlockComponent {
    /// The task.
    pub task: u8,
    /// The site of the acquire of `wanted` (where DeadlockFuzzer pauses the task).
    pub site: u32,
    /// Locks held at that acquire, in acquisition order.
    pub held: Vec<LockRef>,
    /// The lock being acquired.
    pub wanted: LockRef,
    /// Acquire sites of the held locks, in acquisition order, then `site`.
    pub context: Vec<u32>,
    /// Event index of the (first) acquire with this dependency.
    pub event: u64,
}

/// A potential deadlock: each component's wanted lock is held by the next component, and
/// the last one's by the first.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DeadlockCycle {
    /// The components, in cycle order.
    pub components: Vec<DeadlockComponent>,
}

/// A recorded lock dependency.
struct Dep {
    task: u8,
    /// Held lock indices, sorted.
    held: Vec<u32>,
    wanted: u32,
    component: DeadlockComponent,
}

/// Collects the lock dependencies of a trace (deduplicated).
fn dependencies(trace: &[Event]) -> (Vec<Dep>, LockState) {
    let mut locks = LockState::new();
    let mut seen: FxHashSet<(u8, Vec<u32>, u32, Vec<u32>)> = FxHashSet::default();
    let mut deps = Vec::new();
    for (i, ev) in trace.iter().enumerate() {
        let Some(t) = ev.task() else { continue };
        // The held locks before this event, with their acquire sites.
        let before: Vec<(u32, u32)> = match ev {
            Event::Acquire { .. } | Event::CsEnter { .. } => {
                locks.task(t).held.iter().map(|h| (h.0, h.2)).collect()
            }
            _ => Vec::new(),
        };
        let LockChange::Acquired(wanted) = locks.on_event(ev) else {
            continue;
        };
        if before.is_empty() {
            continue; // no held lock: cannot close a cycle
        }
        if before.iter().any(|h| locks.lock(h.0).1 == EXECUTOR_CLASS) {
            continue; // inside a poll: never waits (see the module's comment)
        }
        let site = ev.site().unwrap_or(0);
        let mut context: Vec<u32> = before.iter().map(|h| h.1).collect();
        context.push(site);
        let mut held: Vec<u32> = before.iter().map(|h| h.0).collect();
        held.sort_unstable();
        if !seen.insert((t, held.clone(), wanted, context.clone())) {
            continue;
        }
        let lock_ref = |li: u32| {
            let (id, class) = locks.lock(li);
            LockRef { id, class }
        };
        let component = DeadlockComponent {
            task: t,
            site,
            held: before.iter().map(|h| lock_ref(h.0)).collect(),
            wanted: lock_ref(wanted),
            context,
            event: i as u64,
        };
        deps.push(Dep {
            task: t,
            held,
            wanted,
            component,
        });
    }
    (deps, locks)
}

fn disjoint(a: &[u32], b: &[u32]) -> bool {
    a.iter().all(|x| b.binary_search(x).is_err())
}

/// Potential deadlock cycles of length 2..=`max_len` in `trace`, in discovery order.
pub fn detect(trace: &[Event], max_len: usize) -> Vec<DeadlockCycle> {
    let (deps, _) = dependencies(trace);
    // Dependencies by held lock: the candidates to follow a dependency wanting that lock.
    let mut by_held: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    for (i, d) in deps.iter().enumerate() {
        for &l in &d.held {
            by_held.entry(l).or_default().push(i);
        }
    }
    let mut out = Vec::new();
    let mut chain = Vec::with_capacity(max_len);
    for start in 0..deps.len() {
        chain.clear();
        chain.push(start);
        extend(&deps, &by_held, max_len, &mut chain, &mut out);
    }
    out
}

/// Extends `chain` (whose first element is its smallest index) by one dependency, reporting
/// the cycles it closes.
fn extend(
    deps: &[Dep],
    by_held: &FxHashMap<u32, Vec<usize>>,
    max_len: usize,
    chain: &mut Vec<usize>,
    out: &mut Vec<DeadlockCycle>,
) {
    if chain.len() >= max_len {
        return;
    }
    let start = chain[0];
    let last = &deps[*chain.last().expect("non-empty chain")];
    let Some(next) = by_held.get(&last.wanted) else {
        return;
    };
    for &j in next {
        if j <= start {
            continue; // each cycle once: from its smallest index
        }
        let d = &deps[j];
        let compatible = chain.iter().all(|&c| {
            let o = &deps[c];
            o.task != d.task && o.wanted != d.wanted && disjoint(&o.held, &d.held)
        });
        if !compatible {
            continue;
        }
        chain.push(j);
        if deps[start].held.binary_search(&d.wanted).is_ok() {
            out.push(DeadlockCycle {
                components: chain.iter().map(|&c| deps[c].component.clone()).collect(),
            });
        }
        extend(deps, by_held, max_len, chain, out);
        chain.pop();
    }
}
