//! Lockset analyses: Eraser (Savage et al., with its state machine) and the precise lockset
//! check (Choi et al.), as in the dynamic-race-detection slides.
//!
//! **Eraser.** Each location has a state and a candidate set `C(m)`:
//!
//! - *virgin* → first access by `t`: *exclusive(t)* (no lockset tracking);
//! - *exclusive(t)*: accesses by `t` stay; a read by another task → *shared* with
//!   `C := L(t)`; a write by another task → *shared-modified* with `C := L(t)`;
//! - *shared* (read-shared): reads refine `C ∩= L(t)` and never warn; a write →
//!   *shared-modified*, `C ∩= L(t)`;
//! - *shared-modified*: every access refines `C ∩= L(t)`; `C = ∅` is a warning.
//!
//! One warning per location (the first access that empties `C` in *shared-modified*).
//!
//! Interrupt masks are locks here too ([`crate::irq`]), intersected literally: a handler's
//! lockset is its implicit locks (critical section, `IRQ_ALL`, its source's, the priority
//! masks at or below its priority seen in the trace, its level) plus what it acquired. So
//! Eraser does not warn about a location shared between handlers only (they all "hold" the
//! critical section) or between contexts that all mask the same source; the hybrid detector,
//! with its one-sided mask rule, does. Atomic accesses are not accesses for Eraser.
//!
//! **Precise lockset.** The database of tuples `(m, t, L, a)`: an access races with a tuple
//! of another task on the same location when one is a write and the locksets are disjoint.
//! This is the hybrid condition without the happens-before test, so it shares the hybrid
//! detector's bounded summary ([`PairDetector`] with `HB = false`): it reports site pairs,
//! a superset of the hybrid pairs.

use serde::{Deserialize, Serialize};

use jostle_kernel::event::Event;

use crate::hash::FxHashMap;
use crate::hybrid::PairDetector;
use crate::locks::{LockState, SetId};
use crate::race::{AccessKind, RacePair};

/// The Eraser state of a location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EraserState {
    /// Never accessed.
    Virgin,
    /// Accessed by one task only.
    Exclusive(u8),
    /// Read by several tasks, written by at most the first.
    Shared,
    /// Written after being shared.
    SharedModified,
}

/// An Eraser warning: the candidate lockset of `location` became empty in *shared-modified*.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EraserWarning {
    /// The location.
    pub location: u32,
    /// The access that emptied the candidate set.
    pub site: u32,
    /// Its task.
    pub task: u8,
    /// Read or write.
    pub kind: AccessKind,
    /// Its event index.
    pub event: u64,
}

#[derive(Clone, Copy, Debug)]
struct LocState {
    state: EraserState,
    candidates: SetId,
    warned: bool,
}

/// Streaming Eraser.
#[derive(Clone, Debug)]
pub struct Eraser {
    locks: LockState,
    locations: FxHashMap<u32, LocState>,
    warnings: Vec<EraserWarning>,
    next: u64,
}

impl Default for Eraser {
    fn default() -> Self {
        Self::new()
    }
}

impl Eraser {
    /// An Eraser that has seen no event.
    pub fn new() -> Self {
        Self {
            locks: LockState::with_masks(),
            locations: FxHashMap::default(),
            warnings: Vec::new(),
            next: 0,
        }
    }

    /// Feeds the next event.
    pub fn on_event(&mut self, ev: &Event) {
        let idx = self.next;
        self.next += 1;
        match *ev {
            Event::Read { t, s, a } => self.access(idx, t, s, a, false),
            Event::Write { t, s, a } | Event::Update { t, s, a } => self.access(idx, t, s, a, true),
            _ => {
                self.locks.on_event(ev);
            }
        }
    }

    /// Learns the priority-mask levels of `trace` before feeding it, so that a handler's
    /// implicit locks include levels first set after its accesses ([`eraser`] does this).
    pub fn prescan(&mut self, trace: &[Event]) {
        self.locks.prescan_levels(trace);
    }

    fn access(&mut self, idx: u64, t: u8, site: u32, a: u32, write: bool) {
        let held = self.locks.eraser_set(t);
        let st = *self.locations.entry(a).or_insert(LocState {
            state: EraserState::Virgin,
            candidates: 0,
            warned: false,
        });
        let (state, candidates) = match st.state {
            EraserState::Virgin => (EraserState::Exclusive(t), 0),
            EraserState::Exclusive(owner) if owner == t => (st.state, 0),
            EraserState::Exclusive(_) if write => (EraserState::SharedModified, held),
            EraserState::Exclusive(_) => (EraserState::Shared, held),
            EraserState::Shared if write => (
                EraserState::SharedModified,
                self.locks.intersect(st.candidates, held),
            ),
            EraserState::Shared | EraserState::SharedModified => {
                (st.state, self.locks.intersect(st.candidates, held))
            }
        };
        let warn = state == EraserState::SharedModified && candidates == 0 && !st.warned;
        if warn {
            self.warnings.push(EraserWarning {
                location: a,
                site,
                task: t,
                kind: if write {
                    AccessKind::Write
                } else {
                    AccessKind::Read
                },
                event: idx,
            });
        }
        self.locations.insert(
            a,
            LocState {
                state,
                candidates,
                warned: st.warned || warn,
            },
        );
    }

