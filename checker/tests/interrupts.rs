//! Interrupt handlers as contexts, masks as locks (crate::irq), on hand-written traces.

mod common;

use common::{Trace, h};
use jostle_checker::{
    Analysis, CandidateKind, Options, RacePair, hb, hybrid, lockset, mixed, predict,
};
use jostle_kernel::event::Event;

const X: u32 = 0x2000_0100;
const ALL: u8 = 0xFF;

fn pairs(p: &[RacePair]) -> Vec<(u32, u32)> {
    p.iter().map(RacePair::sites).collect()
}

/// The race candidates `predict` makes (every race analysis on), by site pair.
fn race_candidates(trace: &[Event]) -> Vec<Vec<u32>> {
    let opts = Options {
        precise_lockset: true,
        ..Options::default()
    };
    let mut v: Vec<Vec<u32>> = predict(trace, &opts)
        .of_kind(CandidateKind::Race)
        .map(|c| c.sites.clone())
        .collect();
    v.sort();
    v
}

/// Task 1 updates x in a critical section; handler 0 updates x before and after.
#[test]
fn a_task_in_the_critical_section_and_a_handler_do_not_race() {
    let mut t = Trace::main_spawning(1);
    t.irq(0, 1, 1).update(h(0), 1, X).end_irq(0);
    t.cs(1).update(1, 2, X).end_cs(1);
    t.irq(0, 1, 1).update(h(0), 3, X).end_irq(0);
    let trace = t.build();
    assert!(hybrid::detect(&trace).is_empty());
    assert!(hb::detect(&trace).is_empty());
    assert!(lockset::precise(&trace).is_empty());
    assert!(lockset::eraser(&trace).is_empty());
    assert!(race_candidates(&trace).is_empty());
    // Outside the critical section the task races with both firings.
    t.update(1, 4, X);
    let trace = t.build();
    assert_eq!(pairs(&hybrid::detect(&trace)), vec![(1, 4), (3, 4)]);
    assert_eq!(race_candidates(&trace), vec![vec![1, 4], vec![3, 4]]);
}

#[test]
fn a_handler_and_the_unmasked_task_race() {
    let mut t = Trace::main_spawning(1);
    t.update(1, 1, X).irq(0, 3, 1).update(h(0), 2, X).end_irq(0);
    let trace = t.build();
    assert_eq!(pairs(&hybrid::detect(&trace)), vec![(1, 2)]);
    // No happens-before from the preempted task to its handler: the race happened.
    assert_eq!(pairs(&hb::detect(&trace)), vec![(1, 2)]);
    let p = predict(&trace, &Options::default());
    let c = p.of_kind(CandidateKind::Race).next().expect("a race");
    assert_eq!(c.evidence.tasks, [1, h(0)].into());
    assert!(c.evidence.analyses.contains(&Analysis::Hybrid));
}

/// Task 1 writes x with source 0 masked: handler 0 cannot interleave, handler 1 can.
#[test]
fn a_masked_source_keeps_its_handler_out_but_not_another() {
    for handler_first in [false, true] {
        let mut t = Trace::main_spawning(1);
        if handler_first {
            t.irq(0, 2, 1).read(h(0), 2, X).end_irq(0);
        }
        t.mask(1, 10, 0).write(1, 1, X).unmask(1, 11, 0);
        if !handler_first {
            t.irq(0, 2, 1).read(h(0), 2, X).end_irq(0);
        }
        // Priority 1: no level edge from handler 0 for the precise detector.
        t.irq(1, 1, 1).read(h(1), 3, X).end_irq(1);
        let trace = t.build();
        assert_eq!(
            pairs(&hybrid::detect(&trace)),
            vec![(1, 3)],
            "{handler_first}"
        );
        assert_eq!(pairs(&hb::detect(&trace)), vec![(1, 3)], "{handler_first}");
        assert_eq!(race_candidates(&trace), vec![vec![1, 3]], "{handler_first}");
    }
}

#[test]
fn masking_all_sources_keeps_every_handler_out_until_one_is_enabled() {
    let mut t = Trace::main_spawning(1);
    t.mask(1, 10, ALL)
        .write(1, 1, X)
        .unmask(1, 11, 2)
        .write(1, 4, X);
    t.irq(0, 2, 1).read(h(0), 2, X).end_irq(0);
    t.irq(2, 2, 1).read(h(2), 3, X).end_irq(2);
    // Site 1: all masked. Site 4: all but source 2 masked.
    assert_eq!(pairs(&hybrid::detect(&t.build())), vec![(3, 4)]);
    t.unmask(1, 12, ALL).write(1, 5, X);
    assert_eq!(
        pairs(&hybrid::detect(&t.build())),
        vec![(2, 5), (3, 4), (3, 5)]
    );
}

