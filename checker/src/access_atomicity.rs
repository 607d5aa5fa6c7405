//! Single-variable atomicity violations: the unserializable access interleavings of AVIO
//! (Lu et al., ASPLOS'06) and CTrigger (Park et al., ASPLOS'09), predicted from one trace.
//!
//! This is causal atomicity (atomfuzzer-fse08 §2.1, Definition 3 and the three conditions
//! after it: `t1`, `t3` of one thread, `t2` of another between them) for the patterns that
//! atomfuzzer-fse08 §2.2 leaves to a race detector: `t1`, `t2`, `t3` are accesses to one
//! memory location, and here the "block" is two consecutive accesses of one context, so
//! lock-protected accesses that are not atomic together are found too.
//!
//! In a context `C`, two consecutive accesses `a1`, `a3` to a location `x` (no access of `C`
//! to `x` in between), and an access `a2` to `x` by another context `D`, form a candidate
//! when the triple of kinds is unserializable (AVIO's table: `a2` between `a1` and `a3` gives
//! a result no serial order gives):
//!
//! | `a1 a2 a3` | what goes wrong |
//! |---|---|
//! | R W R | `C` reads two different values |
//! | W W R | `C` does not read back what it wrote |
//! | R W W | `C`'s write is computed from a stale read (check-then-act, lost update) |
//! | W R W | `D` reads `C`'s intermediate value |
//!
//! and `a2` could run between `a1` and `a3`:
//!
//! - contexts: `C` and `D` are tasks (the cooperative scheduler can switch at any access), or
//!   `D` is a handler that can preempt `C` (any handler preempts a task; a handler preempts
//!   a handler only with a strictly lower priority number). A task never runs inside a
//!   handler. A handler context's consecutive accesses are taken within one firing;
//! - locks: `C` holds no lock *continuously* from `a1` to `a3` that keeps `D` out: a real
//!   lock `D` holds at `a2`, the critical section (nothing else runs while a task holds it;
//!   it masks every handler), or a mask of `D`'s source (`D`'s implicit locks of
//!   [`crate::irq`] share none of the locks `C` holds at both accesses without releasing
//!   them in between: two critical sections are not one). A mask of `D`'s source alone
//!   does not keep `D` out when a more urgent handler `C` does not mask was seen enabling
//!   that source anywhere in the trace ([`crate::irq::Unmaskers`]): the triple then names
//!   that handler, which a confirmation fires first;
//! - happens-before (the hybrid detector's relation, [`Edges::Relaxed`]: spawn, join,
//!   signals, atomics, interrupt requests; lock order is not fixed, locks are the previous
//!   condition): neither `a2 ≺ a1` nor `a3 ≺ a2`. `a2` may come from anywhere in the trace.
//!   Atomic release/acquire edges are synchronisation here too, so a remote access that
//!   follows an acquiring load which read `a3`'s store is ruled out, even on `x` itself (in
//!   another schedule the load could have read an older value).
//!
//! Atomic accesses count as accesses (a load reads, a store or RMW writes, a failed CAS
//! reads): an atomic load then an atomic store of one location by a task, with a remote
//! store possible in between, is exactly a check-then-act bug. `Update` (a plain
//! read-modify-write) writes.
//!
//! The analysis keeps, per location, the latest access of each key (context, site, kind,
//! lockset) — the possible `a2` seen so far — and the latest `(a1, a3)` pair of each key
//! (context, sites, kinds, locks held from `a1` to `a3`) — to pair with an `a2` that comes
//! later. Keeping the latest is exact for site triples: a later entry of the same key is no
//! more ordered than an earlier one (its epoch is larger). One candidate per site triple
//! `(a1, a2, a3)`, the first found.

use serde::{Deserialize, Serialize};

use jostle_kernel::event::Event;

use crate::hash::{FxHashMap, FxHashSet};
use crate::irq::Unmaskers;
use crate::locks::{LockState, SetId};
use crate::mixed::access;
use crate::vc::{Clocks, Edges, VectorClock};

