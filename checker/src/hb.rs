//! Precise happens-before race detection with FastTrack epochs (Flanagan & Freund, PLDI'09):
//! races that really happened in this trace.
//!
//! Happens-before here includes release→acquire of the same lock ([`Edges::Precise`]).
//! Per location the detector keeps the last write as an epoch `c@t` and the reads either as
//! one epoch (totally ordered reads) or, once two concurrent reads are seen, as a vector of
//! per-task read epochs (FastTrack's adaptive representation), each with the site and event
//! index needed to report a site pair. Rules (FastTrack Fig. 2):
//!
//! - read, same epoch as the last read by this task: nothing to do;
//! - read: `W ⋢ C_t` is a write→read race; then `R := c@t` if the previous read epoch
//!   happens before `C_t`, else the reads become shared;
//! - write, same epoch as the last write: nothing to do;
//! - write: `W ⋢ C_t` is a write→write race, each read `r ⋢ C_t` a read→write race; then
//!   `W := c@t`; shared reads are cleared (`R := ⊥e`: they all happen before, or raced
//!   with, this write), a read epoch is kept.
//!
//! Every reported pair is a real race (the two accesses are concurrent); like FastTrack, not
//! every racing pair is reported (a later write is compared with the last write only), but a
//! location with a race gets at least one report.
//!
//! Interrupt handlers are contexts of their own; atomic accesses are synchronisation only
//! (their release/acquire edges, never a race); masks give the precise relation its one-sided
//! lock edges between masking contexts and the handlers they mask (see [`crate::vc`]), so a
//! task's critical section and a handler are ordered the way they ran.

use jostle_kernel::event::Event;

use crate::hash::FxHashMap;
use crate::race::{AccessKind, PairSet, RaceAccess, RacePair};
use crate::vc::{Clocks, Edges, Epoch, VectorClock};

/// An access summarised by its epoch, site and event index (clock 0: none).
#[derive(Clone, Copy, Debug, Default)]
struct Last {
    event: u64,
    clock: u32,
    site: u32,
    task: u8,
    write: bool,
}

impl Last {
    #[inline]
    fn epoch(&self) -> Epoch {
        Epoch {
            clock: self.clock,
            task: self.task,
        }
    }

    #[inline]
    fn concurrent_with(&self, vc: &VectorClock) -> bool {
        self.clock != 0 && !self.epoch().happens_before(vc)
    }

    fn access(&self) -> RaceAccess {
        RaceAccess {
            site: self.site,
            task: self.task,
            kind: if self.write {
                AccessKind::Write
            } else {
                AccessKind::Read
            },
            event: self.event,
        }
    }
}

/// Per-location FastTrack state.
#[derive(Clone, Debug)]
struct Var {
    addr: u32,
    w: Last,
    /// The read epoch while reads are totally ordered.
    r: Last,
    /// Per-task last reads (indexed by task) once reads are shared; empty otherwise.
    shared: Vec<Last>,
}

/// Streaming FastTrack detector.
#[derive(Clone, Debug)]
pub struct HbDetector {
    clocks: Clocks,
    index: FxHashMap<u32, u32>,
    vars: Vec<Var>,
    pairs: PairSet,
    next: u64,
}

impl Default for HbDetector {
    fn default() -> Self {
        Self::new()
    }
}

impl HbDetector {
    /// A detector that has seen no event.
    pub fn new() -> Self {
        Self {
            clocks: Clocks::new(Edges::Precise),
            index: FxHashMap::default(),
            vars: Vec::new(),
            pairs: PairSet::default(),
            next: 0,
        }
    }

    /// Feeds the next event of the trace.
    #[inline]
    pub fn on_event(&mut self, ev: &Event) {
        let idx = self.next;
        self.next += 1;
        match *ev {
            Event::Read { t, s, a } => self.read(idx, t, s, a),
            Event::Write { t, s, a } | Event::Update { t, s, a } => self.write(idx, t, s, a),
            _ => self.clocks.on_event(ev),
        }
    }

