//! Hybrid race detection (O'Callahan–Choi), racefuzzer-pldi08 §2.2 Phase 1.
//!
//! Two accesses `e_i = MEM(σ_i, m, a_i, t_i, L_i)` and `e_j = MEM(σ_j, m, a_j, t_j, L_j)`
//! race when `t_i ≠ t_j ∧ (a_i = WRITE ∨ a_j = WRITE) ∧ L_i ∩ L_j = ∅ ∧ ¬(e_i ≺ e_j) ∧
//! ¬(e_j ≺ e_i)`, with ≺ the happens-before relation *without* release→acquire edges
//! ([`Edges::Relaxed`]); the output is the set of racing statement (site) pairs.
//!
//! # Bounded, exact summary
//!
//! The slides' database keeps a tuple `(m, t, L, a, e)` per access. Here each location keeps,
//! per key `(task, site, kind, lockset)`, only the **latest** access: its epoch `c@t` and
//! event index. This is exact for site pairs: an earlier access with the same key has an
//! epoch `≤` the latest one's, so if it is concurrent with a later access, so is the latest
//! (concurrency with `e_j` is `c > C_j[t]`, monotone in `c`), and it has the same site,
//! kind and lockset. An access whose key already has an entry with the *same* epoch is
//! skipped: every race it could form was found against that entry (its task has not sent
//! since, so nothing that happened since can be ordered after one but not the other).
//! Memory is therefore `O(locations × keys per location)`, bounded by tasks × sites ×
//! 2 × locksets per location whatever the trace length (a longer trace can only fill more of
//! that key space).
//!
//! Entries are grouped by site, then by lockset. Once a site pair is recorded for a
//! location, the pair's groups are never compared again there (the output is per site pair,
//! with the location set and the first witness), and a lockset group that shares a lock
//! with the access is skipped without looking at its entries: well-locked and already
//! reported accesses cost a few mask tests.
//!
//! # Layout
//!
//! Checking an access is memory-bound: the summary can be far larger than the caches, and
//! each access lands at a random place in it. So:
//!
//! - one probe of a small table keyed by (location, site) resolves an access to its site
//!   group, and one probe of the summary table (keyed by site group, lockset, task and kind;
//!   a slot holds key and entry) finds its entry;
//! - a location's site groups are one small array holding what decides whether another group
//!   must be scanned (pairs already reported, "has a write", a lock common to all its
//!   locksets; bit masks for the first 64 groups), so an access whose pairs are all reported
//!   or lock-protected costs a few mask tests;
//! - the scan lists (a group's locksets and the keys of their entries, in first-seen order,
//!   which fixes the witness reported) are read only while a group pair is open;
//! - [`PairDetector::feed`] resolves a batch of accesses before probing the summary for them,
//!   so that their cache misses overlap.
//!
//! [`PairDetector`] with `HB = false` is the slides' *precise lockset* check (the same
//! condition without the happens-before test), see [`crate::lockset::precise`].
//!
//! # Interrupts and atomics
//!
//! A handler is a context of its own; masks are locks ([`crate::irq`]): "disjoint locksets"
//! is `LockState::disjoint`, which for sets with a mask or handler member applies the
//! one-sided mask rule on its slow path (such sets are never `exact`, so the mask filters
//! above never skip them wrongly). Atomic accesses only synchronise ([`Clocks`]).

use core::hash::{Hash, Hasher};

use jostle_kernel::event::Event;

use crate::hash::FxHashMap;
use crate::locks::{LockState, SetId};
use crate::race::{AccessKind, PairSet, RaceAccess, RacePair};
use crate::vc::{Clocks, Edges, VectorClock};

/// SplitMix64's finaliser: every bit of `z` reaches the low bits hash tables index with.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A summary key: the site group (a site at a location), the lockset, the task and the kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    group: u32,
    set: SetId,
    task: u8,
    write: bool,
}

impl Key {
    /// Task and kind, plus one (a slot tag of 0 marks an empty slot).
    #[inline]
    fn tag(self) -> u32 {
        (u32::from(self.task) << 1 | u32::from(self.write)) + 1
    }