/// An unserializable interleaving of three accesses: the kinds of `a1`, `a2`, `a3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AccessPattern {
    /// Read, remote write, read.
    #[serde(rename = "RWR")]
    Rwr,
    /// Write, remote write, read.
    #[serde(rename = "WWR")]
    Wwr,
    /// Read, remote write, write.
    #[serde(rename = "RWW")]
    Rww,
    /// Write, remote read, write.
    #[serde(rename = "WRW")]
    Wrw,
}

impl AccessPattern {
    /// The pattern of kinds (write?) `a1`, `a2`, `a3`, if unserializable.
    pub fn of(w1: bool, w2: bool, w3: bool) -> Option<Self> {
        match (w1, w2, w3) {
            (false, true, false) => Some(Self::Rwr),
            (true, true, false) => Some(Self::Wwr),
            (false, true, true) => Some(Self::Rww),
            (true, false, true) => Some(Self::Wrw),
            _ => None,
        }
    }

    /// "RWR", "WWR", "RWW" or "WRW".
    pub fn name(self) -> &'static str {
        match self {
            Self::Rwr => "RWR",
            Self::Wwr => "WWR",
            Self::Rww => "RWW",
            Self::Wrw => "WRW",
        }
    }
}

/// One predicted violation: context `context`'s consecutive accesses at `first` and
/// `second` to `location`, with `remote_context`'s access at `remote` in between.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AccessTriple {
    /// Site of `a1`.
    pub first: u32,
    /// Site of `a2` (the remote access).
    pub remote: u32,
    /// Site of `a3`.
    pub second: u32,
    /// The location.
    pub location: u32,
    /// The kinds.
    pub pattern: AccessPattern,
    /// The context of `a1` and `a3`.
    pub context: u8,
    /// The context of `a2`.
    pub remote_context: u8,
    /// Event indices of `a1`, `a2`, `a3` (in that order, which need not be trace order).
    pub events: [u64; 3],
    /// The source of a more urgent handler that must undo the context's mask of the remote
    /// handler's source first (it was seen enabling that source; [`crate::irq::Unmaskers`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmasker: Option<u8>,
}

/// The latest access of a key (a possible `a2`).
#[derive(Clone, Copy, Debug)]
struct Remote {
    ctx: u8,
    site: u32,
    write: bool,
    set: SetId,
    clock: u32,
    event: u64,
}

/// The latest `(a1, a3)` pair of a key.
#[derive(Clone, Copy, Debug)]
struct Pair {
    ctx: u8,
    s1: u32,
    w1: bool,
    s3: u32,
    w3: bool,
    /// Locks held from `a1` to `a3`.
    held: SetId,
    /// `a3`'s epoch (its context's clock).
    clock3: u32,
    e1: u64,
    e3: u64,
}

/// A context's last access to a location (the next one's `a1`).
#[derive(Clone, Debug)]
struct Last {
    site: u32,
    write: bool,
    event: u64,
    /// [`LockState::seq`] at the access.
    seq: u64,
    /// The context's clock at the access.
    vc: VectorClock,
    /// The context's generation (see `State::gens`).
    generation: u32,
}

#[derive(Default)]
struct Location {
    remotes: Vec<Remote>,
    pairs: Vec<Pair>,
}

/// Can an access of another context with lockset `d` run between two accesses of a context
/// that held `held` all along (module doc)? `Some(None)`: yes; `Some(Some(j))`: yes, once
/// the handler of source `j` has undone the context's mask of the remote's source.
fn can_interleave(
    locks: &LockState,
    unmaskers: &Unmaskers,
    held: SetId,
    d: SetId,
) -> Option<Option<u8>> {
    let c = *locks.irq(held);
    let r = *locks.irq(d);
    match (c.handler, r.handler) {
        // A task never runs inside a handler; a handler preempts only less urgent ones.
        (Some(_), None) => return None,
        (Some((_, pc)), Some((_, pd))) if pd >= pc => return None,
        _ => {}
    }
    if locks.shares_symmetric(held, d) {
        return None;
    }
    match r.handler {
        Some((i, p)) if c.masks(i, p) => unmaskers.breaker(&c, i, p).map(Some),
        // Nothing else runs while a task is inside the critical section.
        None if c.cs => None,
        _ => Some(None),
    }
}

