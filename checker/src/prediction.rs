//! The one output of the checker: candidate bugs with their breakpoint sites, and
//! may-trigger relations. Its JSON schema is documented in the crate's README.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use jostle_kernel::event::Event;

use crate::access_atomicity::{AccessPattern, AccessTriple};
use crate::atomicity::AtomicityCandidate;
use crate::drfinder::MayTrigger;
use crate::hash::fnv1a64;
use crate::igoodlock::{DeadlockComponent, DeadlockCycle, LockRef};
use crate::options::Options;
use crate::race::RacePair;

/// The version of the JSON schema below; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Witnesses and deadlock cycles kept per candidate (the smallest, so merging stays
/// order-independent).
pub const MAX_WITNESSES: usize = 8;

/// The kind of a candidate bug.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CandidateKind {
    /// A data race between two sites (RaceFuzzer confirms it).
    Race,
    /// An atomicity-violation pattern (AtomFuzzer confirms it).
    Atomicity,
    /// A lock-order cycle (DeadlockFuzzer confirms it).
    Deadlock,
    /// A single-variable atomicity violation: an unserializable interleaving of three
    /// accesses to one location ([`crate::access_atomicity`]).
    AccessAtomicity,
}

impl CandidateKind {
    /// The name used in JSON and in the id hash.
    pub fn name(self) -> &'static str {
        match self {
            CandidateKind::Race => "race",
            CandidateKind::Atomicity => "atomicity",
            CandidateKind::Deadlock => "deadlock",
            CandidateKind::AccessAtomicity => "access_atomicity",
        }
    }
}

/// The analysis that predicted (or corroborated) a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Analysis {
    /// Hybrid race detection.
    Hybrid,
    /// Precise happens-before race detection (the race happened in the trace).
    HappensBefore,
    /// Precise lockset race detection.
    PreciseLockset,
    /// Eraser warned about one of the candidate's locations.
    Eraser,
    /// AtomFuzzer pattern in an annotated atomic block.
    AtomicityPattern,
    /// AtomFuzzer pattern in a block from the Atomizer heuristic.
    AtomizerHeuristic,
    /// iGoodlock.
    Igoodlock,
    /// A plain access and an atomic access of one location, concurrent and not commonly
    /// locked ([`crate::mixed`]).
    MixedAtomic,
    /// The single-variable atomicity analysis ([`crate::access_atomicity`]).
    AccessAtomicity,
}

/// Event indices of one trace that witness a candidate.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Witness {
    /// [`Options::trace_id`] of the trace.
    pub trace: u32,
    /// Event indices in that trace (race: the two accesses; atomicity: block entry, first
    /// acquire, re-acquire; deadlock: each component's acquire; access atomicity: `a1`,
    /// `a2`, `a3`).
    pub events: Vec<u64>,
}

/// The roles of an atomicity candidate's sites.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AtomicityPattern {
    /// Site of the atomic block.
    pub block: u32,
    /// The lock re-acquired.
    pub lock: LockRef,
    /// Site of the first acquire in the block.
    pub first_acquire: u32,
    /// Site of the re-acquire.
    pub reacquire: u32,
}

/// The roles of an access-atomicity candidate's sites: `context`'s consecutive accesses at
/// `first` and `second` to `location`, `remote_context`'s access at `remote` in between.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TripleEvidence {
    /// Site of `a1`.
    pub first: u32,
    /// Site of the remote access `a2`.
    pub remote: u32,
    /// Site of `a3`.
    pub second: u32,
    /// The location.
    pub location: u32,
    /// The kinds of `a1`, `a2`, `a3`: `"RWR"`, `"WWR"`, `"RWW"` or `"WRW"`.
    pub kinds: AccessPattern,
    /// The context of `a2`.
    pub remote_context: u8,
    /// The context of `a1` and `a3`.
    pub context: u8,
    /// A more urgent handler's source to fire first: it undoes the context's mask of the
    /// remote handler's source ([`AccessTriple::unmasker`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmasker: Option<u8>,
}

