//! The seed papers' figures, as traces, with exact expectations.

mod common;

use common::Trace;
use jostle_checker::{
    AccessKind, Analysis, CS_LOCK, CandidateKind, LockRef, Options, atomicity, hb, hybrid,
    igoodlock, predict,
};
use jostle_kernel::event::EXECUTOR_CLASS;

const X: u32 = 0x100;
const Y: u32 = 0x104;
const Z: u32 = 0x108;
const L: u32 = 0x2000;

fn pairs(p: &[jostle_checker::RacePair]) -> Vec<(u32, u32)> {
    p.iter().map(|p| p.sites()).collect()
}

/// racefuzzer-pldi08 Figure 1, thread1 runs fully, then thread2 (which sees y == 1 and
/// executes statement 10).
fn racefuzzer_figure1() -> Vec<jostle_kernel::event::Event> {
    let mut t = Trace::main_spawning(2);
    t.write(1, 1, X)
        .lock(1, 2, L)
        .write(1, 3, Y)
        .unlock(1, 4, L)
        .read(1, 5, Z);
    t.write(2, 7, Z)
        .lock(2, 8, L)
        .read(2, 9, Y)
        .read(2, 10, X)
        .unlock(2, 13, L);
    t.exit(1).exit(2).join(0, 1).join(0, 2);
    t.build()
}

#[test]
fn racefuzzer_figure1_hybrid_predicts_5_7_and_1_10() {
    let trace = racefuzzer_figure1();
    let found = hybrid::detect(&trace);
    assert_eq!(pairs(&found), vec![(1, 10), (5, 7)]);
    let x = &found[0];
    assert_eq!(x.locations, vec![X]);
    assert_eq!((x.first.task, x.first.kind), (1, AccessKind::Write));
    assert_eq!((x.second.task, x.second.kind), (2, AccessKind::Read));
    // Witness indices: main start, 2 × (spawn, start) = 5 events before thread1's x = 1.
    assert_eq!((x.first.event, x.second.event), (5, 13));
    assert_eq!(found[1].locations, vec![Z]);
}

#[test]
fn racefuzzer_figure1_happens_before_sees_only_5_7() {
    let trace = racefuzzer_figure1();
    assert_eq!(pairs(&hb::detect(&trace)), vec![(5, 7)]);
}

#[test]
fn racefuzzer_figure2_hybrid_predicts_8_10_through_the_lock() {
    // thread2 first: x = 1; lock; f6; unlock. Then thread1: lock; f1..f5; unlock; read x.
    let mut t = Trace::main_spawning(2);
    t.write(2, 10, X).lock(2, 11, L).unlock(2, 13, L);
    t.lock(1, 1, L).unlock(1, 7, L).read(1, 8, X);
    let trace = t.build();
    assert_eq!(pairs(&hybrid::detect(&trace)), vec![(8, 10)]);
    assert!(hb::detect(&trace).is_empty(), "the lock orders 10 before 8");
}

#[test]
fn signals_order_accesses_for_both_detectors() {
    let mut t = Trace::main_spawning(2);
    t.write(1, 1, X)
        .signal(1, 2, 7)
        .wait(2, 3, 7)
        .write(2, 4, X);
    let ordered = t.build();
    assert!(hybrid::detect(&ordered).is_empty());
    assert!(hb::detect(&ordered).is_empty());
    // Without the wait, the writes race.
    let mut t = Trace::main_spawning(2);
    t.write(1, 1, X).signal(1, 2, 7).write(2, 4, X);
    assert_eq!(pairs(&hybrid::detect(&t.build())), vec![(1, 4)]);
    assert_eq!(pairs(&hb::detect(&t.build())), vec![(1, 4)]);
}

#[test]
fn critical_section_is_a_common_lock() {
    let mut t = Trace::main_spawning(2);
    t.events.push(jostle_kernel::event::Event::CsEnter { t: 1 });
    t.update(1, 1, X);
    t.events.push(jostle_kernel::event::Event::CsExit { t: 1 });
    t.events.push(jostle_kernel::event::Event::CsEnter { t: 2 });
    t.update(2, 2, X);
    t.events.push(jostle_kernel::event::Event::CsExit { t: 2 });
    assert!(hybrid::detect(&t.build()).is_empty());
    t.update(1, 3, X);
    assert_eq!(pairs(&hybrid::detect(&t.build())), vec![(2, 3)]);
}

