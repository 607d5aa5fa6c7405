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
//! 2 × locksets per location, and independent of trace length.
//!
//! Entries are grouped by site, then by lockset. Once a site pair is recorded for a
//! location, the pair's groups are never compared again there (the output is per site pair,
//! with the location set and the first witness), and a lockset group that shares a lock
//! with the access is skipped without looking at its entries: well-locked and already
//! reported accesses cost a few mask tests.
//!
//! [`PairDetector`] with `HB = false` is the slides' *precise lockset* check (the same
//! condition without the happens-before test), see [`crate::lockset::precise`].

use jostle_kernel::event::Event;

use crate::hash::FxHashMap;
use crate::locks::{LockState, SetId};
use crate::race::{AccessKind, PairSet, RaceAccess, RacePair};
use crate::vc::{Clocks, Edges};

/// The latest access of one key `(task, site, kind, lockset)` at a location.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Event index of the latest access with this key.
    event: u64,
    /// The task's own clock at that access (its epoch).
    clock: u32,
    task: u8,
    write: bool,
}

/// The entries of one site at a location, grouped by lockset (parallel arrays: the scans
/// touch only the ids or masks).
#[derive(Clone, Debug)]
struct SiteGroup {
    site: u32,
    /// Some entry is a write.
    has_write: bool,
    /// Every lockset of the group has an exact mask.
    all_exact: bool,
    /// Bit `j`: the pair (this site, group `j`'s site) is already recorded for this location.
    reported: Vec<u64>,
    /// Lockset id of each set group.
    set_ids: Vec<SetId>,
    /// Lockset mask of each set group.
    masks: Vec<u64>,
    /// Entries of each set group.
    entries: Vec<Vec<Entry>>,
}

impl SiteGroup {
    #[inline]
    fn is_reported(&self, j: usize) -> bool {
        self.reported
            .get(j / 64)
            .is_some_and(|w| w & (1 << (j % 64)) != 0)
    }

    fn set_reported(&mut self, j: usize) {
        if self.reported.len() <= j / 64 {
            self.reported.resize(j / 64 + 1, 0);
        }
        self.reported[j / 64] |= 1 << (j % 64);
    }
}

/// Per-location state.
#[derive(Clone, Debug)]
struct Location {
    addr: u32,
    groups: Vec<SiteGroup>,
}

/// Streaming pair detector: hybrid (`HB = true`) or precise lockset (`HB = false`).
#[derive(Clone, Debug)]
pub struct PairDetector<const HB: bool> {
    clocks: Clocks,
    locks: LockState,
    index: FxHashMap<u32, u32>,
    locations: Vec<Location>,
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

impl<const HB: bool> PairDetector<HB> {
    /// A detector that has seen no event.
    pub fn new() -> Self {
        Self {
            clocks: Clocks::new(Edges::Relaxed),
            locks: LockState::new(),
            index: FxHashMap::default(),
            locations: Vec::new(),
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
            Event::Read { t, s, a } => self.access(idx, t, s, a, false),
            Event::Write { t, s, a } | Event::Update { t, s, a } => self.access(idx, t, s, a, true),
            Event::Acquire { .. }
            | Event::Release { .. }
            | Event::CsEnter { .. }
            | Event::CsExit { .. } => {
                self.locks.on_event(ev);
            }
            Event::TaskExit { .. } => {
                self.locks.on_event(ev);
                if HB {
                    self.clocks.on_event(ev);
                }
            }
            Event::Spawn { .. }
            | Event::Join { .. }
            | Event::Signal { .. }
            | Event::Wait { .. }
                if HB =>
            {
                self.clocks.on_event(ev);
            }
            _ => {}
        }
    }

    /// Feeds every event of `trace`.
    pub fn feed(&mut self, trace: &[Event]) {
        for ev in trace {
            self.on_event(ev);
        }
    }

