//! Property tests on random well-formed traces, against a brute-force oracle that computes
//! happens-before by graph reachability (no vector clocks) and locksets by simulation.

use std::collections::{BTreeMap, BTreeSet};

use jostle_checker::{CS_LOCK, Options, Prediction, hb, hybrid, lockset, predict};
use jostle_kernel::event::Event;
use proptest::prelude::*;

/// Builds a well-formed trace from random choices: main (0) writes, spawns tasks 1..=n, tasks
/// access, lock (never a lock held by another task), signal and wait (only for sent
/// signals), enter the critical section; at the end every task releases, exits and is joined,
/// and main reads.
fn build(n: u8, choices: &[(u8, u8, u8, u8)]) -> Vec<Event> {
    // Main initialises one location before the spawns (ordered by spawn edges) and reads one
    // after the joins (ordered by join edges).
    let first = choices.first().map_or(0, |c| c.2);
    let mut ev = vec![
        Event::TaskStart { t: 0 },
        Event::Write {
            t: 0,
            s: 6,
            a: 0x100 + u32::from(first % 3),
        },
    ];
    for c in 1..=n {
        ev.push(Event::Spawn {
            t: 0,
            child: c,
            s: 900,
        });
        ev.push(Event::TaskStart { t: c });
    }
    let locks = [10u32, 11, 12, CS_LOCK];
    let mut holder: BTreeMap<u32, u8> = BTreeMap::new();
    let mut held: Vec<Vec<u32>> = vec![Vec::new(); n as usize + 1];
    let mut pending = [0u32; 2];
    let release = |t: u8, l: u32| {
        if l == CS_LOCK {
            Event::CsExit { t }
        } else {
            Event::Release { t, s: 300 + l, l }
        }
    };
    for &(task, op, x, y) in choices {
        let t = 1 + task % n;
        let ti = t as usize;
        match op % 10 {
            0..=4 => {
                // Mostly the location guarded by the innermost held lock (if any), with its
                // own sites; sometimes any location, from "unguarded" sites.
                let guard = held[ti].last().filter(|_| y % 4 != 0);
                let (loc, guarded) = match guard {
                    Some(&l) => ((l % 3) as u8, 1),
                    None => (x % 3, 0),
                };
                let write = op % 3 != 0;
                let a = 0x100 + u32::from(loc);
                let s = 10 + u32::from(loc) * 4 + guarded * 2 + u32::from(write);
                ev.push(match op % 3 {
                    0 => Event::Read { t, s, a },
                    1 => Event::Write { t, s, a },
                    _ => Event::Update { t, s, a },
                });
            }
            5 | 6 => {
                let l = locks[usize::from(x % 4)];
                if holder.contains_key(&l) {
                    continue;
                }
                holder.insert(l, t);
                held[ti].push(l);
                ev.push(if l == CS_LOCK {
                    Event::CsEnter { t }
                } else {
                    Event::Acquire {
                        t,
                        s: 200 + l + u32::from(y % 2),
                        l,
                        c: l % 2,
                    }
                });
            }
            7 => {
                if held[ti].is_empty() {
                    continue;
                }
                let i = usize::from(x) % held[ti].len();
                let l = held[ti].remove(i);
                holder.remove(&l);
                ev.push(release(t, l));
            }
            8 => {
                let g = u32::from(x % 2);
                pending[g as usize] += 1;
                ev.push(Event::Signal { t, s: 400, g });
            }
            _ => {
                let g = u32::from(x % 2);
                if pending[g as usize] > 0 {
                    pending[g as usize] -= 1;
                    ev.push(Event::Wait { t, s: 401, g });
                }
            }
        }
    }
    for t in 1..=n {
        while let Some(l) = held[t as usize].pop() {
            holder.remove(&l);
            ev.push(release(t, l));
        }
        ev.push(Event::TaskExit { t });
    }
    for t in 1..=n {
        ev.push(Event::Join {
            t: 0,
            child: t,
            s: 901,
        });
    }
    let last = choices.last().map_or(0, |c| c.3);
    ev.push(Event::Read {
        t: 0,
        s: 7,
        a: 0x100 + u32::from(last % 3),
    });
    ev
}

struct Access {
    idx: usize,
    t: u8,
    s: u32,
    a: u32,
    write: bool,
    locks: BTreeSet<u32>,
}