    #[inline]
    fn hash(self) -> u64 {
        let packed = u64::from(self.group) << 32 | u64::from(self.set);
        mix(packed ^ u64::from(self.tag()).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }
}

/// A slot of the summary table: a key and its latest access (epoch and event index).
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    group: u32,
    set: SetId,
    /// [`Key::tag`]; 0: empty.
    tag: u32,
    /// The task's own clock at the access (its epoch).
    clock: u32,
    event: u64,
}

/// The summary: key → latest access.
///
/// Open addressing with linear probing, power-of-two size, at most 3/4 full. Hand-rolled
/// rather than a `HashMap` because every access probes it at a random place and it outgrows
/// the caches: a slot holds key and entry, so the usual probe reads one cache line (no
/// separate control bytes), and where a probe starts can be read ahead
/// ([`PairDetector::feed`]).
#[derive(Clone, Debug)]
struct Summary {
    slots: Vec<Slot>,
    len: usize,
}

impl Summary {
    fn new() -> Self {
        Self {
            slots: vec![Slot::default(); 64],
            len: 0,
        }
    }

    /// `Ok(slot)` of `key` (whose [`Key::hash`] is `hash`), or `Err(slot)`: the empty slot
    /// where it would go.
    #[inline]
    fn find(&self, key: Key, hash: u64) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let tag = key.tag();
        let mut i = hash as usize & mask;
        loop {
            let s = self.slots[i];
            if s.tag == tag && s.group == key.group && s.set == key.set {
                return Ok(i);
            }
            if s.tag == 0 {
                return Err(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Clock and event index of `key`'s latest access.
    fn get(&self, key: Key) -> Option<(u32, u64)> {
        let s = self.slots[self.find(key, key.hash()).ok()?];
        Some((s.clock, s.event))
    }

    /// Records an access of the key in slot `i`.
    #[inline]
    fn set(&mut self, i: usize, clock: u32, event: u64) {
        self.slots[i].clock = clock;
        self.slots[i].event = event;
    }

    /// Inserts `key` in the empty slot `i` returned by [`Summary::find`].
    fn insert(&mut self, i: usize, key: Key, clock: u32, event: u64) {
        self.slots[i] = Slot {
            group: key.group,
            set: key.set,
            tag: key.tag(),
            clock,
            event,
        };
        self.len += 1;
        if self.len * 4 > self.slots.len() * 3 {
            self.grow();
        }
    }

    fn grow(&mut self) {
        let n = self.slots.len() * 2;
        let slots = std::mem::replace(&mut self.slots, vec![Slot::default(); n]);
        for s in slots {
            if s.tag != 0 {
                let key = Key {
                    group: s.group,
                    set: s.set,
                    task: ((s.tag - 1) >> 1) as u8,
                    write: (s.tag - 1) & 1 != 0,
                };
                let Err(i) = self.find(key, key.hash()) else {
                    unreachable!("keys are unique")
                };
                self.slots[i] = s;
            }
        }
    }

    /// Reads the slot where the probe for a key with this hash starts (bringing it into the
    /// cache).
    #[inline]
    fn touch(&self, hash: u64) -> u64 {
        self.slots[hash as usize & (self.slots.len() - 1)].event
    }

    fn heap_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<Slot>()
    }
}

/// A site at a location: the key of [`PairDetector::sites`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SiteKey {
    addr: u32,
    site: u32,
}

impl Hash for SiteKey {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(mix(u64::from(self.addr) << 32 | u64::from(self.site)));
    }
}

/// Where a site group lives: location index, position in the location, global group id.
#[derive(Clone, Copy, Debug)]
struct GroupRef {
    li: u32,
    gi: u32,
    id: u32,
}

/// A lockset of a site group, with the end of its entries' run in [`SiteGroup::members`].
#[derive(Clone, Copy, Debug)]
struct SetRun {
    mask: u64,
    id: SetId,
    end: u32,
}

