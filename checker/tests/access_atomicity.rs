//! Single-variable atomicity violations (AVIO patterns), on hand-written traces.

mod common;

use common::{Trace, h};
use jostle_checker::{
    AccessPattern, Analysis, CandidateKind, Options, access_atomicity, candidate_id,
    ordered_candidate_id, predict,
};
use jostle_kernel::event::Event;

const X: u32 = 0x2000_0100;
const Y: u32 = 0x2000_0104;
const L: u32 = 0x2000_1000;
const M: u32 = 0x2000_1008;
const SEQ_CST: u8 = 4;

/// The (a1, a2, a3) site triples found, sorted.
fn triples(trace: &[Event]) -> Vec<(u32, u32, u32)> {
    let mut v: Vec<_> = access_atomicity::detect(trace)
        .iter()
        .map(|t| (t.first, t.remote, t.second))
        .collect();
    v.sort_unstable();
    v
}

/// `if X.load() == 0 { X.store(1) }` in task 1 and a store of X by task 2: the trace ran
/// task 1 first, then task 2.
#[test]
fn an_atomic_check_then_act_is_predicted() {
    let mut t = Trace::main_spawning(2);
    t.load(1, 1, X, SEQ_CST).store(1, 2, X, SEQ_CST);
    t.store(2, 2, X, SEQ_CST);
    let trace = t.build();
    let found = access_atomicity::detect(&trace);
    assert_eq!(found.len(), 1);
    let v = found[0];
    assert_eq!((v.first, v.remote, v.second), (1, 2, 2));
    assert_eq!(v.pattern, AccessPattern::Rww);
    assert_eq!((v.context, v.remote_context, v.location), (1, 2, X));
    // Events: 5 of main_spawning(2), then task 1's load and store, task 2's store.
    assert_eq!(v.events, [5, 7, 6]);
    let p = predict(&trace, &Options::default());
    let c: Vec<_> = p.of_kind(CandidateKind::AccessAtomicity).collect();
    assert_eq!(c.len(), 1);
    let c = c[0];
    assert_eq!(c.sites, vec![1, 2, 2]);
    assert_eq!(
        c.id,
        candidate_id(CandidateKind::AccessAtomicity, &[1, 2, 2])
    );
    assert_eq!(c.breakpoints, vec![1, 2]);
    assert_eq!(c.evidence.analyses, [Analysis::AccessAtomicity].into());
    assert_eq!(c.evidence.tasks, [1, 2].into());
    assert_eq!(c.evidence.locations, [X].into());
    let w = c.evidence.witnesses.iter().next().expect("a witness");
    assert_eq!(w.events, vec![5, 7, 6]);
    let tr = c.evidence.triples.iter().next().expect("a triple");
    assert_eq!((tr.first, tr.remote, tr.second), (1, 2, 2));
    assert_eq!(
        (tr.context, tr.remote_context, tr.kinds),
        (1, 2, AccessPattern::Rww)
    );
    // No race candidate: atomics never race with each other.
    assert_eq!(p.of_kind(CandidateKind::Race).count(), 0);
    let json = p.to_json();
    for field in [
        "\"kind\": \"access_atomicity\"",
        "\"access_atomicity\"",
        "\"triples\"",
        "\"kinds\": \"RWW\"",
        "\"remote_context\": 2",
        "\"first\": 1",
        "\"remote\": 2",
        "\"second\": 2",
    ] {
        assert!(json.contains(field), "{field} in {json}");
    }
    assert_eq!(jostle_checker::Prediction::from_json(&json).unwrap(), p);
    let off = predict(
        &trace,
        &Options {
            access_atomicity: false,
            ..Options::default()
        },
    );
    assert_eq!(off.of_kind(CandidateKind::AccessAtomicity).count(), 0);
}

/// Both tasks check then act with relaxed atomics: one candidate per site triple. With
/// acquire/release, the second task's load read the first task's store in this trace, which
/// orders it after `a3`: atomics are synchronisation, so the triple is ruled out.
#[test]
fn two_checks_then_acts_give_one_candidate() {
    for (o, n) in [(0u8, 1usize), (SEQ_CST, 0)] {
        let mut t = Trace::main_spawning(2);
        t.load(1, 1, X, o).store(1, 2, X, o);
        t.load(2, 1, X, o).store(2, 2, X, o);
        assert_eq!(
            access_atomicity::detect(&t.build()).len(),
            n,
            "ordering {o}"
        );
    }
}