struct State {
    clocks: Clocks,
    locks: LockState,
    unmaskers: Unmaskers,
    locations: FxHashMap<u32, Location>,
    last: FxHashMap<(u8, u32), Last>,
    /// Per context, bumped when a task ends or a handler firing begins or ends: accesses of
    /// another generation are not consecutive.
    gens: Vec<u32>,
    reported: FxHashSet<(u32, u32, u32)>,
    out: Vec<AccessTriple>,
}

impl State {
    fn report(&mut self, t: AccessTriple) {
        if self.reported.insert((t.first, t.remote, t.second)) {
            self.out.push(t);
        }
    }

    fn on_access(&mut self, idx: u64, ev: &Event, (x, site, t, write): (u32, u32, u8, bool)) {
        self.clocks.atomic_acquire(ev);
        let set = self.locks.task(t).set;
        let vc = self.clocks.clock(t).clone();
        let clock = vc.get(t);
        let loc = self.locations.entry(x).or_default();
        let mut found = Vec::new();

        // As a2, with the (a1, a3) pairs seen so far: a3 must not happen before it.
        for p in &loc.pairs {
            if p.ctx == t || p.clock3 <= vc.get(p.ctx) {
                continue;
            }
            let Some(pattern) = AccessPattern::of(p.w1, write, p.w3) else {
                continue;
            };
            if let Some(unmasker) = can_interleave(&self.locks, &self.unmaskers, p.held, set) {
                found.push(AccessTriple {
                    first: p.s1,
                    remote: site,
                    second: p.s3,
                    location: x,
                    pattern,
                    context: p.ctx,
                    remote_context: t,
                    events: [p.e1, idx, p.e3],
                    unmasker,
                });
            }
        }

        // As a3, with the previous access a1 of this context and the possible a2 seen so
        // far: a2 must not happen before a1.
        let generation = self.gens[t as usize];
        if let Some(a1) = self
            .last
            .get(&(t, x))
            .filter(|l| l.generation == generation)
        {
            let held = self.locks.held_since(t, a1.seq);
            let loc = self.locations.get_mut(&x).expect("created above");
            for r in &loc.remotes {
                if r.ctx == t || r.clock <= a1.vc.get(r.ctx) {
                    continue;
                }
                let Some(pattern) = AccessPattern::of(a1.write, r.write, write) else {
                    continue;
                };
                if let Some(unmasker) = can_interleave(&self.locks, &self.unmaskers, held, r.set) {
                    found.push(AccessTriple {
                        first: a1.site,
                        remote: r.site,
                        second: site,
                        location: x,
                        pattern,
                        context: t,
                        remote_context: r.ctx,
                        events: [a1.event, r.event, idx],
                        unmasker,
                    });
                }
            }
            let pair = Pair {
                ctx: t,
                s1: a1.site,
                w1: a1.write,
                s3: site,
                w3: write,
                held,
                clock3: clock,
                e1: a1.event,
                e3: idx,
            };
            let key = |p: &Pair| (p.ctx, p.s1, p.w1, p.s3, p.w3, p.held);
            match loc.pairs.iter_mut().find(|p| key(p) == key(&pair)) {
                Some(p) => *p = pair,
                None => loc.pairs.push(pair),
            }
        }
        for f in found {
            self.report(f);
        }

        let loc = self.locations.get_mut(&x).expect("created above");
        let remote = Remote {
            ctx: t,
            site,
            write,
            set,
            clock,
            event: idx,
        };
        let key = |r: &Remote| (r.ctx, r.site, r.write, r.set);
        match loc.remotes.iter_mut().find(|r| key(r) == key(&remote)) {
            Some(r) => *r = remote,
            None => loc.remotes.push(remote),
        }
        let seq = self.locks.seq();
        match self.last.get_mut(&(t, x)) {
            Some(l) => {
                l.site = site;
                l.write = write;
                l.event = idx;
                l.seq = seq;
                l.vc.assign(&vc);
                l.generation = generation;
            }
            None => {
                self.last.insert(
                    (t, x),
                    Last {
                        site,
                        write,
                        event: idx,
                        seq,
                        vc,
                        generation,
                    },
                );
            }
        }
        self.clocks.atomic_release(ev);
    }
}