/// One site's accesses at a location.
#[derive(Clone, Debug)]
struct SiteGroup {
    site: u32,
    /// Global group id (part of the summary keys).
    id: u32,
    /// Bit `j < 64`: the pair (this site, group `j`'s site) is already recorded for this
    /// location (groups from 64 on: `reported_more`).
    reported: u64,
    /// Intersection of the masks of the group's locksets: with exact masks, locks held by
    /// every entry, so an exact access holding one of them races with none.
    common: u64,
    /// Some entry is a write.
    has_write: bool,
    /// Every lockset of the group has an exact mask.
    all_exact: bool,
    /// The race scan lists: the group's locksets in first-seen order, and `(task, write)` of
    /// each entry, in runs by lockset (first-seen order within a run).
    sets: Vec<SetRun>,
    members: Vec<(u8, bool)>,
    /// Reported bits for the groups from 64 on (bit `j - 64`).
    reported_more: Vec<u64>,
}

impl SiteGroup {
    fn new(site: u32, id: u32) -> Self {
        Self {
            site,
            id,
            reported: 0,
            common: !0,
            has_write: false,
            all_exact: true,
            sets: Vec::new(),
            members: Vec::new(),
            reported_more: Vec::new(),
        }
    }

    /// Is the pair (this site, group `j`'s site) already recorded for this location?
    fn is_reported(&self, j: usize) -> bool {
        if j < 64 {
            self.reported & (1 << j) != 0
        } else {
            self.reported_more
                .get((j - 64) / 64)
                .is_some_and(|w| w & (1 << (j % 64)) != 0)
        }
    }

    /// Records that the pair (this site, group `j`'s site) is recorded for this location.
    fn set_reported(&mut self, j: usize) {
        if j < 64 {
            self.reported |= 1 << j;
        } else {
            let w = (j - 64) / 64;
            if self.reported_more.len() <= w {
                self.reported_more.resize(w + 1, 0);
            }
            self.reported_more[w] |= 1 << (j % 64);
        }
    }

    /// Appends a new key `(set, task, write)` to its lockset's run (a new lockset starts a
    /// new run).
    fn add_member(&mut self, (set, mask, exact): (SetId, u64, bool), task: u8, write: bool) {
        let k = match self.sets.iter().position(|r| r.id == set) {
            Some(k) => k,
            None => {
                self.sets.push(SetRun {
                    mask,
                    id: set,
                    end: self.members.len() as u32,
                });
                self.all_exact &= exact;
                self.common &= mask;
                self.sets.len() - 1
            }
        };
        self.members
            .insert(self.sets[k].end as usize, (task, write));
        for r in &mut self.sets[k..] {
            r.end += 1;
        }
    }
}

/// Per-location state.
#[derive(Clone, Debug)]
struct Location {
    addr: u32,
    /// Bit `j < 64`: group `j` has a write (a read only needs to look at those).
    writers: u64,
    groups: Vec<SiteGroup>,
}

/// An access, resolved against everything but the summary: its location and site group,
/// the task's lockset (id, mask, exact) and own clock, and its summary key.
#[derive(Clone, Copy, Debug)]
struct Access {
    idx: u64,
    t: u8,
    site: u32,
    write: bool,
    set: (SetId, u64, bool),
    clock: u32,
    li: usize,
    gi: usize,
    key: Key,
    hash: u64,
}

/// Most accesses [`PairDetector::feed`] resolves before probing the summary for them.
const BATCH: usize = 32;

/// Streaming pair detector: hybrid (`HB = true`) or precise lockset (`HB = false`).
#[derive(Clone, Debug)]
pub struct PairDetector<const HB: bool> {
    clocks: Clocks,
    locks: LockState,
    /// Location address → index in `locations`.
    index: FxHashMap<u32, u32>,
    /// (location, site) → its site group.
    sites: FxHashMap<SiteKey, GroupRef>,
    locations: Vec<Location>,
    summary: Summary,
    pairs: PairSet,
    next: u64,
}

/// The hybrid detector.
pub type HybridDetector = PairDetector<true>;

impl<const HB: bool> Default for PairDetector<HB> {
    fn default() -> Self {
        Self::new()
    }
}

fn kind(write: bool) -> AccessKind {
    if write {
        AccessKind::Write
    } else {
        AccessKind::Read
    }
}

/// The indices of the set bits of `m`, in increasing order.
fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        let j = m.trailing_zeros() as usize;
        m &= m.wrapping_sub(1);
        (j < 64).then_some(j)
    })
}