    /// The state of `location`.
    pub fn state(&self, location: u32) -> EraserState {
        self.locations
            .get(&location)
            .map_or(EraserState::Virgin, |s| s.state)
    }

    /// The warnings, in trace order.
    pub fn finish(self) -> Vec<EraserWarning> {
        self.warnings
    }
}

/// Eraser over a whole trace: one warning per location whose candidate lockset became
/// empty after it was write-shared, in trace order.
pub fn eraser(trace: &[Event]) -> Vec<EraserWarning> {
    let mut e = Eraser::new();
    e.prescan(trace);
    for ev in trace {
        e.on_event(ev);
    }
    e.finish()
}

/// The precise lockset check over a whole trace: racing site pairs (no happens-before
/// filtering), sorted.
pub fn precise(trace: &[Event]) -> Vec<RacePair> {
    let mut d = PairDetector::<false>::new();
    d.feed(trace);
    d.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acq(t: u8, l: u32) -> Event {
        Event::Acquire { t, s: 0, l, c: 0 }
    }
    fn rel(t: u8, l: u32) -> Event {
        Event::Release { t, s: 0, l }
    }

    #[test]
    fn eraser_state_machine() {
        let mut e = Eraser::new();
        let x = 7;
        assert_eq!(e.state(x), EraserState::Virgin);
        e.on_event(&Event::Write { t: 1, s: 1, a: x });
        assert_eq!(e.state(x), EraserState::Exclusive(1));
        e.on_event(&Event::Read { t: 2, s: 2, a: x });
        assert_eq!(e.state(x), EraserState::Shared);
        // Read-shared with an empty candidate set does not warn.
        e.on_event(&Event::Read { t: 3, s: 3, a: x });
        e.on_event(&acq(3, 9));
        e.on_event(&Event::Write { t: 3, s: 4, a: x });
        assert_eq!(e.state(x), EraserState::SharedModified);
        let w = e.finish();
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].site, w[0].task, w[0].event), (4, 3, 4));
    }

    #[test]
    fn eraser_consistent_locking_is_quiet_and_slides_example_2_warns() {
        // Slides "Eraser: Example 1": both threads use `mutex`.
        let quiet = [
            acq(1, 1),
            Event::Update { t: 1, s: 1, a: 5 },
            rel(1, 1),
            acq(2, 1),
            Event::Update { t: 2, s: 2, a: 5 },
            rel(2, 1),
        ];
        assert!(eraser(&quiet).is_empty());
        // "Eraser: Example 2": mutex1 vs mutex2. The state machine takes the first owner's
        // accesses as initialisation: C = {mutex2} after t2, emptied by t1's next access.
        let mut racy = vec![
            acq(1, 1),
            Event::Update { t: 1, s: 1, a: 5 },
            rel(1, 1),
            acq(2, 2),
            Event::Update { t: 2, s: 2, a: 5 },
            rel(2, 2),
        ];
        assert!(eraser(&racy).is_empty());
        racy.extend([acq(1, 1), Event::Update { t: 1, s: 3, a: 5 }, rel(1, 1)]);
        let w = eraser(&racy);
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].site, w[0].task), (3, 1));
    }

    #[test]
    fn precise_lockset_avoids_erasers_three_lock_false_alarm() {
        // Slides "Eraser: Problem": T1 {L1,L2}, T2 {L2,L3}, T3 {L1,L3}.
        let mut trace = Vec::new();
        let round = [(1u8, 1u32, 2u32), (2, 2, 3), (3, 3, 1)];
        for (t, a, b) in round.into_iter().chain(round) {
            trace.extend([
                acq(t, a),
                acq(t, b),
                Event::Update {
                    t,
                    s: t as u32,
                    a: 50,
                },
            ]);
            trace.extend([rel(t, b), rel(t, a)]);
        }
        assert_eq!(eraser(&trace).len(), 1);
        assert!(precise(&trace).is_empty());
    }

    #[test]
    fn precise_lockset_ignores_happens_before() {
        // Slides "Precise Lockset: Not so Precise": x++ ; t2.start() ; x++ in t2.
        let trace = [
            Event::Update { t: 1, s: 1, a: 9 },
            Event::Spawn {
                t: 1,
                child: 2,
                s: 2,
            },
            Event::Update { t: 2, s: 3, a: 9 },
        ];
        let p = precise(&trace);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].sites(), (1, 3));
        assert!(crate::hybrid::detect(&trace).is_empty());
    }
}