    /// Feeds every event of `trace`.
    pub fn feed(&mut self, trace: &[Event]) {
        for ev in trace {
            self.on_event(ev);
        }
    }

    #[inline]
    fn var(&mut self, addr: u32) -> usize {
        let next = self.vars.len() as u32;
        let i = *self.index.entry(addr).or_insert(next);
        if i == next {
            self.vars.push(Var {
                addr,
                w: Last::default(),
                r: Last::default(),
                shared: Vec::new(),
            });
        }
        i as usize
    }

    fn read(&mut self, idx: u64, t: u8, site: u32, addr: u32) {
        let vi = self.var(addr);
        let vc = self.clocks.clock(t);
        let clock = vc.get(t);
        let v = &mut self.vars[vi];
        let me = Last {
            event: idx,
            clock,
            site,
            task: t,
            write: false,
        };
        // [READ SAME EPOCH]
        if v.shared.is_empty() {
            if v.r.clock == clock && v.r.task == t {
                return;
            }
        } else if v.shared.get(t as usize).is_some_and(|r| r.clock == clock) {
            return;
        }
        // write→read race
        if v.w.concurrent_with(vc) {
            self.pairs.record(v.w.access(), me.access(), v.addr);
        }
        if v.shared.is_empty() {
            if v.r.clock == 0 || v.r.epoch().happens_before(vc) {
                // [READ EXCLUSIVE]
                v.r = me;
            } else {
                // [READ SHARE]
                let n = (v.r.task.max(t) as usize) + 1;
                v.shared = vec![Last::default(); n];
                v.shared[v.r.task as usize] = v.r;
                v.shared[t as usize] = me;
            }
        } else {
            // [READ SHARED]
            if v.shared.len() <= t as usize {
                v.shared.resize(t as usize + 1, Last::default());
            }
            v.shared[t as usize] = me;
        }
    }

    fn write(&mut self, idx: u64, t: u8, site: u32, addr: u32) {
        let vi = self.var(addr);
        let vc = self.clocks.clock(t);
        let clock = vc.get(t);
        let v = &mut self.vars[vi];
        // [WRITE SAME EPOCH]
        if v.w.clock == clock && v.w.task == t {
            return;
        }
        let me = Last {
            event: idx,
            clock,
            site,
            task: t,
            write: true,
        };
        if v.w.concurrent_with(vc) {
            self.pairs.record(v.w.access(), me.access(), v.addr);
        }
        if v.shared.is_empty() {
            if v.r.concurrent_with(vc) {
                self.pairs.record(v.r.access(), me.access(), v.addr);
            }
        } else {
            for r in &v.shared {
                if r.concurrent_with(vc) {
                    self.pairs.record(r.access(), me.access(), v.addr);
                }
            }
            // [WRITE SHARED]: R := ⊥e
            v.shared = Vec::new();
            v.r = Last::default();
        }
        v.w = me;
    }

    /// The racing site pairs found so far, sorted.
    pub fn pairs(&self) -> Vec<RacePair> {
        self.pairs.sorted()
    }

    /// The racing site pairs, sorted.
    pub fn finish(self) -> Vec<RacePair> {
        self.pairs.into_sorted()
    }

    /// Approximate heap bytes of the detector state.
    pub fn state_bytes(&self) -> usize {
        self.clocks.heap_bytes()
            + self.index.capacity() * 8
            + self.vars.capacity() * size_of::<Var>()
            + self
                .vars
                .iter()
                .map(|v| v.shared.capacity() * size_of::<Last>())
                .sum::<usize>()
            + self.pairs.heap_bytes()
    }
}

/// Precise happens-before race detection over a whole trace: the site pairs that really
/// raced, sorted.
pub fn detect(trace: &[Event]) -> Vec<RacePair> {
    let mut d = HbDetector::new();
    d.feed(trace);
    d.finish()
}