impl<const HB: bool> PairDetector<HB> {
    /// A detector that has seen no event.
    pub fn new() -> Self {
        Self {
            clocks: Clocks::new(Edges::Relaxed),
            locks: LockState::with_masks(),
            index: FxHashMap::default(),
            sites: FxHashMap::default(),
            locations: Vec::new(),
            summary: Summary::new(),
            pairs: PairSet::default(),
            next: 0,
        }
    }

    /// Feeds the next event of the trace (its index is the number of events fed before).
    #[inline]
    pub fn on_event(&mut self, ev: &Event) {
        let idx = self.next;
        self.next += 1;
        match *ev {
            Event::Read { t, s, a } => {
                let a = self.resolve(idx, t, s, a, false);
                self.check(a);
            }
            Event::Write { t, s, a } | Event::Update { t, s, a } => {
                let a = self.resolve(idx, t, s, a, true);
                self.check(a);
            }
            _ => self.sync(ev),
        }
    }

    /// Feeds every event of `trace`, like [`PairDetector::on_event`] on each in turn.
    ///
    /// Faster on long traces: checking accesses one at a time waits for one summary cache
    /// miss after another. Here up to [`BATCH`] accesses are resolved first (locksets,
    /// clocks, site group, key: small state), the summary slots where their probes start are
    /// read in one tight loop, whose misses the CPU overlaps, and then they are checked in
    /// order. A batch ends before any event that changes vector clocks, so each check sees
    /// the clocks of its access; lock events only change locksets, already resolved.
    pub fn feed(&mut self, trace: &[Event]) {
        let mut batch: Vec<Access> = Vec::with_capacity(BATCH);
        for ev in trace {
            let idx = self.next;
            self.next += 1;
            match *ev {
                Event::Read { t, s, a } => batch.push(self.resolve(idx, t, s, a, false)),
                Event::Write { t, s, a } | Event::Update { t, s, a } => {
                    batch.push(self.resolve(idx, t, s, a, true));
                }
                Event::Spawn { .. }
                | Event::Join { .. }
                | Event::Signal { .. }
                | Event::Wait { .. }
                | Event::TaskExit { .. }
                | Event::AtomicLoad { .. }
                | Event::AtomicStore { .. }
                | Event::AtomicRmw { .. }
                | Event::CasFailed { .. }
                | Event::IrqRequest { .. }
                | Event::IrqEnter { .. }
                | Event::IrqMask { .. }
                    if HB =>
                {
                    self.check_batch(&mut batch);
                    self.sync(ev);
                }
                _ => self.sync(ev),
            }
            if batch.len() == BATCH {
                self.check_batch(&mut batch);
            }
        }
        self.check_batch(&mut batch);
    }

    /// Checks the batched accesses in order, after reading, for all of them, the summary
    /// slot where their probe starts and their group's flags: independent loads, so their
    /// cache misses overlap (`black_box` keeps the otherwise unused reads).
    fn check_batch(&mut self, batch: &mut Vec<Access>) {
        let touched = batch.iter().fold(0, |x, a| {
            let loc = &self.locations[a.li];
            x ^ self.summary.touch(a.hash) ^ loc.writers ^ loc.groups[a.gi].reported
        });
        std::hint::black_box(touched);
        for a in batch.drain(..) {
            self.check(a);
        }
    }

    /// A synchronisation event: locksets, and vector clocks for the hybrid detector. Atomic
    /// accesses are synchronisation only here (never races among themselves; the mixed
    /// atomic/plain check is [`crate::mixed`]); interrupt masks and handler entries change
    /// locksets ([`LockState::with_masks`]).
    #[inline]
    fn sync(&mut self, ev: &Event) {
        match *ev {
            Event::Acquire { .. }
            | Event::Release { .. }
            | Event::CsEnter { .. }
            | Event::CsExit { .. }
            | Event::PrioMask { .. }
            | Event::IrqExit { .. } => {
                self.locks.on_event(ev);
            }
            Event::TaskExit { .. } | Event::IrqEnter { .. } | Event::IrqMask { .. } => {
                self.locks.on_event(ev);
                if HB {
                    self.clocks.on_event(ev);
                }
            }
            Event::Spawn { .. }
            | Event::Join { .. }
            | Event::Signal { .. }
            | Event::Wait { .. }
            | Event::AtomicLoad { .. }
            | Event::AtomicStore { .. }
            | Event::AtomicRmw { .. }
            | Event::CasFailed { .. }
            | Event::IrqRequest { .. }
                if HB =>
            {
                self.clocks.on_event(ev);
            }
            _ => {}
        }
    }