#[test]
fn the_four_unserializable_patterns_and_no_other() {
    let case = |k1: bool, k2: bool, k3: bool| {
        let access = |t: &mut Trace, task, s, w: bool| {
            if w {
                t.write(task, s, X);
            } else {
                t.read(task, s, X);
            }
        };
        let mut t = Trace::main_spawning(2);
        access(&mut t, 1, 1, k1);
        access(&mut t, 1, 3, k3);
        access(&mut t, 2, 2, k2);
        access_atomicity::detect(&t.build())
            .first()
            .map(|v| v.pattern)
    };
    let (r, w) = (false, true);
    assert_eq!(case(r, w, r), Some(AccessPattern::Rwr));
    assert_eq!(case(w, w, r), Some(AccessPattern::Wwr));
    assert_eq!(case(r, w, w), Some(AccessPattern::Rww));
    assert_eq!(case(w, r, w), Some(AccessPattern::Wrw));
    for (a, b, c) in [(r, r, r), (r, r, w), (w, r, r), (w, w, w)] {
        assert_eq!(case(a, b, c), None, "{a} {b} {c}");
    }
}

/// The remote access may be anywhere in the trace: before a1, between, after a3.
#[test]
fn the_remote_access_comes_from_anywhere_in_the_trace() {
    for at in 0..3 {
        let mut t = Trace::main_spawning(2);
        if at == 0 {
            t.update(2, 2, X);
        }
        t.read(1, 1, X);
        if at == 1 {
            t.update(2, 2, X);
        }
        t.write(1, 3, X);
        if at == 2 {
            t.update(2, 2, X);
        }
        assert_eq!(triples(&t.build()), vec![(1, 2, 3)], "remote at {at}");
    }
}

/// Consecutive: a1 and a3 have no access of their context to the location in between.
#[test]
fn only_consecutive_accesses_form_a_pair() {
    let mut t = Trace::main_spawning(2);
    t.read(1, 1, X).read(1, 4, X).write(1, 3, X).read(1, 5, Y);
    t.write(2, 2, X);
    assert_eq!(triples(&t.build()), vec![(1, 2, 4), (4, 2, 3)]);
}

/// A lock held from a1 to a3 that the remote access needs keeps it out; two critical
/// sections of the same lock do not (the lock may go to the other task in between).
#[test]
fn a_lock_held_across_both_accesses_keeps_the_remote_out_two_sections_do_not() {
    let mut t = Trace::main_spawning(2);
    t.lock(1, 10, L)
        .read(1, 1, X)
        .write(1, 3, X)
        .unlock(1, 11, L);
    t.lock(2, 10, L).write(2, 2, X).unlock(2, 11, L);
    assert!(triples(&t.build()).is_empty());
    // The remote without the lock gets in (a data race, and this violation).
    let mut t = Trace::main_spawning(2);
    t.lock(1, 10, L)
        .read(1, 1, X)
        .write(1, 3, X)
        .unlock(1, 11, L);
    t.lock(2, 10, M).write(2, 2, X).unlock(2, 11, M);
    assert_eq!(triples(&t.build()), vec![(1, 2, 3)]);
    // The AtomFuzzer shape: check and act in two critical sections.
    let mut t = Trace::main_spawning(2);
    t.lock(1, 10, L)
        .read(1, 1, X)
        .unlock(1, 11, L)
        .lock(1, 12, L)
        .write(1, 3, X)
        .unlock(1, 13, L);
    t.lock(2, 10, L).write(2, 2, X).unlock(2, 11, L);
    assert_eq!(triples(&t.build()), vec![(1, 2, 3)]);
    // A re-entrant re-acquire inside keeps the lock held.
    let mut t = Trace::main_spawning(2);
    t.lock(1, 10, L)
        .read(1, 1, X)
        .lock(1, 12, L)
        .unlock(1, 13, L)
        .write(1, 3, X)
        .unlock(1, 11, L);
    t.lock(2, 10, L).write(2, 2, X).unlock(2, 11, L);
    assert!(triples(&t.build()).is_empty());
}

/// Nothing else runs while a task is inside the critical section: no task, no handler.
#[test]
fn a_critical_section_across_both_accesses_keeps_everyone_out() {
    let mut t = Trace::main_spawning(2);
    t.cs(1).read(1, 1, X).write(1, 3, X).end_cs(1);
    t.write(2, 2, X);
    t.irq(0, 1, 2).write(h(0), 4, X).end_irq(0);
    assert!(triples(&t.build()).is_empty());
    let mut t = Trace::main_spawning(2);
    t.cs(1)
        .read(1, 1, X)
        .end_cs(1)
        .cs(1)
        .write(1, 3, X)
        .end_cs(1);
    t.write(2, 2, X);
    t.irq(0, 1, 2).write(h(0), 4, X).end_irq(0);
    assert_eq!(triples(&t.build()), vec![(1, 2, 3), (1, 4, 3)]);
}