/// The single-variable atomicity violations predicted from `trace`, one per site triple
/// `(a1, a2, a3)` (the first found), in discovery order.
pub fn detect(trace: &[Event]) -> Vec<AccessTriple> {
    let mut a = State {
        clocks: Clocks::new(Edges::Relaxed),
        locks: LockState::with_masks(),
        unmaskers: Unmaskers::of(trace),
        locations: FxHashMap::default(),
        last: FxHashMap::default(),
        gens: vec![0; 256],
        reported: FxHashSet::default(),
        out: Vec::new(),
    };
    for (i, ev) in trace.iter().enumerate() {
        if let Some((x, site, t, write, _)) = access(ev) {
            a.on_access(i as u64, ev, (x, site, t, write));
            continue;
        }
        match *ev {
            Event::TaskExit { t } | Event::IrqEnter { t, .. } | Event::IrqExit { t } => {
                a.gens[t as usize] = a.gens[t as usize].wrapping_add(1);
            }
            _ => {}
        }
        a.locks.on_event(ev);
        a.clocks.on_event(ev);
    }
    a.out
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::irq::ALL_IRQS;

    /// A deterministic pseudo-random trace over tasks 0..3 and handlers of sources 0..3 (not
    /// necessarily well formed), with accesses, atomics, locks, signals and interrupts.
    pub(crate) fn random_trace(seed: u64, n: usize) -> Vec<Event> {
        let mut x = seed;
        let mut next = move |n: u32| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % u64::from(n)) as u32
        };
        let mut trace = Vec::with_capacity(n);
        while trace.len() < n {
            let i = next(3) as u8;
            let t = if next(3) == 0 {
                0x80 + i
            } else {
                next(3) as u8
            };
            let (s, a, o) = (next(6), 100 + next(2), next(5) as u8);
            let l = 1000 + next(2);
            trace.push(match next(30) {
                0..=4 => Event::Read { t, s, a },
                5..=7 => Event::Write { t, s, a },
                8 => Event::Update { t, s, a },
                9 => Event::AtomicLoad { t, s, a, o },
                10 => Event::AtomicStore { t, s, a, o },
                11 => Event::AtomicRmw { t, s, a, o },
                12 => Event::CasFailed { t, s, a, o },
                13 => Event::Acquire { t, s, l, c: 0 },
                14 => Event::Release { t, s, l },
                15 => Event::CsEnter { t },
                16 => Event::CsExit { t },
                17 => Event::Signal { t, s, g: next(2) },
                18 => Event::Wait { t, s, g: next(2) },
                19 => Event::Spawn {
                    t,
                    child: next(3) as u8,
                    s,
                },
                20 => Event::TaskExit { t },
                21 | 22 => Event::IrqEnter {
                    t: 0x80 + i,
                    i,
                    p: next(3) as u8,
                    by: next(3) as u8,
                    f: 0,
                },
                23 => Event::IrqExit { t: 0x80 + i },
                24 => Event::IrqMask {
                    t,
                    s,
                    i: if next(3) == 0 { ALL_IRQS } else { i },
                    on: next(2) as u8,
                },
                25 => Event::PrioMask {
                    t,
                    s,
                    level: next(4) as u8,
                    r: 0,
                },
                26 => Event::IrqRequest { t, s, i },
                _ => Event::Join {
                    t,
                    child: next(3) as u8,
                    s,
                },
            });
        }
        trace
    }

    /// One access with everything the oracle needs.
    struct Seen {
        ctx: u8,
        loc: u32,
        site: u32,
        write: bool,
        set: SetId,
        vc: VectorClock,
        event: u64,
    }

    /// Every triple by brute force: every consecutive pair of a context, every access of
    /// another context to the location, the same conditions.
    fn oracle(trace: &[Event]) -> BTreeSet<(u32, u32, u32)> {
        let mut clocks = Clocks::new(Edges::Relaxed);
        let mut locks = LockState::with_masks();
        let mut gens = [0u32; 256];
        let mut accesses: Vec<Seen> = Vec::new();
        // (a1 index, a3 index, locks held between).
        let mut pairs = Vec::new();
        let mut last: FxHashMap<(u8, u32), (usize, u64, u32)> = FxHashMap::default();
        for (i, ev) in trace.iter().enumerate() {
            let Some((loc, site, t, write, _)) = access(ev) else {
                if let Event::TaskExit { t } | Event::IrqEnter { t, .. } | Event::IrqExit { t } =
                    *ev
                {
                    gens[t as usize] += 1;
                }
                locks.on_event(ev);
                clocks.on_event(ev);
                continue;
            };
            clocks.atomic_acquire(ev);
            if let Some(&(a1, seq, g)) = last.get(&(t, loc))
                && g == gens[t as usize]
            {
                pairs.push((a1, accesses.len(), locks.held_since(t, seq)));
            }
            last.insert((t, loc), (accesses.len(), locks.seq(), gens[t as usize]));
            accesses.push(Seen {
                ctx: t,
                loc,
                site,
                write,
                set: locks.task(t).set,
                vc: clocks.clock(t).clone(),
                event: i as u64,
            });
            clocks.atomic_release(ev);
        }
        let ordered = |x: &Seen, y: &Seen| x.vc.get(x.ctx) <= y.vc.get(x.ctx);
        let unmaskers = Unmaskers::of(trace);
        let mut out = BTreeSet::new();
        for &(i1, i3, held) in &pairs {
            let (a1, a3) = (&accesses[i1], &accesses[i3]);
            for a2 in &accesses {
                if a2.ctx != a1.ctx
                    && a2.loc == a1.loc
                    && AccessPattern::of(a1.write, a2.write, a3.write).is_some()
                    && can_interleave(&locks, &unmaskers, held, a2.set).is_some()
                    && !(a2.event < a1.event && ordered(a2, a1))
                    && !(a3.event < a2.event && ordered(a3, a2))
                {
                    out.insert((a1.site, a2.site, a3.site));
                }
            }
        }
        out
    }

    #[test]
    fn exact_for_site_triples() {
        let mut nonempty = 0;
        for seed in 0..80 {
            let trace = random_trace(seed, 250);
            let found: Vec<_> = detect(&trace)
                .iter()
                .map(|v| (v.first, v.remote, v.second))
                .collect();
            let set: BTreeSet<_> = found.iter().copied().collect();
            assert_eq!(set.len(), found.len(), "one per site triple, seed {seed}");
            assert_eq!(set, oracle(&trace), "seed {seed}");
            nonempty += usize::from(!set.is_empty());
        }
        assert!(nonempty > 40, "{nonempty}");
    }

    #[test]
    fn patterns_are_avios_four() {
        let all = [false, true];
        let mut found = Vec::new();
        for a in all {
            for b in all {
                for c in all {
                    if let Some(p) = AccessPattern::of(a, b, c) {
                        found.push(p.name());
                    }
                }
            }
        }
        found.sort_unstable();
        assert_eq!(found, ["RWR", "RWW", "WRW", "WWR"]);
    }
}