    /// Resolves an access: its site group (interned on first sight), the task's lockset and
    /// own clock, and its summary key.
    #[inline(always)]
    fn resolve(&mut self, idx: u64, t: u8, site: u32, addr: u32, write: bool) -> Access {
        let g = match self.sites.get(&SiteKey { addr, site }) {
            Some(&g) => g,
            None => self.new_group(addr, site),
        };
        let tl = self.locks.task(t);
        let set = (tl.set, tl.mask, tl.exact);
        let clock = if HB { self.clocks.clock(t).get(t) } else { 1 };
        let key = Key {
            group: g.id,
            set: set.0,
            task: t,
            write,
        };
        Access {
            idx,
            t,
            site,
            write,
            set,
            clock,
            li: g.li as usize,
            gi: g.gi as usize,
            key,
            hash: key.hash(),
        }
    }

    #[cold]
    #[inline(never)]
    fn new_group(&mut self, addr: u32, site: u32) -> GroupRef {
        let next_loc = self.locations.len() as u32;
        let li = *self.index.entry(addr).or_insert(next_loc);
        if li == next_loc {
            self.locations.push(Location {
                addr,
                writers: 0,
                groups: Vec::new(),
            });
        }
        let groups = &mut self.locations[li as usize].groups;
        let g = GroupRef {
            li,
            gi: groups.len() as u32,
            id: self.sites.len() as u32,
        };
        groups.push(SiteGroup::new(site, g.id));
        self.sites.insert(SiteKey { addr, site }, g);
        g
    }

    /// Checks a resolved access against the summary and records it there.
    #[inline(always)]
    fn check(&mut self, a: Access) {
        // Update this key's entry first: the race scan below skips the access's own task,
        // so it cannot see the difference.
        let loc = &mut self.locations[a.li];
        match self.summary.find(a.key, a.hash) {
            Ok(i) if self.summary.slots[i].clock == a.clock => return, // same epoch (module doc)
            Ok(i) => self.summary.set(i, a.clock, a.idx),
            Err(i) => {
                self.summary.insert(i, a.key, a.clock, a.idx);
                loc.groups[a.gi].add_member(a.set, a.t, a.write);
            }
        }
        if a.write {
            loc.groups[a.gi].has_write = true;
            if a.gi < 64 {
                loc.writers |= 1 << a.gi;
            }
        }

        // Site groups whose pair with this site is not yet recorded here and may race (a
        // write on one side, no lock common to all their entries and this access). The
        // first 64 groups are filtered with bit masks: usually none is left.
        let n = loc.groups.len();
        let low = if n >= 64 { !0 } else { (1 << n) - 1 };
        let open = (if a.write { low } else { loc.writers }) & !loc.groups[a.gi].reported;
        for gj in bits(open).chain(64..n) {
            let loc = &self.locations[a.li];
            let other = &loc.groups[gj];
            if loc.groups[a.gi].is_reported(gj)
                || (!a.write && !other.has_write)
                || (a.set.2 && other.all_exact && a.set.1 & other.common != 0)
            {
                continue;
            }
            self.check_pair(gj, a);
        }
    }

    /// Looks for an entry of group `gj` racing with access `a` and records the pair if
    /// there is one.
    #[inline(never)]
    fn check_pair(&mut self, gj: usize, a: Access) {
        let vc = if HB {
            Some(self.clocks.clock(a.t))
        } else {
            None
        };
        let loc = &mut self.locations[a.li];
        let other = &loc.groups[gj];
        let Some((task, write, event)) = first_racing(other, &self.summary, &self.locks, a, vc)
        else {
            return;
        };
        self.pairs.record(
            RaceAccess {
                site: other.site,
                task,
                kind: kind(write),
                event,
            },
            RaceAccess {
                site: a.site,
                task: a.t,
                kind: kind(a.write),
                event: a.idx,
            },
            loc.addr,
        );
        loc.groups[a.gi].set_reported(gj);
        loc.groups[gj].set_reported(a.gi);
    }