/// One deadlock cycle as seen in one trace.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CycleEvidence {
    /// [`Options::trace_id`] of the trace.
    pub trace: u32,
    /// The components, in cycle order (what DeadlockFuzzer needs to target it).
    pub components: Vec<DeadlockComponent>,
}

/// Why a candidate is believed: sets that merging unions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// Analyses that reported it.
    pub analyses: BTreeSet<Analysis>,
    /// Tasks involved.
    pub tasks: BTreeSet<u8>,
    /// Memory locations (races).
    pub locations: BTreeSet<u32>,
    /// Locks involved (atomicity: the re-acquired lock; deadlock: held and wanted locks).
    pub locks: BTreeSet<LockRef>,
    /// Witnessing events (at most [`MAX_WITNESSES`], the smallest).
    pub witnesses: BTreeSet<Witness>,
    /// Atomicity: the site roles.
    pub patterns: BTreeSet<AtomicityPattern>,
    /// Deadlock: the cycles (at most [`MAX_WITNESSES`], the smallest).
    pub cycles: BTreeSet<CycleEvidence>,
    /// Access atomicity: the site roles (at most [`MAX_WITNESSES`], the smallest). Absent in
    /// older files.
    #[serde(default)]
    pub triples: BTreeSet<TripleEvidence>,
    /// Races: (site, context) of each side in the witnesses, so that a side a handler
    /// holds can be fired there (`context` ≥ `IRQ_CONTEXT`). Absent in older files.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub site_contexts: BTreeSet<(u32, u8)>,
    /// Atomicity: acquire sites where another task takes the lock the block releases (the
    /// interleavers AtomFuzzer holds back until the block pauses). Absent in older files.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub interleavers: BTreeSet<u32>,
    /// Races of two sites that only write: the values they wrote in the traces, at most two
    /// kept ([`crate::redundant`]); one value makes the race redundant
    /// ([`Candidate::redundant_writes`]). Absent in older files.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub written_values: BTreeSet<u32>,
}

impl Evidence {
    /// Unions `other` into `self`.
    pub fn merge(&mut self, other: Evidence) {
        self.analyses.extend(other.analyses);
        self.tasks.extend(other.tasks);
        self.locations.extend(other.locations);
        self.locks.extend(other.locks);
        self.witnesses.extend(other.witnesses);
        self.patterns.extend(other.patterns);
        self.cycles.extend(other.cycles);
        self.triples.extend(other.triples);
        self.site_contexts.extend(other.site_contexts);
        self.interleavers.extend(other.interleavers);
        self.written_values.extend(other.written_values);
        while self.written_values.len() > crate::redundant::KEEP {
            self.written_values.pop_last();
        }
        cap(&mut self.witnesses);
        cap(&mut self.cycles);
        cap(&mut self.triples);
    }
}

fn cap<T: Ord + Clone>(set: &mut BTreeSet<T>) {
    if set.len() > MAX_WITNESSES {
        let keep = set.iter().nth(MAX_WITNESSES).cloned();
        if let Some(k) = keep {
            set.split_off(&k);
        }
    }
}

/// A candidate bug.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// Race, atomicity, deadlock or access atomicity.
    pub kind: CandidateKind,
    /// Stable id: FNV-1a 64 of the kind and `sites`, as 16 hex digits (see [`candidate_id`]
    /// and, for access atomicity, [`ordered_candidate_id`]).
    pub id: String,
    /// The site identities the id hashes: sorted (a multiset), except for access atomicity,
    /// whose `a1`, `a2`, `a3` keep their order.
    pub sites: Vec<u32>,
    /// Sites where the active strategy pauses tasks, sorted, deduplicated.
    pub breakpoints: Vec<u32>,
    /// Why.
    pub evidence: Evidence,
}

/// The stable id of a candidate: FNV-1a 64 over the kind's name, a zero byte, then each site
/// of the sorted `sites` as 4 little-endian bytes; rendered as 16 lowercase hex digits.
pub fn candidate_id(kind: CandidateKind, sites: &[u32]) -> String {
    let mut sorted = sites.to_vec();
    sorted.sort_unstable();
    ordered_candidate_id(kind, &sorted)
}

