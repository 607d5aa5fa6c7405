//! Instrumented atomics: synchronisation edges, never races among themselves, and mixed
//! atomic/plain accesses, on hand-written traces.

mod common;

use common::Trace;
use jostle_checker::{
    AccessKind, Analysis, CandidateKind, Options, RacePair, hb, hybrid, lockset, mixed, predict,
};
use jostle_kernel::event::Event;

const DATA: u32 = 0x2000_0100;
const FLAG: u32 = 0x2000_0200;
const L: u32 = 0x2000_1000;
const RELAXED: u8 = 0;
const RELEASE: u8 = 1;
const ACQUIRE: u8 = 2;
const ACQ_REL: u8 = 3;
const SEQ_CST: u8 = 4;

fn pairs(p: &[RacePair]) -> Vec<(u32, u32)> {
    p.iter().map(RacePair::sites).collect()
}

/// Does the hybrid detector (and the precise one) find the data race of the publication
/// idiom `DATA = 1; FLAG.store(o_store)` ‖ `FLAG.load(o_load); DATA` with `middle` events
/// on FLAG between the two sides?
fn publication_races(o_store: u8, middle: &[Event], o_load: u8) -> (bool, bool) {
    let mut t = Trace::main_spawning(3);
    t.write(1, 1, DATA).store(1, 10, FLAG, o_store);
    t.events.extend_from_slice(middle);
    t.load(2, 11, FLAG, o_load).read(2, 2, DATA);
    let trace = t.build();
    let hy = pairs(&hybrid::detect(&trace));
    let hb = pairs(&hb::detect(&trace));
    for p in [&hy, &hb] {
        assert!(p.iter().all(|&p| p == (1, 2)), "only the data race: {p:?}");
    }
    (!hy.is_empty(), !hb.is_empty())
}

#[test]
fn release_store_and_acquire_load_order_the_plain_accesses() {
    for o in [RELEASE, ACQ_REL, SEQ_CST] {
        for a in [ACQUIRE, ACQ_REL, SEQ_CST] {
            assert_eq!(publication_races(o, &[], a), (false, false), "{o} {a}");
        }
    }
    // Relaxed on either side publishes or acquires nothing.
    assert_eq!(publication_races(RELAXED, &[], ACQUIRE), (true, true));
    assert_eq!(publication_races(RELEASE, &[], RELAXED), (true, true));
}

#[test]
fn a_relaxed_rmw_continues_the_release_sequence_a_relaxed_store_ends_it() {
    let rmw = Event::AtomicRmw {
        t: 3,
        s: 12,
        a: FLAG,
        o: RELAXED,
    };
    let store = Event::AtomicStore {
        t: 3,
        s: 13,
        a: FLAG,
        o: RELAXED,
    };
    assert_eq!(publication_races(RELEASE, &[rmw], ACQUIRE), (false, false));
    assert_eq!(publication_races(RELEASE, &[store], ACQUIRE), (true, true));
    // A releasing RMW joins its clock into the sequence: both writers are published.
    let release_rmw = Event::AtomicRmw {
        t: 3,
        s: 12,
        a: FLAG,
        o: RELEASE,
    };
    assert_eq!(
        publication_races(RELEASE, &[release_rmw], ACQUIRE),
        (false, false)
    );
}

#[test]
fn an_acquiring_rmw_or_failed_cas_acquires() {
    for (ev, races) in [
        (
            Event::AtomicRmw {
                t: 2,
                s: 11,
                a: FLAG,
                o: ACQUIRE,
            },
            false,
        ),
        (
            Event::AtomicRmw {
                t: 2,
                s: 11,
                a: FLAG,
                o: RELAXED,
            },
            true,
        ),
        (
            Event::CasFailed {
                t: 2,
                s: 11,
                a: FLAG,
                o: ACQUIRE,
            },
            false,
        ),
        (
            Event::CasFailed {
                t: 2,
                s: 11,
                a: FLAG,
                o: SEQ_CST,
            },
            false,
        ),
        (
            Event::CasFailed {
                t: 2,
                s: 11,
                a: FLAG,
                o: RELAXED,
            },
            true,
        ),
    ] {
        let mut t = Trace::main_spawning(2);
        t.write(1, 1, DATA).store(1, 10, FLAG, RELEASE);
        t.events.push(ev);
        t.read(2, 2, DATA);
        let trace = t.build();
        assert_eq!(!hybrid::detect(&trace).is_empty(), races, "{ev:?}");
        assert_eq!(!hb::detect(&trace).is_empty(), races, "{ev:?}");
    }
}

