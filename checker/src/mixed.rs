//! Mixed atomic/plain accesses: a location accessed both with instrumented atomics
//! (`AtomicLoad`, `AtomicStore`, `AtomicRmw`, `CasFailed`) and with plain accesses (`Read`,
//! `Write`, `Update`).
//!
//! Atomic accesses never race with each other: they are synchronisation ([`Clocks`] gives
//! them their release/acquire edges). A plain access and an atomic access of the same
//! location, though, race like two plain ones (the plain access is not atomic): they are a
//! candidate when they are by different contexts, one writes (an atomic store or RMW writes;
//! a load or failed CAS reads), their locksets are disjoint (`LockState::disjoint`, masks
//! included) and neither happens before the other under the hybrid detector's relation
//! (racefuzzer-pldi08 §2.2 Phase 1, with [`Edges::Relaxed`]: no lock edges; atomics'
//! edges included). The output is racing site pairs, like the hybrid detector's; `predict`
//! marks them with the analysis `mixed_atomic`.
//!
//! Only the locations with both kinds of access (found by a first pass over the trace) are
//! tracked, with the hybrid detector's bounded summary reduced to its essentials: per key
//! (context, site, kind, atomic or not, lockset) the latest access (its epoch and event
//! index), exact for site pairs by the argument of [`crate::hybrid`].

use jostle_kernel::event::Event;

use crate::hash::{FxHashMap, FxHashSet};
use crate::locks::{LockState, SetId};
use crate::race::{AccessKind, PairSet, RaceAccess, RacePair};
use crate::vc::{Clocks, Edges};

/// An access as this analysis sees it: location, site, context, write?, atomic?
pub fn access(ev: &Event) -> Option<(u32, u32, u8, bool, bool)> {
    Some(match *ev {
        Event::Read { t, s, a } => (a, s, t, false, false),
        Event::Write { t, s, a } | Event::Update { t, s, a } => (a, s, t, true, false),
        Event::AtomicLoad { t, s, a, .. } | Event::CasFailed { t, s, a, .. } => {
            (a, s, t, false, true)
        }
        Event::AtomicStore { t, s, a, .. } | Event::AtomicRmw { t, s, a, .. } => {
            (a, s, t, true, true)
        }
        _ => return None,
    })
}

/// The latest access of one key at a location.
#[derive(Clone, Copy, Debug)]
struct Entry {
    task: u8,
    site: u32,
    write: bool,
    atomic: bool,
    set: SetId,
    clock: u32,
    event: u64,
}

/// The locations of `trace` accessed both atomically and plainly.
pub(crate) fn mixed_locations(trace: &[Event]) -> FxHashSet<u32> {
    let mut atomic = FxHashSet::default();
    let mut plain = FxHashSet::default();
    for ev in trace {
        if let Some((a, _, _, _, is_atomic)) = access(ev) {
            if is_atomic {
                atomic.insert(a);
            } else {
                plain.insert(a);
            }
        }
    }
    atomic.retain(|a| plain.contains(a));
    atomic
}

/// Racing (plain, atomic) site pairs on locations accessed both ways, sorted by site pair.
pub fn detect(trace: &[Event]) -> Vec<RacePair> {
    let mixed = mixed_locations(trace);
    if mixed.is_empty() {
        return Vec::new();
    }
    let mut clocks = Clocks::new(Edges::Relaxed);
    let mut locks = LockState::with_masks();
    let mut entries: FxHashMap<u32, Vec<Entry>> = FxHashMap::default();
    let mut pairs = PairSet::default();
    for (idx, ev) in trace.iter().enumerate() {
        let Some((a, site, t, write, atomic)) = access(ev).filter(|x| mixed.contains(&x.0)) else {
            locks.on_event(ev);
            clocks.on_event(ev);
            continue;
        };
        // An acquiring atomic access sees what its acquire joined; a releasing one is
        // recorded before its release ticks the clock.
        clocks.atomic_acquire(ev);
        let tl = locks.task(t);
        let me = (tl.set, tl.mask, tl.exact);
        let vc = clocks.clock(t);
        let clock = vc.get(t);
        let list = entries.entry(a).or_default();
        for e in list.iter() {
            // Another context, one plain and one atomic, a write, no common lock, and the
            // entry not ordered before this access (e ≺ current ⇔ c_e ≤ C_t[t_e]).
            if e.task == t || e.atomic == atomic || !(e.write || write) || e.clock <= vc.get(e.task)
            {
                continue;
            }
            let other = locks.set(e.set);
            if !locks.disjoint(me, (e.set, other.mask, other.exact)) {
                continue;
            }
            let kind = |w| {
                if w {
                    AccessKind::Write
                } else {
                    AccessKind::Read
                }
            };
            pairs.record(
                RaceAccess {
                    site: e.site,
                    task: e.task,
                    kind: kind(e.write),
                    event: e.event,
                },
                RaceAccess {
                    site,
                    task: t,
                    kind: kind(write),
                    event: idx as u64,
                },
                a,
            );
        }
        let entry = Entry {
            task: t,
            site,
            write,
            atomic,
            set: me.0,
            clock,
            event: idx as u64,
        };
        match list
            .iter_mut()
            .find(|e| (e.task, e.site, e.write, e.atomic, e.set) == (t, site, write, atomic, me.0))
        {
            Some(e) => *e = entry,
            None => list.push(entry),
        }
        clocks.atomic_release(ev);
    }
    pairs.into_sorted()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::access_atomicity::tests::random_trace;

    /// Every (plain, atomic) pair by brute force.
    fn oracle(trace: &[Event]) -> BTreeSet<(u32, u32)> {
        let mixed = mixed_locations(trace);
        let mut clocks = Clocks::new(Edges::Relaxed);
        let mut locks = LockState::with_masks();
        let mut seen = Vec::new();
        for ev in trace {
            let Some((a, site, t, write, atomic)) = access(ev) else {
                locks.on_event(ev);
                clocks.on_event(ev);
                continue;
            };
            clocks.atomic_acquire(ev);
            let tl = locks.task(t);
            let set = (tl.set, tl.mask, tl.exact);
            seen.push((a, site, t, write, atomic, set, clocks.clock(t).clone()));
            clocks.atomic_release(ev);
        }
        let mut out = BTreeSet::new();
        for (i, x) in seen.iter().enumerate() {
            for y in &seen[i + 1..] {
                if x.0 == y.0
                    && mixed.contains(&x.0)
                    && x.2 != y.2
                    && x.4 != y.4
                    && (x.3 || y.3)
                    && x.6.get(x.2) > y.6.get(x.2)
                    && locks.disjoint(x.5, y.5)
                {
                    out.insert((x.1.min(y.1), x.1.max(y.1)));
                }
            }
        }
        out
    }

    #[test]
    fn exact_for_site_pairs() {
        let mut nonempty = 0;
        for seed in 0..80 {
            let trace = random_trace(seed, 250);
            let found: BTreeSet<_> = detect(&trace).iter().map(RacePair::sites).collect();
            assert_eq!(found, oracle(&trace), "seed {seed}");
            nonempty += usize::from(!found.is_empty());
        }
        assert!(nonempty > 40, "{nonempty}");
    }
}