#[test]
fn racefuzzer_figure1_prediction_candidates() {
    let p = predict(&racefuzzer_figure1(), &Options::default());
    let races: Vec<_> = p.of_kind(CandidateKind::Race).collect();
    assert_eq!(races.len(), 2);
    let by_sites = |s: [u32; 2]| races.iter().find(|c| c.sites == s).expect("candidate");
    let c57 = by_sites([5, 7]);
    let c110 = by_sites([1, 10]);
    assert_eq!(c57.breakpoints, vec![5, 7]);
    // z: Eraser warns (shared-modified with an empty candidate set); x stays read-shared.
    assert_eq!(
        c57.evidence.analyses,
        [Analysis::Hybrid, Analysis::HappensBefore, Analysis::Eraser].into()
    );
    assert_eq!(c110.evidence.analyses, [Analysis::Hybrid].into());
    assert_eq!(c110.evidence.tasks, [1, 2].into());
    assert_eq!(c110.evidence.locations, [X].into());
    assert_eq!(p.candidates.len(), 2, "no atomicity or deadlock candidates");
}

// ---- AtomFuzzer (atomfuzzer-fse08) ----

const ACNT: u32 = 0x3000;
const LOCK: u32 = 0x3100;

fn atom_keys(trace: &[jostle_kernel::event::Event]) -> Vec<(u8, u32, u32, u32, u32)> {
    atomicity::detect(trace, false)
        .iter()
        .map(|c| (c.task, c.block, c.lock, c.first_acquire, c.reacquire))
        .collect()
}

#[test]
fn atomfuzzer_figure1_both_threads() {
    // The paper's interleaving T1:12–14, T2:18–20, T1:15–17, T2:21–23; getBalance and
    // withdraw each lock and unlock acnt.
    let mut t = Trace::main_spawning(2);
    t.atomic(1, 12).lock(1, 13, ACNT).unlock(1, 4, ACNT);
    t.atomic(2, 18).lock(2, 19, ACNT).unlock(2, 4, ACNT);
    t.lock(1, 15, ACNT)
        .update(1, 7, 0x50)
        .unlock(1, 9, ACNT)
        .end_atomic(1, 12);
    t.lock(2, 21, ACNT)
        .update(2, 7, 0x50)
        .unlock(2, 9, ACNT)
        .end_atomic(2, 18);
    let trace = t.build();
    assert_eq!(
        atom_keys(&trace),
        vec![(1, 12, ACNT, 13, 15), (2, 18, ACNT, 19, 21)]
    );
    let p = predict(&trace, &Options::default());
    let atoms: Vec<_> = p.of_kind(CandidateKind::Atomicity).collect();
    assert_eq!(atoms.len(), 2);
    let c = atoms
        .iter()
        .find(|c| c.sites == [12, 13, 15])
        .expect("T1's");
    assert_eq!(c.breakpoints, vec![15]);
    assert_eq!(
        c.evidence.locks,
        [LockRef {
            id: ACNT,
            class: ACNT
        }]
        .into()
    );
    assert_eq!(c.evidence.analyses, [Analysis::AtomicityPattern].into());
    // T2's acquires of acnt are where another task would break T1's block.
    assert_eq!(c.evidence.interleavers, [19, 21].into());
    assert!(p.of_kind(CandidateKind::Race).next().is_none(), "race-free");
}

#[test]
fn atomfuzzer_figure2_serial_run_still_predicts() {
    let mut t = Trace::main_spawning(2);
    t.atomic(1, 12).lock(1, 13, ACNT).unlock(1, 4, ACNT);
    t.lock(1, 15, ACNT).unlock(1, 9, ACNT).end_atomic(1, 12);
    for s in 18..=23 {
        t.frame(2, s).end_frame(2, s);
    }
    t.atomic(2, 24).lock(2, 25, ACNT).unlock(2, 4, ACNT);
    t.lock(2, 27, ACNT).unlock(2, 9, ACNT).end_atomic(2, 24);
    assert_eq!(
        atom_keys(&t.build()),
        vec![(1, 12, ACNT, 13, 15), (2, 24, ACNT, 25, 27)]
    );
}