/// What the releasing task does after its release is not published.
#[test]
fn a_release_publishes_only_what_came_before_it() {
    let mut t = Trace::main_spawning(2);
    t.store(1, 10, FLAG, RELEASE).write(1, 1, DATA);
    t.load(2, 11, FLAG, ACQUIRE).read(2, 2, DATA);
    assert_eq!(pairs(&hybrid::detect(&t.build())), vec![(1, 2)]);
}

#[test]
fn atomic_accesses_never_race_with_each_other() {
    let mut t = Trace::main_spawning(2);
    t.store(1, 1, FLAG, RELAXED).rmw(1, 2, FLAG, RELAXED);
    t.load(2, 3, FLAG, RELAXED)
        .store(2, 4, FLAG, RELAXED)
        .cas_failed(2, 5, FLAG, RELAXED);
    t.store(1, 6, FLAG, RELAXED);
    let trace = t.build();
    assert!(hybrid::detect(&trace).is_empty());
    assert!(hb::detect(&trace).is_empty());
    assert!(lockset::precise(&trace).is_empty());
    assert!(lockset::eraser(&trace).is_empty());
    assert!(mixed::detect(&trace).is_empty());
    let p = predict(
        &trace,
        &Options {
            precise_lockset: true,
            ..Options::default()
        },
    );
    assert_eq!(p.of_kind(CandidateKind::Race).count(), 0);
}

#[test]
fn a_plain_and_an_atomic_access_of_one_location_race() {
    let mut t = Trace::main_spawning(2);
    t.write(1, 1, FLAG);
    t.load(2, 2, FLAG, SEQ_CST);
    let trace = t.build();
    let found = mixed::detect(&trace);
    assert_eq!(pairs(&found), vec![(1, 2)]);
    assert_eq!(found[0].locations, vec![FLAG]);
    assert_eq!(
        (found[0].first.kind, found[0].second.kind),
        (AccessKind::Write, AccessKind::Read)
    );
    // Neither the hybrid nor the precise detector sees atomic accesses.
    assert!(hybrid::detect(&trace).is_empty());
    let p = predict(&trace, &Options::default());
    let races: Vec<_> = p.of_kind(CandidateKind::Race).collect();
    assert_eq!(races.len(), 1);
    assert_eq!(races[0].sites, vec![1, 2]);
    assert_eq!(races[0].evidence.analyses, [Analysis::MixedAtomic].into());
    assert_eq!(races[0].evidence.locations, [FLAG].into());
    let json = p.to_json();
    assert!(json.contains("\"mixed_atomic\""), "{json}");
    let off = predict(
        &trace,
        &Options {
            mixed_atomic: false,
            ..Options::default()
        },
    );
    assert_eq!(off.of_kind(CandidateKind::Race).count(), 0);
}

#[test]
fn mixed_accesses_that_are_ordered_locked_or_both_reads_do_not_race() {
    // Ordered: the plain initialisation before the spawn.
    let mut t = Trace::new();
    t.start(0).write(0, 1, FLAG).spawn(0, 1).start(1);
    t.rmw(1, 2, FLAG, RELAXED);
    assert!(mixed::detect(&t.build()).is_empty());
    // Ordered through the location itself: an atomic store-release then an acquiring load,
    // then a plain read by the loader.
    let mut t = Trace::main_spawning(2);
    t.store(1, 1, FLAG, RELEASE);
    t.load(2, 2, FLAG, ACQUIRE).read(2, 3, FLAG);
    assert!(mixed::detect(&t.build()).is_empty());
    // A common lock.
    let mut t = Trace::main_spawning(2);
    t.lock(1, 10, L).write(1, 1, FLAG).unlock(1, 11, L);
    t.lock(2, 10, L).store(2, 2, FLAG, RELAXED).unlock(2, 11, L);
    assert!(mixed::detect(&t.build()).is_empty());
    // Two reads.
    let mut t = Trace::main_spawning(2);
    t.read(1, 1, FLAG);
    t.load(2, 2, FLAG, RELAXED).cas_failed(2, 3, FLAG, RELAXED);
    assert!(mixed::detect(&t.build()).is_empty());
    // Same task.
    let mut t = Trace::main_spawning(1);
    t.write(1, 1, FLAG).store(1, 2, FLAG, RELAXED);
    assert!(mixed::detect(&t.build()).is_empty());
}