    /// The racing site pairs found so far, sorted by site pair.
    pub fn pairs(&self) -> Vec<RacePair> {
        self.pairs.sorted()
    }

    /// The racing site pairs, sorted by site pair.
    pub fn finish(self) -> Vec<RacePair> {
        self.pairs.into_sorted()
    }

    /// Distinct locations seen.
    pub fn location_count(&self) -> usize {
        self.locations.len()
    }

    /// Summary entries kept (one per location and key `(task, site, kind, lockset)`).
    pub fn entry_count(&self) -> usize {
        self.summary.len
    }

    /// Approximate heap bytes of the detector state (clocks, locksets, per-location
    /// summaries, results).
    pub fn state_bytes(&self) -> usize {
        let groups: usize = self
            .locations
            .iter()
            .map(|l| {
                l.groups.capacity() * size_of::<SiteGroup>()
                    + l.groups
                        .iter()
                        .map(|g| {
                            g.sets.capacity() * size_of::<SetRun>()
                                + g.members.capacity() * 2
                                + g.reported_more.capacity() * 8
                        })
                        .sum::<usize>()
            })
            .sum();
        self.clocks.heap_bytes()
            + self.locks.heap_bytes()
            + self.index.capacity() * (8 + 1)
            + self.sites.capacity() * (size_of::<(SiteKey, GroupRef)>() + 1)
            + self.locations.capacity() * size_of::<Location>()
            + groups
            + self.summary.heap_bytes()
            + self.pairs.heap_bytes()
    }
}

/// The first entry of `group` (locksets, then entries, in first-seen order) that races with
/// access `a`: another task, a write involved, disjoint locksets and, with `vc` (the
/// access's clock), not ordered before the access. Returns its task, kind and event.
fn first_racing(
    group: &SiteGroup,
    summary: &Summary,
    locks: &LockState,
    a: Access,
    vc: Option<&VectorClock>,
) -> Option<(u8, bool, u64)> {
    let mut start = 0;
    for r in &group.sets {
        let run = &group.members[start..r.end as usize];
        start = r.end as usize;
        if r.mask & a.set.1 != 0 && !locks.disjoint(a.set, (r.id, r.mask, locks.set(r.id).exact)) {
            continue;
        }
        for &(task, write) in run {
            if task == a.t || !(write || a.write) {
                continue;
            }
            let key = Key {
                group: group.id,
                set: r.id,
                task,
                write,
            };
            let (clock, event) = summary.get(key).expect("scan lists only known keys");
            // e ≺ current  ⇔  c_e ≤ C_t[t_e]
            if vc.is_some_and(|vc| clock <= vc.get(task)) {
                continue;
            }
            return Some((task, write, event));
        }
    }
    None
}