/// As [`candidate_id`], over `sites` in the order given (an access-atomicity candidate's
/// `a1`, `a2`, `a3`: its sites in another order are another candidate).
pub fn ordered_candidate_id(kind: CandidateKind, sites: &[u32]) -> String {
    let mut bytes = Vec::with_capacity(kind.name().len() + 1 + 4 * sites.len());
    bytes.extend_from_slice(kind.name().as_bytes());
    bytes.push(0);
    for s in sites {
        bytes.extend_from_slice(&s.to_le_bytes());
    }
    format!("{:016x}", fnv1a64(&bytes))
}

impl Candidate {
    /// A candidate of `kind` identified by `sites`, pausing at `breakpoints`.
    pub fn new(
        kind: CandidateKind,
        sites: &[u32],
        breakpoints: &[u32],
        evidence: Evidence,
    ) -> Self {
        let mut sites = sites.to_vec();
        sites.sort_unstable();
        let mut breakpoints = breakpoints.to_vec();
        breakpoints.sort_unstable();
        breakpoints.dedup();
        Self {
            kind,
            id: candidate_id(kind, &sites),
            sites,
            breakpoints,
            evidence,
        }
    }

    /// A race candidate from a racing pair found by `analysis`.
    pub fn from_race(pair: &RacePair, analysis: Analysis, trace: u32) -> Self {
        let (a, b) = pair.sites();
        Self::new(
            CandidateKind::Race,
            &[a, b],
            &[a, b],
            Evidence {
                analyses: [analysis].into(),
                tasks: [pair.first.task, pair.second.task].into(),
                site_contexts: [(a, pair.first.task), (b, pair.second.task)].into(),
                locations: pair.locations.iter().copied().collect(),
                witnesses: [Witness {
                    trace,
                    events: vec![pair.first.event, pair.second.event],
                }]
                .into(),
                ..Evidence::default()
            },
        )
    }

    /// A race of two sites that only write and that wrote one same value in every trace
    /// that showed their values: either order leaves memory the same, so it is most likely
    /// benign ([`crate::redundant`]).
    pub fn redundant_writes(&self) -> bool {
        self.kind == CandidateKind::Race && self.evidence.written_values.len() == 1
    }

    /// An atomicity candidate.
    pub fn from_atomicity(c: &AtomicityCandidate, trace: u32) -> Self {
        let lock = LockRef {
            id: c.lock,
            class: c.class,
        };
        let analysis = if c.heuristic {
            Analysis::AtomizerHeuristic
        } else {
            Analysis::AtomicityPattern
        };
        Self::new(
            CandidateKind::Atomicity,
            &[c.block, c.first_acquire, c.reacquire],
            &[c.reacquire],
            Evidence {
                analyses: [analysis].into(),
                tasks: [c.task].into(),
                locks: [lock].into(),
                witnesses: [Witness {
                    trace,
                    events: c.events.to_vec(),
                }]
                .into(),
                patterns: [AtomicityPattern {
                    block: c.block,
                    lock,
                    first_acquire: c.first_acquire,
                    reacquire: c.reacquire,
                }]
                .into(),
                interleavers: c.interleavers.iter().copied().collect(),
                ..Evidence::default()
            },
        )
    }

    /// A deadlock candidate: identified by every component's context sites, pausing at each
    /// component's acquire site.
    pub fn from_cycle(cycle: &DeadlockCycle, trace: u32) -> Self {
        let comps = &cycle.components;
        let sites: Vec<u32> = comps
            .iter()
            .flat_map(|c| c.context.iter().copied())
            .collect();
        let breakpoints: Vec<u32> = comps.iter().map(|c| c.site).collect();
        Self::new(
            CandidateKind::Deadlock,
            &sites,
            &breakpoints,
            Evidence {
                analyses: [Analysis::Igoodlock].into(),
                tasks: comps.iter().map(|c| c.task).collect(),
                locks: comps
                    .iter()
                    .flat_map(|c| c.held.iter().copied().chain([c.wanted]))
                    .collect(),
                witnesses: [Witness {
                    trace,
                    events: comps.iter().map(|c| c.event).collect(),
                }]
                .into(),
                cycles: [CycleEvidence {
                    trace,
                    components: comps.clone(),
                }]
                .into(),
                ..Evidence::default()
            },
        )
    }