/// Happens-before by reachability: `reach[i]` is the set of events `j` with `i ≺ j`.
fn happens_before(trace: &[Event], lock_edges: bool) -> Vec<Vec<bool>> {
    let n = trace.len();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut last_of: BTreeMap<u8, usize> = BTreeMap::new();
    let mut pending_spawn: BTreeMap<u8, usize> = BTreeMap::new();
    let mut signals: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    let mut last_release: BTreeMap<u32, usize> = BTreeMap::new();
    for (i, e) in trace.iter().enumerate() {
        let t = e.task().expect("task events only");
        if let Some(&p) = last_of.get(&t) {
            succ[p].push(i);
        } else if let Some(p) = pending_spawn.remove(&t) {
            succ[p].push(i);
        }
        match *e {
            Event::Spawn { child, .. } => {
                pending_spawn.insert(child, i);
            }
            Event::Join { child, .. } => {
                if let Some(&c) = last_of.get(&child) {
                    succ[c].push(i);
                }
            }
            Event::Signal { g, .. } => signals.entry(g).or_default().push(i),
            Event::Wait { g, .. } => {
                let q = signals.get_mut(&g).expect("sent");
                let s = q.remove(0);
                succ[s].push(i);
            }
            Event::Release { l, .. } if lock_edges => {
                last_release.insert(l, i);
            }
            Event::CsExit { .. } if lock_edges => {
                last_release.insert(CS_LOCK, i);
            }
            Event::Acquire { l, .. } if lock_edges => {
                if let Some(&r) = last_release.get(&l) {
                    succ[r].push(i);
                }
            }
            Event::CsEnter { .. } if lock_edges => {
                if let Some(&r) = last_release.get(&CS_LOCK) {
                    succ[r].push(i);
                }
            }
            _ => {}
        }
        last_of.insert(t, i);
    }
    // Edges go forward in the trace: close backwards.
    let mut reach = vec![vec![false; n]; n];
    for i in (0..n).rev() {
        for &j in &succ[i] {
            let below = reach[j].clone();
            let row = &mut reach[i];
            row[j] = true;
            for (r, b) in row.iter_mut().zip(below) {
                *r |= b;
            }
        }
    }
    reach
}

fn accesses(trace: &[Event]) -> Vec<Access> {
    let mut held: BTreeMap<u8, BTreeSet<u32>> = BTreeMap::new();
    let mut out = Vec::new();
    for (idx, e) in trace.iter().enumerate() {
        match *e {
            Event::Acquire { t, l, .. } => {
                held.entry(t).or_default().insert(l);
            }
            Event::CsEnter { t } => {
                held.entry(t).or_default().insert(CS_LOCK);
            }
            Event::Release { t, l, .. } => {
                held.entry(t).or_default().remove(&l);
            }
            Event::CsExit { t } => {
                held.entry(t).or_default().remove(&CS_LOCK);
            }
            Event::Read { t, s, a } | Event::Write { t, s, a } | Event::Update { t, s, a } => out
                .push(Access {
                    idx,
                    t,
                    s,
                    a,
                    write: !matches!(e, Event::Read { .. }),
                    locks: held.get(&t).cloned().unwrap_or_default(),
                }),
            _ => {}
        }
    }
    out
}

/// Oracle racing site pairs (and racing locations), with or without lockset / HB filters.
fn oracle(
    trace: &[Event],
    use_locks: bool,
    hb: Option<bool>,
) -> (BTreeSet<(u32, u32)>, BTreeSet<u32>) {
    let acc = accesses(trace);
    let reach = hb.map(|lock_edges| happens_before(trace, lock_edges));
    let mut pairs = BTreeSet::new();
    let mut locs = BTreeSet::new();
    for (i, x) in acc.iter().enumerate() {
        for y in &acc[i + 1..] {
            let races = x.t != y.t
                && x.a == y.a
                && (x.write || y.write)
                && (!use_locks || x.locks.is_disjoint(&y.locks))
                && reach.as_ref().is_none_or(|r| !r[x.idx][y.idx]);
            if races {
                pairs.insert((x.s.min(y.s), x.s.max(y.s)));
                locs.insert(x.a);
            }
        }
    }
    (pairs, locs)
}

fn site_pairs(p: &[jostle_checker::RacePair]) -> BTreeSet<(u32, u32)> {
    p.iter().map(|p| p.sites()).collect()
}