    #[inline]
    fn access(&mut self, idx: u64, t: u8, site: u32, addr: u32, write: bool) {
        let next_loc = self.locations.len() as u32;
        let li = *self.index.entry(addr).or_insert(next_loc);
        if li == next_loc {
            self.locations.push(Location {
                addr,
                groups: Vec::new(),
            });
        }
        let tl = self.locks.task(t);
        let (set, mask, exact) = (tl.set, tl.mask, tl.exact);
        let (clock, vc) = if HB {
            let vc = self.clocks.clock(t);
            (vc.get(t), Some(vc))
        } else {
            (1, None)
        };
        let loc = &mut self.locations[li as usize];
        let groups = &mut loc.groups;

        // This key's group, set group and entry; same epoch ⇒ nothing new (module doc).
        let gi = match groups.iter().position(|g| g.site == site) {
            Some(gi) => gi,
            None => {
                groups.push(SiteGroup {
                    site,
                    has_write: false,
                    all_exact: true,
                    reported: Vec::new(),
                    set_ids: Vec::new(),
                    masks: Vec::new(),
                    entries: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let si = groups[gi].set_ids.iter().position(|&s| s == set);
        let ei = si.and_then(|si| {
            groups[gi].entries[si]
                .iter()
                .position(|e| e.task == t && e.write == write)
        });
        if let (Some(si), Some(ei)) = (si, ei)
            && groups[gi].entries[si][ei].clock == clock
        {
            return;
        }

        // Site groups whose pair with this site is not yet recorded here: look for one
        // racing entry (another task, a write involved, disjoint locksets, concurrent).
        for gj in 0..groups.len() {
            if groups[gi].is_reported(gj) {
                continue;
            }
            let other = &groups[gj];
            if !write && !other.has_write {
                continue;
            }
            let mut found = None;
            'sets: for (k, &m) in other.masks.iter().enumerate() {
                let disjoint = if m & mask == 0 {
                    true
                } else if exact && other.all_exact {
                    false
                } else {
                    let ks = other.set_ids[k];
                    let ke = self.locks.set(ks).exact;
                    self.locks.disjoint((set, mask, exact), (ks, m, ke))
                };
                if !disjoint {
                    continue;
                }
                for e in &other.entries[k] {
                    if e.task == t || !(write || e.write) {
                        continue;
                    }
                    if let Some(vc) = vc {
                        // e ≺ current  ⇔  c_e ≤ C_t[t_e]
                        if e.clock <= vc.get(e.task) {
                            continue;
                        }
                    }
                    found = Some(*e);
                    break 'sets;
                }
            }
            if let Some(e) = found {
                self.pairs.record(
                    RaceAccess {
                        site: other.site,
                        task: e.task,
                        kind: kind(e.write),
                        event: e.event,
                    },
                    RaceAccess {
                        site,
                        task: t,
                        kind: kind(write),
                        event: idx,
                    },
                    loc.addr,
                );
                groups[gi].set_reported(gj);
                groups[gj].set_reported(gi);
            }
        }

        let g = &mut groups[gi];
        g.has_write |= write;
        let si = si.unwrap_or_else(|| {
            g.set_ids.push(set);
            g.masks.push(mask);
            g.entries.push(Vec::new());
            g.all_exact &= exact;
            g.set_ids.len() - 1
        });
        let entries = &mut g.entries[si];
        match ei {
            Some(ei) => {
                entries[ei].clock = clock;
                entries[ei].event = idx;
            }
            None => entries.push(Entry {
                event: idx,
                clock,
                task: t,
                write,
            }),
        }
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
        self.locations
            .iter()
            .flat_map(|l| &l.groups)
            .flat_map(|g| &g.entries)
            .map(Vec::len)
            .sum()
    }

    /// Approximate heap bytes of the detector state (clocks, locksets, per-location
    /// summaries, results).
    pub fn state_bytes(&self) -> usize {
        let summaries: usize = self
            .locations
            .iter()
            .map(|l| {
                l.groups.capacity() * size_of::<SiteGroup>()
                    + l.groups
                        .iter()
                        .map(|g| {
                            g.reported.capacity() * 8
                                + g.set_ids.capacity() * 4
                                + g.masks.capacity() * 8
                                + g.entries.capacity() * size_of::<Vec<Entry>>()
                                + g.entries
                                    .iter()
                                    .map(|e| e.capacity() * size_of::<Entry>())
                                    .sum::<usize>()
                        })
                        .sum::<usize>()
            })
            .sum();
        self.clocks.heap_bytes()
            + self.locks.heap_bytes()
            + self.index.capacity() * 8
            + self.locations.capacity() * size_of::<Location>()
            + summaries
            + self.pairs.heap_bytes()
    }
}

/// Hybrid race detection over a whole trace: the racing site pairs, sorted.
pub fn detect(trace: &[Event]) -> Vec<RacePair> {
    let mut d = HybridDetector::new();
    d.feed(trace);
    d.finish()
}