    /// An access-atomicity candidate: identified (and its `sites` listed) by the sites of
    /// `a1`, `a2`, `a3` in that order (the same three sites in another order are another
    /// interleaving, confirmed on its own: a lost update `R W W` and a stale read `W W R` of
    /// one loop differ), pausing at each.
    pub fn from_access_triple(t: &AccessTriple, trace: u32) -> Self {
        let sites = [t.first, t.remote, t.second];
        let mut candidate = Self::new(
            CandidateKind::AccessAtomicity,
            &sites,
            &sites,
            Evidence {
                analyses: [Analysis::AccessAtomicity].into(),
                tasks: [t.context, t.remote_context].into(),
                locations: [t.location].into(),
                witnesses: [Witness {
                    trace,
                    events: t.events.to_vec(),
                }]
                .into(),
                triples: [TripleEvidence {
                    first: t.first,
                    remote: t.remote,
                    second: t.second,
                    location: t.location,
                    kinds: t.pattern,
                    remote_context: t.remote_context,
                    context: t.context,
                    unmasker: t.unmasker,
                }]
                .into(),
                ..Evidence::default()
            },
        );
        candidate.id = ordered_candidate_id(CandidateKind::AccessAtomicity, &sites);
        candidate.sites = sites.to_vec();
        candidate
    }

    /// Unions `other` (same id) into `self`.
    fn merge(&mut self, other: Candidate) {
        self.breakpoints.extend(other.breakpoints);
        self.breakpoints.sort_unstable();
        self.breakpoints.dedup();
        // Same id means same sites, barring a 64-bit collision: keep the smaller for determinism.
        if other.sites < self.sites {
            self.sites = other.sites;
        }
        self.evidence.merge(other.evidence);
    }
}

/// Candidates and relations predicted from one or more traces.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prediction {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Candidate bugs, sorted by (kind, id), one per id.
    pub candidates: Vec<Candidate>,
    /// DrFinder may-trigger relations, sorted, deduplicated.
    pub relations: Vec<MayTrigger>,
    /// Where sites are in the source (`file:line:col`), for the sites the host tool could
    /// resolve. The analyses never read it; it lets a prediction file be read without the ELF.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub site_locations: BTreeMap<u32, String>,
    /// The variable or lock each memory location or lock id of a candidate names (`app::Z`,
    /// `app::BUF+4`), for those the host tool found in the ELF's symbols. Like
    /// `site_locations`, for people only.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub location_names: BTreeMap<u32, String>,
    /// Fingerprint of the firmware the site identities belong to (set by the host tool), so
    /// that a prediction is not applied to another image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<String>,
}

impl Default for Prediction {
    fn default() -> Self {
        Self::new()
    }
}