/// BASEPRI at level m keeps out the sources of priority value m or more.
#[test]
fn a_priority_mask_keeps_out_handlers_at_or_below_its_level() {
    let mut t = Trace::main_spawning(1);
    t.irq(0, 2, 1).read(h(0), 2, X).end_irq(0);
    t.prio(1, 10, 2).write(1, 1, X).prio(1, 11, 0);
    t.irq(1, 1, 1).read(h(1), 3, X).end_irq(1);
    t.irq(2, 3, 1).read(h(2), 4, X).end_irq(2);
    let trace = t.build();
    assert_eq!(pairs(&hybrid::detect(&trace)), vec![(1, 3)]);
    assert_eq!(pairs(&hb::detect(&trace)), vec![(1, 3)]);
    assert_eq!(race_candidates(&trace), vec![vec![1, 3]]);
}

/// Handlers of equal priority never preempt each other; a more urgent one preempts both
/// (the `irq_nested` example: a low handler's read-then-write, a high handler's update).
#[test]
fn equal_priority_handlers_do_not_race_a_more_urgent_one_does() {
    let mut t = Trace::main_spawning(0);
    t.irq(0, 2, 0).read(h(0), 1, X).write(h(0), 2, X).end_irq(0);
    t.irq(1, 2, 0).update(h(1), 3, X).end_irq(1);
    let trace = t.build();
    assert!(hybrid::detect(&trace).is_empty());
    assert!(hb::detect(&trace).is_empty());
    assert!(race_candidates(&trace).is_empty());
    t.irq(2, 1, 0).update(h(2), 4, X).end_irq(2);
    let trace = t.build();
    assert_eq!(pairs(&hybrid::detect(&trace)), vec![(1, 4), (2, 4), (3, 4)]);
    // FastTrack compares with the last write (3) and the read epoch (1).
    assert_eq!(pairs(&hb::detect(&trace)), vec![(1, 4), (3, 4)]);
    // The fix: the low handler masks the high priority.
    let mut t = Trace::main_spawning(0);
    t.irq(0, 2, 0)
        .prio(h(0), 10, 1)
        .read(h(0), 1, X)
        .write(h(0), 2, X)
        .prio(h(0), 11, 0)
        .end_irq(0);
    t.irq(2, 1, 0).update(h(2), 4, X).end_irq(2);
    assert!(hybrid::detect(&t.build()).is_empty());
    assert!(race_candidates(&t.build()).is_empty());
}

/// A handler's own critical section does not keep out a more urgent handler's accesses
/// from its unmasked ones, nor its own from a less urgent handler.
#[test]
fn a_handlers_critical_section_only_masks_those_that_could_preempt_it() {
    let mut t = Trace::main_spawning(0);
    t.irq(0, 2, 0).write(h(0), 1, X).end_irq(0);
    t.irq(1, 1, 0)
        .cs(h(1))
        .write(h(1), 2, X)
        .end_cs(h(1))
        .end_irq(1);
    assert_eq!(pairs(&hybrid::detect(&t.build())), vec![(1, 2)]);
    let mut t = Trace::main_spawning(0);
    t.irq(0, 2, 0)
        .cs(h(0))
        .write(h(0), 1, X)
        .end_cs(h(0))
        .end_irq(0);
    t.irq(1, 1, 0).write(h(1), 2, X).end_irq(1);
    assert!(hybrid::detect(&t.build()).is_empty());
}

/// Masks do not keep tasks apart (the scheduler still switches), unlike the critical
/// section.
#[test]
fn two_tasks_masking_the_same_source_still_race() {
    let mut t = Trace::main_spawning(2);
    t.mask(1, 10, 0).update(1, 1, X).unmask(1, 11, 0);
    t.mask(2, 10, 0).update(2, 2, X).unmask(2, 11, 0);
    assert_eq!(pairs(&hybrid::detect(&t.build())), vec![(1, 2)]);
    let mut t = Trace::main_spawning(2);
    t.cs(1).update(1, 1, X).end_cs(1);
    t.cs(2).update(2, 2, X).end_cs(2);
    assert!(hybrid::detect(&t.build()).is_empty());
}