/// The `irq_flag` example: the main loop reads the flag, then clears it; the handler sets
/// it. Disabling the source across both accesses fixes it; disabling another does not.
#[test]
fn a_handler_preempts_a_task_unless_its_source_is_masked_throughout() {
    let mut t = Trace::main_spawning(1);
    t.irq(0, 1, 1).write(h(0), 2, X).end_irq(0);
    t.read(1, 1, X).write(1, 3, X);
    assert_eq!(triples(&t.build()), vec![(1, 2, 3)]);
    for (mask, found) in [(0u8, false), (0xFF, false), (1, true)] {
        let mut t = Trace::main_spawning(1);
        t.irq(0, 1, 1).write(h(0), 2, X).end_irq(0);
        t.mask(1, 10, mask)
            .read(1, 1, X)
            .write(1, 3, X)
            .unmask(1, 11, mask);
        assert_eq!(!triples(&t.build()).is_empty(), found, "mask {mask}");
    }
    // Masked at a1 only: the handler may fire between.
    let mut t = Trace::main_spawning(1);
    t.irq(0, 1, 1).write(h(0), 2, X).end_irq(0);
    t.mask(1, 10, 0)
        .read(1, 1, X)
        .unmask(1, 11, 0)
        .write(1, 3, X);
    assert_eq!(triples(&t.build()), vec![(1, 2, 3)]);
    // A priority mask at or above the handler's priority value's level.
    for (level, found) in [(1u8, false), (2, true)] {
        let mut t = Trace::main_spawning(1);
        t.irq(0, 1, 1).write(h(0), 2, X).end_irq(0);
        t.prio(1, 10, level)
            .read(1, 1, X)
            .write(1, 3, X)
            .prio(1, 11, 0);
        assert_eq!(!triples(&t.build()).is_empty(), found, "level {level}");
    }
}

/// The `irq_nested` example: a handler preempts another only with a strictly lower
/// priority number; a task never runs inside a handler.
#[test]
fn handlers_preempt_only_less_urgent_handlers() {
    let mut t = Trace::main_spawning(1);
    t.irq(0, 2, 1).read(h(0), 1, X).write(h(0), 3, X).end_irq(0);
    t.irq(1, 1, 1).update(h(1), 2, X).end_irq(1);
    t.irq(2, 2, 1).update(h(2), 4, X).end_irq(2);
    t.update(1, 5, X);
    assert_eq!(triples(&t.build()), vec![(1, 2, 3)]);
    let v = access_atomicity::detect(&t.build())[0];
    assert_eq!((v.context, v.remote_context), (h(0), h(1)));
    // Masking priority 1 inside the low handler fixes it.
    let mut t = Trace::main_spawning(1);
    t.irq(0, 2, 1)
        .prio(h(0), 10, 1)
        .read(h(0), 1, X)
        .write(h(0), 3, X)
        .prio(h(0), 11, 0)
        .end_irq(0);
    t.irq(1, 1, 1).update(h(1), 2, X).end_irq(1);
    assert!(triples(&t.build()).is_empty());
    // Two firings of one handler are not one atomic unit.
    let mut t = Trace::main_spawning(1);
    t.irq(0, 2, 1).read(h(0), 1, X).end_irq(0);
    t.irq(0, 2, 1).write(h(0), 3, X).end_irq(0);
    t.irq(1, 1, 1).update(h(1), 2, X).end_irq(1);
    assert!(triples(&t.build()).is_empty());
}

/// racebench 014: a handler masks a source around its two reads, but a more urgent handler
/// enables that source (here after the reads): the masked handler can still land between
/// them, and the triple names the unmasker. A task's enable, a less urgent handler's, or a
/// critical section instead of the mask leave it kept out.
#[test]
fn a_mask_a_more_urgent_handler_undoes_keeps_nothing_out() {
    // Sources: 1 (priority 3) reads, 2 (priority 2) unmasks 3, 3 (priority 1) writes.
    let build = |unmasker: u8, unmasker_prio: u8, cs: bool| {
        let mut t = Trace::main_spawning(1);
        t.irq(1, 3, 1).mask(h(1), 10, 3);
        if cs {
            t.cs(h(1));
        }
        t.read(h(1), 1, X).read(h(1), 3, X);
        if cs {
            t.end_cs(h(1));
        }
        t.end_irq(1);
        t.irq(unmasker, unmasker_prio, 1)
            .unmask(h(unmasker), 11, 3)
            .end_irq(unmasker);
        t.irq(3, 1, 1).write(h(3), 2, X).end_irq(3);
        t.build()
    };
    let found = access_atomicity::detect(&build(2, 2, false));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].first, found[0].remote, found[0].second),
        (1, 2, 3)
    );
    assert_eq!(found[0].unmasker, Some(2));
    let p = predict(&build(2, 2, false), &Options::default());
    let c = p
        .of_kind(CandidateKind::AccessAtomicity)
        .next()
        .expect("a candidate");
    assert_eq!(c.evidence.triples.first().unwrap().unmasker, Some(2));
    // Less urgent than the reader (it cannot preempt it), or the reads in a critical section.
    assert!(triples(&build(2, 4, false)).is_empty());
    assert!(triples(&build(2, 2, true)).is_empty());
    // The task enables it: a task never runs inside a handler.
    let mut t = Trace::main_spawning(1);
    t.irq(1, 3, 1).mask(h(1), 10, 3);
    t.read(h(1), 1, X).read(h(1), 3, X).end_irq(1);
    t.unmask(1, 11, 3);
    t.irq(3, 1, 1).write(h(3), 2, X).end_irq(3);
    assert!(triples(&t.build()).is_empty());
}