/// Hybrid race detection over a whole trace: the racing site pairs, sorted.
pub fn detect(trace: &[Event]) -> Vec<RacePair> {
    let mut d = HybridDetector::new();
    d.feed(trace);
    d.finish()
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::vc::CS_LOCK;

    /// A deterministic pseudo-random trace (not necessarily well formed: releases of locks
    /// not held, waits without signals, re-entrant acquires all occur).
    fn trace(
        seed: u64,
        n: usize,
        tasks: u32,
        locations: u32,
        sites: u32,
        locks: u32,
    ) -> Vec<Event> {
        let mut x = seed;
        let mut next = move |n: u32| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            (mix(x) % u64::from(n)) as u32
        };
        let mut trace = Vec::with_capacity(n);
        while trace.len() < n {
            let t = next(tasks) as u8;
            let (s, a) = (next(sites), next(locations));
            let l = 1000 + next(locks);
            trace.push(match next(24) {
                0..=6 => Event::Read { t, s, a },
                7..=9 => Event::Write { t, s, a },
                10 => Event::Update { t, s, a },
                11..=13 => Event::Acquire { t, s, l, c: 0 },
                14..=16 => Event::Release { t, s, l },
                17 => Event::CsEnter { t },
                18 => Event::CsExit { t },
                19 => Event::Signal { t, s, g: next(2) },
                20 => Event::Wait { t, s, g: next(2) },
                21 => Event::Spawn {
                    t,
                    child: next(tasks) as u8,
                    s,
                },
                22 => Event::Join {
                    t,
                    child: next(tasks) as u8,
                    s,
                },
                _ => Event::TaskExit { t },
            });
        }
        trace
    }

    /// The racing site pairs by brute force over every pair of accesses: another task, a
    /// write, disjoint locksets, and (with `hb`) neither ordered before the other.
    fn oracle(trace: &[Event], hb: bool) -> BTreeSet<(u32, u32)> {
        let mut clocks = Clocks::new(Edges::Relaxed);
        let mut held: BTreeMap<u8, BTreeMap<u32, u32>> = BTreeMap::new();
        let mut accesses = Vec::new();
        for ev in trace {
            let (t, l, add) = match *ev {
                Event::Read { t, s, a } | Event::Write { t, s, a } | Event::Update { t, s, a } => {
                    let write = !matches!(ev, Event::Read { .. });
                    let locks: BTreeSet<u32> = held
                        .get(&t)
                        .into_iter()
                        .flat_map(|h| h.keys().copied())
                        .collect();
                    let vc = clocks.clock(t).clone();
                    accesses.push((t, s, a, write, locks, vc));
                    continue;
                }
                Event::Acquire { t, l, .. } => (t, l, true),
                Event::Release { t, l, .. } => (t, l, false),
                Event::CsEnter { t } => (t, CS_LOCK, true),
                Event::CsExit { t } => (t, CS_LOCK, false),
                Event::TaskExit { t } => {
                    held.remove(&t);
                    continue;
                }
                _ => {
                    clocks.on_event(ev);
                    continue;
                }
            };
            let counts = held.entry(t).or_default();
            if add {
                *counts.entry(l).or_default() += 1;
            } else if let Some(c) = counts.get_mut(&l) {
                *c -= 1;
                if *c == 0 {
                    counts.remove(&l);
                }
            }
        }
        let mut pairs = BTreeSet::new();
        for (i, x) in accesses.iter().enumerate() {
            for y in &accesses[i + 1..] {
                // x ≺ y ⇔ x's epoch is at most y's clock for x's task.
                let ordered = hb && x.5.get(x.0) <= y.5.get(x.0);
                if x.0 != y.0 && x.2 == y.2 && (x.3 || y.3) && x.4.is_disjoint(&y.4) && !ordered {
                    pairs.insert((x.1.min(y.1), x.1.max(y.1)));
                }
            }
        }
        pairs
    }

    fn sites(p: &[RacePair]) -> BTreeSet<(u32, u32)> {
        p.iter().map(RacePair::sites).collect()
    }

    /// Exact for site pairs, also with more than 64 sites at a location and more than 64
    /// locks (inexact masks); `feed` (batched, whole or in pieces) equals `on_event`.
    #[test]
    fn exact_and_feed_equals_on_event() {
        let mut nonempty = 0;
        for seed in 0..60 {
            let (sites_n, locks_n) = if seed % 2 == 0 { (90, 80) } else { (6, 4) };
            let t = trace(
                seed,
                600,
                2 + seed as u32 % 5,
                1 + seed as u32 % 3,
                sites_n,
                locks_n,
            );
            let mut one = HybridDetector::new();
            for ev in &t {
                one.on_event(ev);
            }
            let one = one.finish();
            let mut pieces = HybridDetector::new();
            for piece in t.chunks(1 + seed as usize % 50) {
                pieces.feed(piece);
            }
            assert_eq!(detect(&t), one, "seed {seed}");
            assert_eq!(pieces.finish(), one, "seed {seed}");
            assert_eq!(sites(&one), oracle(&t, true), "seed {seed}");
            let mut precise = PairDetector::<false>::new();
            precise.feed(&t);
            assert_eq!(sites(&precise.finish()), oracle(&t, false), "seed {seed}");
            nonempty += usize::from(!one.is_empty());
        }
        assert!(nonempty > 40, "{nonempty}");
    }
}