fn trace_strategy() -> impl Strategy<Value = Vec<Event>> {
    (
        2u8..=4,
        prop::collection::vec(any::<(u8, u8, u8, u8)>(), 0..60),
    )
        .prop_map(|(n, c)| build(n, &c))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn hybrid_is_exact_for_site_pairs(trace in trace_strategy()) {
        let (expected, _) = oracle(&trace, true, Some(false));
        prop_assert_eq!(site_pairs(&hybrid::detect(&trace)), expected);
    }

    #[test]
    fn precise_lockset_is_exact_for_site_pairs(trace in trace_strategy()) {
        let (expected, _) = oracle(&trace, true, None);
        prop_assert_eq!(site_pairs(&lockset::precise(&trace)), expected);
    }

    #[test]
    fn hb_pairs_are_real_and_found_by_hybrid(trace in trace_strategy()) {
        let found = hb::detect(&trace);
        let hybrid_pairs = site_pairs(&hybrid::detect(&trace));
        let reach = happens_before(&trace, true);
        let (_, racy_locations) = oracle(&trace, false, Some(true));
        for p in &found {
            prop_assert!(hybrid_pairs.contains(&p.sites()), "{:?} not in hybrid", p.sites());
            let (i, j) = (p.first.event.min(p.second.event), p.first.event.max(p.second.event));
            prop_assert!(!reach[i as usize][j as usize], "witness {i} ≺ {j}");
            prop_assert_ne!(p.first.task, p.second.task);
        }
        // FastTrack reports at least one race on every location that has one.
        let reported: BTreeSet<u32> = found.iter().flat_map(|p| p.locations.clone()).collect();
        prop_assert_eq!(reported, racy_locations);
    }

    #[test]
    fn hybrid_witnesses_have_no_common_lock(trace in trace_strategy()) {
        let acc = accesses(&trace);
        let by_idx: BTreeMap<usize, &Access> = acc.iter().map(|a| (a.idx, a)).collect();
        let reach = happens_before(&trace, false);
        for p in hybrid::detect(&trace) {
            let x = by_idx[&(p.first.event as usize)];
            let y = by_idx[&(p.second.event as usize)];
            prop_assert!(x.locks.is_disjoint(&y.locks), "common lock in {:?}", p.sites());
            prop_assert_ne!(x.t, y.t);
            prop_assert_eq!(x.a, y.a);
            prop_assert!(x.write || y.write);
            prop_assert_eq!((x.s, y.s), p.sites());
            let (i, j) = (x.idx.min(y.idx), x.idx.max(y.idx));
            prop_assert!(!reach[i][j]);
        }
    }

    #[test]
    fn merging_is_order_independent(
        a in trace_strategy(),
        b in trace_strategy(),
        c in trace_strategy(),
    ) {
        let p = |t: &[Event], id: u32| predict(t, &Options { trace_id: id, ..Options::default() });
        let (pa, pb, pc) = (p(&a, 1), p(&b, 2), p(&c, 3));
        let merged = |order: [&Prediction; 3]| {
            let mut m = Prediction::new();
            for x in order {
                m.merge(x.clone());
            }
            m
        };
        let abc = merged([&pa, &pb, &pc]);
        prop_assert_eq!(&abc, &merged([&pc, &pa, &pb]));
        prop_assert_eq!(&abc, &merged([&pb, &pc, &pa]));
        // Merging is idempotent and the JSON round-trips.
        let mut again = abc.clone();
        again.merge(pb.clone());
        prop_assert_eq!(&again, &abc);
        prop_assert_eq!(Prediction::from_json(&abc.to_json()).unwrap(), abc);
    }
}

/// The generator exercises the interesting cases (so the properties above are not vacuous).
#[test]
fn generator_covers_races_locks_and_ordering() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut hybrid_only, mut hb_races, mut lock_protected, mut hb_ordered) = (0, 0, 0, 0);
    for _ in 0..300 {
        let trace = trace_strategy().new_tree(&mut runner).unwrap().current();
        let h = site_pairs(&hybrid::detect(&trace));
        let f = site_pairs(&hb::detect(&trace));
        hb_races += usize::from(!f.is_empty());
        hybrid_only += usize::from(h.len() > f.len());
        let (no_locks, _) = oracle(&trace, false, Some(false));
        lock_protected += usize::from(no_locks.len() > h.len());
        let (no_hb, _) = oracle(&trace, true, None);
        hb_ordered += usize::from(no_hb.len() > h.len());
    }
    let counts = (hb_races, hybrid_only, lock_protected, hb_ordered);
    assert!(hb_races > 30, "{counts:?}");
    assert!(hybrid_only > 30, "{counts:?}");
    assert!(lock_protected > 15, "{counts:?}");
    assert!(hb_ordered > 10, "{counts:?}");
}