/// Happens-before rules out a remote access that must come before a1 or after a3; lock
/// order observed in the trace does not.
#[test]
fn happens_before_rules_out_impossible_triples() {
    // a2 ≺ a1: the remote write before the spawn of the reader.
    let mut t = Trace::new();
    t.start(0).write(0, 2, X).spawn(0, 1).start(1);
    t.read(1, 1, X).write(1, 3, X);
    assert!(triples(&t.build()).is_empty());
    // a3 ≺ a2: the remote write after joining the task.
    let mut t = Trace::main_spawning(1);
    t.read(1, 1, X).write(1, 3, X).exit(1).join(0, 1);
    t.write(0, 2, X);
    assert!(triples(&t.build()).is_empty());
    // a1 ≺ a2 ≺ a3 through signals: it happened, it is reported.
    let mut t = Trace::main_spawning(2);
    t.read(1, 1, X)
        .signal(1, 10, 7)
        .wait(2, 11, 7)
        .write(2, 2, X);
    t.signal(2, 12, 8).wait(1, 13, 8).write(1, 3, X);
    assert_eq!(triples(&t.build()), vec![(1, 2, 3)]);
    // Through an atomic flag: release after a3, acquire before a2.
    let mut t = Trace::main_spawning(2);
    t.read(1, 1, X).write(1, 3, X).store(1, 10, Y, 1);
    t.load(2, 11, Y, 2).write(2, 2, X);
    assert!(triples(&t.build()).is_empty());
    // Lock order is not fixed: the remote section after both of task 1's.
    let mut t = Trace::main_spawning(2);
    t.lock(1, 10, L).read(1, 1, X).unlock(1, 11, L);
    t.lock(1, 10, L).write(1, 3, X).unlock(1, 11, L);
    t.lock(2, 10, L).write(2, 2, X).unlock(2, 11, L);
    assert_eq!(triples(&t.build()), vec![(1, 2, 3)]);
}

/// One candidate per site triple, however often the trace repeats it.
#[test]
fn one_candidate_per_site_triple() {
    let mut t = Trace::main_spawning(2);
    for _ in 0..5 {
        t.read(1, 1, X).write(1, 3, X);
        t.update(2, 2, X);
    }
    let trace = t.build();
    let found = access_atomicity::detect(&trace);
    let mut keys: Vec<_> = found
        .iter()
        .map(|v| (v.first, v.remote, v.second))
        .collect();
    let n = keys.len();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), n);
    assert!(keys.contains(&(1, 2, 3)));
    let p = predict(&trace, &Options::default());
    let ids: Vec<_> = p
        .of_kind(CandidateKind::AccessAtomicity)
        .map(|c| &c.id)
        .collect();
    let mut unique = ids.clone();
    unique.dedup();
    assert_eq!(ids, unique);
}

/// A loop `x = x + 1` in task 1 (read at site 1, write at site 2, twice) and a write of X by
/// task 2: the lost update (read, remote write, write) and the stale read across iterations
/// (write, remote write, read) share their three sites but are two interleavings, so two
/// candidates, each aiming at its own order.
#[test]
fn one_site_set_in_two_orders_is_two_candidates() {
    let mut t = Trace::main_spawning(2);
    t.read(1, 1, X).write(1, 2, X).read(1, 1, X).write(1, 2, X);
    t.write(2, 3, X);
    let p = predict(&t.build(), &Options::default());
    let mut orders: Vec<_> = p
        .of_kind(CandidateKind::AccessAtomicity)
        .map(|c| {
            assert_eq!(c.evidence.triples.len(), 1, "{c:?}");
            let tr = c.evidence.triples.iter().next().unwrap();
            let order = [tr.first, tr.remote, tr.second];
            assert_eq!(
                c.id,
                ordered_candidate_id(CandidateKind::AccessAtomicity, &order)
            );
            (order, tr.kinds)
        })
        .collect();
    orders.sort_unstable();
    assert_eq!(
        orders,
        [
            ([1, 3, 2], AccessPattern::Rww),
            ([2, 3, 1], AccessPattern::Wwr)
        ]
    );
}