#[test]
fn a_request_happens_before_the_next_firing_of_its_source() {
    let mut t = Trace::main_spawning(1);
    t.write(1, 1, X).request(1, 10, 0);
    t.irq(0, 1, 1).read(h(0), 2, X).end_irq(0);
    let trace = t.build();
    assert!(hybrid::detect(&trace).is_empty());
    assert!(hb::detect(&trace).is_empty());
    // Not the firing of another source, nor what the requester does afterwards.
    t.irq(1, 1, 1).read(h(1), 3, X).end_irq(1);
    t.write(1, 4, X);
    assert_eq!(
        pairs(&hybrid::detect(&t.build())),
        vec![(1, 3), (2, 4), (3, 4)]
    );
}

/// Sources start disabled: when the first mask event naming a source enables it, what its
/// context did before happens before the handler. A first event that disables it says
/// nothing (the source may have been enabled).
#[test]
fn an_initial_enable_happens_before_the_handler() {
    for i in [0, ALL] {
        let mut t = Trace::main_spawning(1);
        t.write(1, 1, X).unmask(1, 10, i);
        t.irq(0, 1, 1).read(h(0), 2, X).end_irq(0);
        let trace = t.build();
        assert!(hybrid::detect(&trace).is_empty(), "{i}");
        assert!(hb::detect(&trace).is_empty(), "{i}");
    }
    let mut t = Trace::main_spawning(1);
    t.write(1, 1, X).mask(1, 10, 0).unmask(1, 11, 0);
    t.irq(0, 1, 1).read(h(0), 2, X).end_irq(0);
    assert_eq!(pairs(&hybrid::detect(&t.build())), vec![(1, 2)]);
}

/// Successive firings of one handler are in program order: never a race with itself.
#[test]
fn a_handler_never_races_with_itself() {
    let mut t = Trace::main_spawning(0);
    for s in 1..4 {
        t.irq(0, 1, 0).update(h(0), s, X).end_irq(0);
    }
    assert!(hybrid::detect(&t.build()).is_empty());
    assert!(lockset::precise(&t.build()).is_empty());
}

/// Eraser intersects locksets literally, a handler's implicit locks included.
#[test]
fn eraser_sees_masks_and_handlers_implicit_locks() {
    let mut t = Trace::main_spawning(1);
    t.cs(1).update(1, 1, X).end_cs(1);
    t.irq(0, 1, 1).update(h(0), 2, X).end_irq(0);
    t.cs(1).update(1, 3, X).end_cs(1);
    assert!(lockset::eraser(&t.build()).is_empty());
    t.update(1, 5, X);
    let w = lockset::eraser(&t.build());
    assert_eq!((w.len(), w[0].site), (1, 5));
    // The handler's implicit PRIO_LOCK(1) comes from the trace's levels: known in advance
    // with the pre-scan, only once seen without it.
    let mut t = Trace::main_spawning(1);
    t.cs(1).update(1, 1, X).end_cs(1);
    t.irq(0, 1, 1).update(h(0), 2, X).end_irq(0);
    t.prio(1, 10, 1).update(1, 3, X).prio(1, 11, 0);
    let trace = t.build();
    assert!(lockset::eraser(&trace).is_empty());
    let mut streaming = lockset::Eraser::new();
    trace.iter().for_each(|e| streaming.on_event(e));
    assert_eq!(streaming.finish().len(), 1);
}

/// `feed` (batched) gives what `on_event` gives, with interrupts and atomics in the trace.
#[test]
fn streaming_equals_whole_trace_detection() {
    let mut t = Trace::main_spawning(2);
    t.mask(1, 10, 0).write(1, 1, X).unmask(1, 11, 0);
    t.irq(0, 2, 1)
        .read(h(0), 2, X)
        .store(h(0), 5, 0x44, 1)
        .end_irq(0);
    t.load(2, 6, 0x44, 2).write(2, 3, X);
    t.irq(1, 1, 2).update(h(1), 4, X).end_irq(1);
    let trace = t.build();
    let mut one = hybrid::HybridDetector::new();
    for ev in &trace {
        one.on_event(ev);
    }
    let one = pairs(&one.finish());
    assert_eq!(pairs(&hybrid::detect(&trace)), one);
    // Handler 0's store releases what it did; task 2 acquires it.
    assert_eq!(one, vec![(1, 3), (1, 4), (2, 4), (3, 4)]);
    assert!(mixed::detect(&trace).is_empty());
}