#[test]
fn atomfuzzer_figure3_gate_lock_still_warns() {
    // Each block holds `lock` throughout: no real violation, but the pattern is there (the
    // active phase refutes it).
    let mut t = Trace::main_spawning(2);
    for (task, b) in [(1u8, 13u32), (2, 21)] {
        t.atomic(task, b).lock(task, b + 1, LOCK);
        t.lock(task, b + 2, ACNT).unlock(task, 4, ACNT);
        t.lock(task, b + 4, ACNT).unlock(task, 9, ACNT);
        t.unlock(task, b + 6, LOCK).end_atomic(task, b);
    }
    assert_eq!(
        atom_keys(&t.build()),
        vec![(1, 13, ACNT, 15, 17), (2, 21, ACNT, 23, 25)]
    );
}

#[test]
fn atomicity_needs_a_block() {
    let mut t = Trace::main_spawning(1);
    t.lock(1, 1, ACNT)
        .unlock(1, 2, ACNT)
        .lock(1, 3, ACNT)
        .unlock(1, 4, ACNT);
    assert!(atomicity::detect(&t.build(), true).is_empty());
    // A re-acquire after the block ended is not in the block.
    let mut t = Trace::main_spawning(1);
    t.atomic(1, 10)
        .lock(1, 1, ACNT)
        .unlock(1, 2, ACNT)
        .end_atomic(1, 10);
    t.lock(1, 3, ACNT).unlock(1, 4, ACNT);
    assert!(atomicity::detect(&t.build(), false).is_empty());
}

#[test]
fn atomizer_heuristic_uses_outermost_critical_sections() {
    let mut t = Trace::main_spawning(1);
    t.lock(1, 1, LOCK);
    t.lock(1, 2, ACNT)
        .unlock(1, 3, ACNT)
        .lock(1, 4, ACNT)
        .unlock(1, 5, ACNT);
    t.unlock(1, 6, LOCK);
    let trace = t.build();
    let found = atomicity::detect(&trace, true);
    assert_eq!(found.len(), 1);
    let c = &found[0];
    assert_eq!(
        (c.block, c.lock, c.first_acquire, c.reacquire),
        (1, ACNT, 2, 4)
    );
    assert!(c.heuristic);
    assert!(atomicity::detect(&trace, false).is_empty());
    let p = predict(&trace, &Options::default());
    let a = p
        .of_kind(CandidateKind::Atomicity)
        .next()
        .expect("candidate");
    assert_eq!(a.evidence.analyses, [Analysis::AtomizerHeuristic].into());
    // Any annotation in the trace turns the heuristic off.
    t.atomic(1, 99).end_atomic(1, 99);
    assert!(atomicity::detect(&t.build(), true).is_empty());
}

// ---- iGoodlock ----

const A: u32 = 0xA0;
const B: u32 = 0xB0;
const C: u32 = 0xC0;
const G: u32 = 0x60;
/// An executor's lock.
const E: u32 = 0xE0;

#[test]
fn abba_gives_one_cycle() {
    let mut t = Trace::main_spawning(2);
    t.lock(1, 1, A)
        .lock(1, 2, B)
        .unlock(1, 3, B)
        .unlock(1, 4, A);
    t.lock(2, 5, B)
        .lock(2, 6, A)
        .unlock(2, 7, A)
        .unlock(2, 8, B);
    let trace = t.build();
    let cycles = igoodlock::detect(&trace, 4);
    assert_eq!(cycles.len(), 1);
    let comps = &cycles[0].components;
    assert_eq!(comps.len(), 2);
    assert_eq!(
        (comps[0].task, comps[0].site, comps[0].wanted.id),
        (1, 2, B)
    );
    assert_eq!(comps[0].held, vec![LockRef { id: A, class: A }]);
    assert_eq!(comps[0].context, vec![1, 2]);
    assert_eq!(
        (comps[1].task, comps[1].site, comps[1].wanted.id),
        (2, 6, A)
    );
    assert_eq!(comps[1].context, vec![5, 6]);
    let p = predict(&trace, &Options::default());
    let d: Vec<_> = p.of_kind(CandidateKind::Deadlock).collect();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].breakpoints, vec![2, 6]);
    assert_eq!(d[0].sites, vec![1, 2, 5, 6]);
    assert_eq!(d[0].evidence.tasks, [1, 2].into());
    assert_eq!(d[0].evidence.cycles.len(), 1);
}