impl Prediction {
    /// An empty prediction.
    pub fn new() -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            candidates: Vec::new(),
            relations: Vec::new(),
            site_locations: BTreeMap::new(),
            location_names: BTreeMap::new(),
            firmware: None,
        }
    }

    /// A prediction from candidates (merged by id) and relations.
    pub fn from_parts(
        candidates: impl IntoIterator<Item = Candidate>,
        relations: impl IntoIterator<Item = MayTrigger>,
    ) -> Self {
        let mut p = Self::new();
        p.absorb(candidates, relations);
        p
    }

    /// Merges `other` into `self`: candidates with the same id become one, their evidence and
    /// breakpoints united; relations are united. The result does not depend on the order in
    /// which predictions are merged.
    pub fn merge(&mut self, other: Prediction) {
        self.schema_version = self.schema_version.max(other.schema_version);
        // On a disagreement keep the smaller, so that merge order never shows.
        for (site, loc) in other.site_locations {
            let entry = self
                .site_locations
                .entry(site)
                .or_insert_with(|| loc.clone());
            if loc < *entry {
                *entry = loc;
            }
        }
        for (id, name) in other.location_names {
            let entry = self
                .location_names
                .entry(id)
                .or_insert_with(|| name.clone());
            if name < *entry {
                *entry = name;
            }
        }
        self.firmware = match (self.firmware.take(), other.firmware) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.absorb(other.candidates, other.relations);
    }

    fn absorb(
        &mut self,
        candidates: impl IntoIterator<Item = Candidate>,
        relations: impl IntoIterator<Item = MayTrigger>,
    ) {
        let mut by_id: BTreeMap<(CandidateKind, String), Candidate> = self
            .candidates
            .drain(..)
            .map(|c| ((c.kind, c.id.clone()), c))
            .collect();
        for c in candidates {
            match by_id.entry((c.kind, c.id.clone())) {
                std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().merge(c),
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(c);
                }
            }
        }
        self.candidates = by_id.into_values().collect();
        let rel: BTreeSet<MayTrigger> = self.relations.drain(..).chain(relations).collect();
        self.relations = rel.into_iter().collect();
    }

    /// The candidate with this id.
    pub fn candidate(&self, id: &str) -> Option<&Candidate> {
        self.candidates.iter().find(|c| c.id == id)
    }

    /// The candidates of one kind.
    pub fn of_kind(&self, kind: CandidateKind) -> impl Iterator<Item = &Candidate> {
        self.candidates.iter().filter(move |c| c.kind == kind)
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a prediction always serialises")
    }

    /// Parses JSON written by [`Prediction::to_json`].
    pub fn from_json(text: &str) -> serde_json::Result<Self> {
        serde_json::from_str(text)
    }
}

/// Runs the analyses selected by `opts` over `trace` and gathers their candidates.
pub fn predict(trace: &[Event], opts: &Options) -> Prediction {
    let trace_id = opts.trace_id;
    let mut candidates = Vec::new();
    let mut races = Vec::new();
    if opts.hybrid {
        races.extend(
            crate::hybrid::detect(trace)
                .iter()
                .map(|p| Candidate::from_race(p, Analysis::Hybrid, trace_id)),
        );
    }
    if opts.happens_before {
        races.extend(
            crate::hb::detect(trace)
                .iter()
                .map(|p| Candidate::from_race(p, Analysis::HappensBefore, trace_id)),
        );
    }
    if opts.precise_lockset {
        races.extend(
            crate::lockset::precise(trace)
                .iter()
                .map(|p| Candidate::from_race(p, Analysis::PreciseLockset, trace_id)),
        );
    }
    if opts.mixed_atomic {
        races.extend(
            crate::mixed::detect(trace)
                .iter()
                .map(|p| Candidate::from_race(p, Analysis::MixedAtomic, trace_id)),
        );
    }
    if opts.eraser && !races.is_empty() {
        let warned: BTreeSet<u32> = crate::lockset::eraser(trace)
            .iter()
            .map(|w| w.location)
            .collect();
        for c in &mut races {
            if c.evidence.locations.iter().any(|l| warned.contains(l)) {
                c.evidence.analyses.insert(Analysis::Eraser);
            }
        }
    }
    if !races.is_empty() {
        let written = crate::redundant::WrittenValues::of(trace);
        for c in &mut races {
            c.evidence.written_values = written.of_pair(c.sites[0], c.sites[1]);
        }
    }
    candidates.extend(races);
    if opts.atomicity {
        candidates.extend(
            crate::atomicity::detect(trace, opts.atomizer_heuristic)
                .iter()
                .map(|c| Candidate::from_atomicity(c, trace_id)),
        );
    }
    if opts.access_atomicity {
        candidates.extend(
            crate::access_atomicity::detect(trace)
                .iter()
                .map(|t| Candidate::from_access_triple(t, trace_id)),
        );
    }
    if opts.deadlock {
        candidates.extend(
            crate::igoodlock::detect(trace, opts.max_cycle_len)
                .iter()
                .map(|c| Candidate::from_cycle(c, trace_id)),
        );
    }
    let relations = if opts.may_trigger {
        crate::drfinder::collect(trace, opts.may_trigger_depth)
    } else {
        Vec::new()
    };
    Prediction::from_parts(candidates, relations)
}