#[test]
fn gate_lock_suppresses_the_cycle() {
    let mut t = Trace::main_spawning(2);
    t.lock(1, 10, G).lock(1, 1, A).lock(1, 2, B);
    t.unlock(1, 3, B).unlock(1, 4, A).unlock(1, 11, G);
    t.lock(2, 12, G).lock(2, 5, B).lock(2, 6, A);
    t.unlock(2, 7, A).unlock(2, 8, B).unlock(2, 13, G);
    assert!(igoodlock::detect(&t.build(), 4).is_empty());
}

#[test]
fn one_task_cannot_deadlock_with_itself() {
    let mut t = Trace::main_spawning(1);
    t.lock(1, 1, A)
        .lock(1, 2, B)
        .unlock(1, 3, B)
        .unlock(1, 4, A);
    t.lock(1, 5, B)
        .lock(1, 6, A)
        .unlock(1, 7, A)
        .unlock(1, 8, B);
    assert!(igoodlock::detect(&t.build(), 4).is_empty());
}

#[test]
fn three_cycle_needs_k_at_least_3() {
    let mut t = Trace::main_spawning(3);
    for (task, (x, y)) in [(1u8, (A, B)), (2, (B, C)), (3, (C, A))] {
        let s = task as u32 * 10;
        t.lock(task, s, x).lock(task, s + 1, y);
        t.unlock(task, s + 2, y).unlock(task, s + 3, x);
    }
    let trace = t.build();
    assert!(igoodlock::detect(&trace, 2).is_empty());
    let cycles = igoodlock::detect(&trace, 3);
    assert_eq!(cycles.len(), 1);
    let tasks: Vec<u8> = cycles[0].components.iter().map(|c| c.task).collect();
    assert_eq!(tasks, vec![1, 2, 3]);
    assert_eq!(igoodlock::detect(&trace, 4), cycles);
}

#[test]
fn a_guard_held_across_an_await_closes_no_cycle_through_the_executors_lock() {
    // mutex_held_across_timer's shape: the calibrator's poll takes the async mutex A and
    // returns holding it (its guard lives across an `.await`), and its next poll takes the
    // executor's lock E again; a reader's poll takes A under E. With E an ordinary lock
    // that is a cycle; as the executor's (its class), A's acquire inside the poll never
    // waits, and there is none.
    let trace = |class: u32| {
        let mut t = Trace::main_spawning(2);
        t.lock_class(1, 1, E, class).lock(1, 2, A).unlock(1, 3, E);
        t.lock_class(1, 1, E, class).unlock(1, 4, A).unlock(1, 3, E);
        t.lock_class(2, 5, E, class).lock(2, 6, A).unlock(2, 7, A);
        t.unlock(2, 8, E);
        t.build()
    };
    assert_eq!(igoodlock::detect(&trace(E), 4).len(), 1);
    assert!(igoodlock::detect(&trace(EXECUTOR_CLASS), 4).is_empty());
    let p = predict(&trace(EXECUTOR_CLASS), &Options::default());
    assert_eq!(p.of_kind(CandidateKind::Deadlock).count(), 0);
}

#[test]
fn critical_section_takes_part_in_cycles() {
    let mut t = Trace::main_spawning(2);
    t.lock(1, 1, A);
    t.events.push(jostle_kernel::event::Event::CsEnter { t: 1 });
    t.events.push(jostle_kernel::event::Event::CsExit { t: 1 });
    t.unlock(1, 2, A);
    t.events.push(jostle_kernel::event::Event::CsEnter { t: 2 });
    t.lock(2, 3, A).unlock(2, 4, A);
    t.events.push(jostle_kernel::event::Event::CsExit { t: 2 });
    let cycles = igoodlock::detect(&t.build(), 4);
    assert_eq!(cycles.len(), 1);
    assert_eq!(cycles[0].components[0].wanted.id, CS_LOCK);
}

#[test]
fn relations_come_with_the_prediction() {
    let mut t = Trace::main_spawning(1);
    t.frame(1, 500)
        .lock(1, 1, A)
        .unlock(1, 2, A)
        .end_frame(1, 500);
    let p = predict(&t.build(), &Options::default());
    assert_eq!(
        p.relations,
        vec![jostle_checker::MayTrigger {
            frame: 500,
            class: A
        }]
    );
}
