//! The core's unit tests: scripted tasks through both paths, each strategy on a small
//! program of its paper.

use super::*;
use std::vec::Vec;

#[derive(Default)]
struct Rec(Vec<Event>);
impl Sink for Rec {
    fn emit(&mut self, e: &Event) {
        self.0.push(*e);
    }
}

fn core(seed: u64) -> Core<Rec> {
    let config = Config {
        seed,
        ..Config::default()
    };
    Core::new(&config, 0, Rec::default())
}

#[test]
fn op_level_is_its_event_level() {
    let ops = crate::op::one_of_each();
    for op in ops {
        if let Some(event) = op.event(0) {
            assert_eq!(op.level(), event.level(), "{op:?}");
        }
    }
}

#[test]
fn main_task_starts_then_passes() {
    let mut c = core(1);
    assert_eq!(c.decide(), Next::Run(0));
    assert_eq!(c.exit(0), Next::End(Verdict::Pass));
    let kinds: Vec<_> = c.sink.0.iter().map(|e| e.kind()).collect();
    use crate::event::EventKind::*;
    assert_eq!(kinds, [RunStart, TaskStart, TaskExit, RunEnd]);
}

#[test]
fn abba_blocks_and_reports_holders() {
    let mut c = core(3);
    assert_eq!(c.decide(), Next::Run(0));
    let a = c.reserve().unwrap();
    assert_eq!(c.point(0, Op::Spawn { s: 1, child: a }), Next::Run(0));
    // Main takes lock 10, then the child must run.
    assert_eq!(c.point(0, Op::Acquire { s: 2, l: 10, c: 10 }), Next::Run(0));
    // Main waits for 20; the child is only Start-enabled.
    let mut next = c.point(0, Op::Acquire { s: 3, l: 20, c: 20 });
    if next == Next::Run(0) {
        // Main took 20 as well: release both so the child can go; not the case we test.
        return;
    }
    assert_eq!(next, Next::Run(a));
    next = c.point(a, Op::Acquire { s: 4, l: 20, c: 20 });
    // Child takes 20 (main is still enabled for 20 too until then; either may win).
    if next == Next::Run(a) {
        next = c.point(a, Op::Acquire { s: 5, l: 10, c: 10 });
        assert_eq!(next, Next::End(Verdict::Deadlock));
        let blocked: Vec<_> = c
            .sink
            .0
            .iter()
            .filter(|e| matches!(e, Event::Blocked { .. }))
            .collect();
        assert_eq!(blocked.len(), 2);
        assert!(blocked.contains(&&Event::Blocked {
            t: 0,
            s: 3,
            kind: 0,
            on: 20,
            holder: a
        }));
    }
}

#[test]
fn join_waits_for_child_and_step_limit_ends_runs() {
    let config = Config {
        step_limit: 5,
        ..Config::default()
    };
    let mut c = Core::new(&config, 0, Rec::default());
    c.decide();
    let a = c.reserve().unwrap();
    c.point(0, Op::Spawn { s: 1, child: a });
    let next = c.point(0, Op::Join { s: 2, child: a });
    // Only the child can run until it exits.
    assert_eq!(next, Next::Run(a));
    // Steps so far: start, spawn, child start. Two yields reach the limit of 5.
    for _ in 0..2 {
        assert_eq!(c.point(a, Op::Yield { s: 3 }), Next::Run(a));
    }
    assert_eq!(
        c.point(a, Op::Yield { s: 3 }),
        Next::End(Verdict::StepLimit)
    );
    assert_eq!(c.steps(), 5);
}

/// Main spawns a task, takes lock 10 and stands before its release, the spawned task
/// enabled (it only yields): the core and the task's id.
fn holding_lock_beside_an_enabled_task(config: &Config) -> (Core<Rec>, TaskId) {
    let mut c = Core::new(config, 0, Rec::default());
    c.decide();
    let a = c.reserve().unwrap();
    for op in [
        Op::Spawn { s: 1, child: a },
        Op::Acquire { s: 3, l: 10, c: 10 },
    ] {
        let mut next = c.point(0, op);
        while next != Next::Run(0) {
            assert_eq!(next, Next::Run(a));
            next = c.point(a, Op::Yield { s: 2 });
        }
    }
    (c, a)
}

#[test]
fn a_release_executed_now_takes_no_decision_and_frees_the_lock() {
    let release = Op::Release { s: 4, l: 10 };
    let mut switched = 0;
    for seed in 0..64 {
        let config = Config {
            seed,
            ..Config::default()
        };
        // At a point before the release, the other task may go first...
        let (mut c, a) = holding_lock_beside_an_enabled_task(&config);
        if c.point(0, release) == Next::Run(a) {
            switched += 1;
        }
        // ...executed now, the release never lets it: main goes on, the lock is free, and
        // the release is a step with its event, as the loop's.
        let (mut c, _) = holding_lock_beside_an_enabled_task(&config);
        let steps = c.steps();
        assert_eq!(c.execute_now(0, release), Next::Run(0), "seed {seed}");
        assert_eq!(c.steps(), steps + 1);
        assert_eq!(c.sink.0.last(), Some(&Event::Release { t: 0, s: 4, l: 10 }));
        assert!(c.locks.is_empty());
        // At the step limit, the loop ends the run there, as at any point.
        let config = Config {
            step_limit: steps,
            ..config
        };
        let (mut c, _) = holding_lock_beside_an_enabled_task(&config);
        assert_eq!(c.execute_now(0, release), Next::End(Verdict::StepLimit));
    }
    assert!(switched > 0, "the point before a release never switched");
}

#[test]
fn a_signal_executed_now_takes_no_decision_and_enables_its_waiter() {
    let signal = Op::Signal { s: 8, g: 20 };
    // Main spawns a task that waits on signal 20 and one that only yields, and stands
    // before the signal once the first waits: the core and the two tasks.
    let start = |config: &Config| {
        let mut c = Core::new(config, 0, Rec::default());
        c.decide();
        let (a, b) = (c.reserve().unwrap(), c.reserve().unwrap());
        let mut next = c.point(0, Op::Spawn { s: 1, child: a });
        let mut waiting = false;
        let mut spawned = false;
        loop {
            next = match next {
                Next::Run(0) if !spawned => {
                    spawned = true;
                    c.point(0, Op::Spawn { s: 1, child: b })
                }
                Next::Run(0) if waiting => return (c, a, b),
                Next::Run(0) => c.point(0, Op::Yield { s: 2 }),
                Next::Run(t) if t == a => {
                    waiting = true;
                    c.point(a, Op::Wait { s: 9, g: 20 })
                }
                Next::Run(t) => c.point(t, Op::Yield { s: 3 }),
                other => panic!("{other:?}"),
            };
        }
    };
    let mut switched = 0;
    for seed in 0..64 {
        let config = Config {
            seed,
            ..Config::default()
        };
        // At a point before the signal, the other task may go first...
        let (mut c, _, b) = start(&config);
        if c.point(0, signal) == Next::Run(b) {
            switched += 1;
        }
        // ...executed now, the signal never lets it: main goes on, the waiter is enabled.
        let (mut c, a, _) = start(&config);
        assert!(!c.enabled_tasks().0.contains(a));
        assert_eq!(c.execute_now(0, signal), Next::Run(0), "seed {seed}");
        assert_eq!(c.sink.0.last(), Some(&Event::Signal { t: 0, s: 8, g: 20 }));
        assert!(c.enabled_tasks().0.contains(a));
    }
    assert!(switched > 0, "the point before a signal never switched");
}

#[test]
fn trace_level_filters_accesses() {
    let config = Config {
        trace: TraceLevel::Sync,
        ..Config::default()
    };
    let mut c = Core::new(&config, 0, Rec::default());
    c.decide();
    c.point(0, Op::Read { s: 1, a: 2 });
    c.point(0, Op::Acquire { s: 1, l: 2, c: 2 });
    assert!(!c.sink.0.iter().any(|e| matches!(e, Event::Read { .. })));
    assert!(c.sink.0.iter().any(|e| matches!(e, Event::Acquire { .. })));
}

/// Runs scripted tasks: main spawns one task per program, then joins them all.
fn simulate(config: &Config, programs: &[&[Op]]) -> (Verdict, Vec<Event>) {
    simulate_with(config, programs, true)
}

/// `lean`: scheduling points go through [`Core::point`] (the lean path where it
/// applies, and [`Core::stopped_at`]'s shortcut for a lone task); otherwise always through
/// the general loop.
fn simulate_with(config: &Config, programs: &[&[Op]], lean: bool) -> (Verdict, Vec<Event>) {
    let (verdict, events, _) = schedule_of(config, programs, lean);
    (verdict, events)
}

/// As [`simulate_with`], with the schedule: the task that runs after each point, then the
/// number of steps.
fn schedule_of(config: &Config, programs: &[&[Op]], lean: bool) -> (Verdict, Vec<Event>, Vec<u32>) {
    schedule_with_irqs(config, programs, &[], lean)
}

/// A scripted interrupt handler: its source and the operations it performs each firing.
type Handler<'a> = (irq::IrqSource, &'a [Op]);

/// Runs source `i`'s handler to completion, as the ports do (nested firings included).
/// `None`: the run ended inside it.
fn fire(c: &mut Core<Rec>, handlers: &[Handler<'_>], i: u8, by: TaskId) -> Option<Verdict> {
    let ctx = c.irq_enter(i, by);
    for op in handlers[i as usize].1 {
        let mut next = c.handler_point(ctx, *op);
        loop {
            match next {
                irq::HandlerNext::Run => break,
                irq::HandlerNext::Fire(j) => {
                    if let Some(v) = fire(c, handlers, j, ctx) {
                        return Some(v);
                    }
                    next = c.handler_resume(ctx);
                }
                irq::HandlerNext::End(v) => return Some(v),
            }
        }
    }
    c.irq_exit(i);
    None
}

/// As [`schedule_of`], with interrupt handlers declared (the main task enables them all
/// first).
fn schedule_with_irqs(
    config: &Config,
    programs: &[&[Op]],
    handlers: &[Handler<'_>],
    lean: bool,
) -> (Verdict, Vec<Event>, Vec<u32>) {
    let mut c = Core::new(config, 0, Rec::default());
    let (verdict, schedule) = drive(&mut c, programs, handlers, lean);
    (verdict, c.sink.0, schedule)
}

/// Runs `programs` (and `handlers`) on `c`, started, to the run's end: the verdict and
/// the schedule, as [`schedule_with_irqs`] gives them.
fn drive(
    c: &mut Core<Rec>,
    programs: &[&[Op]],
    handlers: &[Handler<'_>],
    lean: bool,
) -> (Verdict, Vec<u32>) {
    let mut schedule = Vec::new();
    let sources: Vec<irq::IrqSource> = handlers.iter().map(|h| h.0).collect();
    c.declare_irqs(&sources);
    let mut main: Vec<Op> = Vec::new();
    let mut ids = Vec::new();
    let mut scripts: Vec<Vec<Op>> = vec![Vec::new(); MAX_TASKS];
    for p in programs {
        let id = c.reserve().unwrap();
        ids.push(id);
        scripts[id as usize] = p.to_vec();
        main.push(Op::Spawn { s: 1, child: id });
    }
    for id in &ids {
        main.push(Op::Join { s: 2, child: *id });
    }
    if !handlers.is_empty() {
        main.insert(
            0,
            Op::IrqMask {
                s: 3,
                i: crate::op::ALL_IRQS,
                on: false,
            },
        );
    }
    scripts[0] = main;
    let mut pc = [0usize; MAX_TASKS];
    let mut cas: [Option<(u32, u32)>; MAX_TASKS] = [None; MAX_TASKS];
    let mut running = 0;
    let mut next = c.decide();
    loop {
        match next {
            Next::End(v) => {
                schedule.push(c.steps());
                return (v, schedule);
            }
            Next::Fire(i) => {
                schedule.push(1000 + u32::from(i));
                next = match fire(c, handlers, i, running) {
                    Some(v) => Next::End(v),
                    None => c.resume(),
                };
            }
            Next::Run(t) => {
                schedule.push(u32::from(t));
                running = t;
                let i = t as usize;
                // A compare-and-swap's outcome follows its point, when its task goes on (as
                // the API reports it): those at site 6 fail, the others succeed.
                if let Some((s, a)) = cas[i].take() {
                    c.cas_outcome(t, s, a, 4, 4, s != 6);
                }
                next = match scripts[i].get(pc[i]) {
                    Some(op) => {
                        pc[i] += 1;
                        if let Op::AtomicAccess {
                            s,
                            a,
                            kind: crate::op::AtomicKind::Cas,
                            ..
                        } = *op
                        {
                            cas[i] = Some((s, a));
                        }
                        if lean {
                            c.point(t, *op)
                        } else {
                            // The loop itself, not `stopped_at`: its shortcut for a task
                            // that runs alone is checked against it too.
                            c.stop(t, *op);
                            c.decide()
                        }
                    }
                    None => c.exit(t),
                };
            }
        }
    }
}

fn with(strategy: crate::config::StrategyId, seed: u64, bps: &[(u32, u32)]) -> Config {
    let mut config = Config {
        seed,
        strategy,
        ..Config::default()
    };
    for (site, aux) in bps {
        config
            .breakpoints
            .push(crate::config::Breakpoint {
                site: *site,
                aux: *aux,
            })
            .unwrap();
    }
    config
}

use crate::config::StrategyId;
use crate::targets::{aux, role};

/// Work of a task's own before it reaches a site of interest: writes to a location of its
/// own (progress: yields with nothing changed in between would be a spin, `sched::spin`).
const FILLER: [Op; 6] = [Op::Write { s: 9, a: 99 }; 6];

/// An operation of a generated program: accesses on two locations at four sites, yields,
/// and balanced lock sections on two locks (a write or a yield inside).
fn arb_step() -> impl proptest::strategy::Strategy<Value = Vec<Op>> {
    use proptest::prelude::*;
    prop_oneof![
        (1u32..5, 100u32..102).prop_map(|(s, a)| vec![Op::Read { s, a }]),
        (1u32..5, 100u32..102).prop_map(|(s, a)| vec![Op::Write { s, a }]),
        (1u32..5, 100u32..102).prop_map(|(s, a)| vec![Op::Update { s, a }]),
        (1u32..5).prop_map(|s| vec![Op::Yield { s }]),
        // A failed wait: a compare-and-swap (`drive` fails those at site 6).
        (100u32..102).prop_map(|a| vec![Op::AtomicAccess {
            s: 6,
            a,
            kind: crate::op::AtomicKind::Cas,
            ord: 4,
        }]),
        // A spin: the same read and yield, twice, changing nothing.
        (1u32..5, 100u32..102).prop_map(|(s, a)| vec![
            Op::Read { s, a },
            Op::Yield { s: 5 },
            Op::Read { s, a },
            Op::Yield { s: 5 },
        ]),
        (200u32..202, 1u32..5, 100u32..102).prop_map(|(l, s, a)| vec![
            Op::Acquire { s: 10 + s, l, c: l },
            Op::Write { s, a },
            Op::Release { s: 20 + s, l },
        ]),
        // A yield while others wait for the lock: the yielder may be the only one that can
        // run, and what a strategy that sees yields learns from it decides the next pick.
        (200u32..202, 1u32..5).prop_map(|(l, s)| vec![
            Op::Acquire { s: 10 + s, l, c: l },
            Op::Yield { s },
            Op::Release { s: 20 + s, l },
        ]),
    ]
}

proptest::proptest! {
    /// The lean path takes exactly the general loop's decisions: same schedule, same events,
    /// same verdict and steps, for every strategy, with breakpoints on some of the sites and
    /// step limits that cut some runs.
    #[test]
    fn lean_path_equals_the_general_loop(
        programs in proptest::collection::vec(
            proptest::collection::vec(arb_step(), 0..12), 1..4),
        seed in 0u64..1_000,
        strategy in 0u8..StrategyId::ALL.len() as u8,
        full in proptest::bool::ANY,
        step_limit in 5u32..200,
    ) {
        let config = generated_config(strategy, seed, full, step_limit);
        let programs: Vec<Vec<Op>> =
            programs.iter().map(|p| p.iter().flatten().copied().collect()).collect();
        let refs: Vec<&[Op]> = programs.iter().map(|p| p.as_slice()).collect();
        let lean = schedule_of(&config, &refs, true);
        let general = schedule_of(&config, &refs, false);
        proptest::prop_assert_eq!(lean, general);
    }

    /// The trace level changes no decision: a run recorded at the results level and
    /// replayed at full trace (the campaign's timelines, its shrinking) makes the same
    /// choices, spin releases and starvations included.
    #[test]
    fn the_trace_level_changes_no_decision(
        programs in proptest::collection::vec(
            proptest::collection::vec(arb_step(), 0..12), 1..4),
        seed in 0u64..1_000,
        strategy in 0u8..StrategyId::ALL.len() as u8,
        step_limit in 5u32..200,
    ) {
        let programs: Vec<Vec<Op>> =
            programs.iter().map(|p| p.iter().flatten().copied().collect()).collect();
        let refs: Vec<&[Op]> = programs.iter().map(|p| p.as_slice()).collect();
        let mut results = generated_config(strategy, seed, false, step_limit);
        results.trace = TraceLevel::Results;
        let full = Config { trace: TraceLevel::Full, ..results.clone() };
        let (v1, _, s1) = schedule_of(&results, &refs, true);
        let (v2, _, s2) = schedule_of(&full, &refs, true);
        proptest::prop_assert_eq!((v1, s1), (v2, s2));
    }

    /// A core restarted in place after a run ([`Core::restart`], the Cortex-M port's warm
    /// restart) takes the same decisions and emits the same events as a new one.
    #[test]
    fn a_restarted_core_equals_a_new_one(
        first in proptest::collection::vec(
            proptest::collection::vec(arb_step(), 0..12), 1..4),
        second in proptest::collection::vec(
            proptest::collection::vec(arb_step(), 0..12), 1..4),
        seeds in (0u64..1_000, 0u64..1_000),
        strategies in (0u8..StrategyId::ALL.len() as u8, 0u8..StrategyId::ALL.len() as u8),
        full in proptest::bool::ANY,
        step_limit in 5u32..200,
    ) {
        let flat = |ps: &[Vec<Vec<Op>>]| -> Vec<Vec<Op>> {
            ps.iter().map(|p| p.iter().flatten().copied().collect()).collect()
        };
        let (first, second) = (flat(&first), flat(&second));
        let first: Vec<&[Op]> = first.iter().map(|p| p.as_slice()).collect();
        let second: Vec<&[Op]> = second.iter().map(|p| p.as_slice()).collect();
        let handler = [Op::Write { s: 4, a: 100 }, Op::Read { s: 1, a: 101 }];
        let handlers: [Handler<'_>; 1] = [(
            irq::IrqSource {
                priority: 1,
                firing: crate::interrupt::Firing::Spontaneous { max: 2 },
            },
            &handler,
        )];
        let earlier = generated_config(strategies.0, seeds.0, !full, 200);
        let mut restarted = Core::new(&earlier, 0, Rec::default());
        drive(&mut restarted, &first, &handlers, true);
        let config = generated_config(strategies.1, seeds.1, full, step_limit);
        restarted.sink.0.clear();
        restarted.restart(&config, 1);
        let again = drive(&mut restarted, &second, &handlers, true);
        let mut new = Core::new(&config, 1, Rec::default());
        let fresh = drive(&mut new, &second, &handlers, true);
        proptest::prop_assert_eq!((again, restarted.sink.0), (fresh, new.sink.0));
    }
}

/// Under PCT, which sees every yield, a yield the lean path executes lowers the yielder
/// as the general loop's does, also when nobody else could run at that point: here the
/// other task waits for the lock the yielder holds, and once it is released, whom PCT
/// picks depends on that change.
#[test]
fn a_lean_yield_under_pct_changes_the_priority_as_the_general_loop_does() {
    let holder = [
        Op::Acquire {
            s: 11,
            l: 200,
            c: 200,
        },
        Op::Yield { s: 3 },
        Op::Release { s: 21, l: 200 },
        Op::Write { s: 1, a: 100 },
        Op::Write { s: 1, a: 100 },
    ];
    let waiter = [
        Op::Yield { s: 4 },
        Op::Acquire {
            s: 12,
            l: 200,
            c: 200,
        },
        Op::Write { s: 2, a: 100 },
        Op::Release { s: 22, l: 200 },
    ];
    for seed in 0..40 {
        let config = generated_config(StrategyId::Pct as u8, seed, false, 200);
        let lean = schedule_of(&config, &[&holder, &waiter], true);
        let general = schedule_of(&config, &[&holder, &waiter], false);
        assert_eq!(lean, general, "seed {seed}");
    }
}

/// The configuration of the generated programs' proptests: `strategy` (an index into
/// [`StrategyId::ALL`]) with breakpoints on some of their sites.
fn generated_config(strategy: u8, seed: u64, full: bool, step_limit: u32) -> Config {
    let strategy = StrategyId::from_u8(strategy).unwrap();
    let bps: &[(u32, u32)] = match strategy {
        StrategyId::Race => &[(1, aux(role::RACE, 0)), (2, aux(role::RACE, 1))],
        StrategyId::Deadlock => &[(11, aux(role::ACQUIRE, 0)), (12, aux(role::ACQUIRE, 1))],
        StrategyId::Avio => &[
            (1, aux(role::FIRST, 0)),
            (2, aux(role::SECOND, 0)),
            (3, aux(role::REMOTE, 0)),
        ],
        StrategyId::Surw => &[
            (1, aux(role::INTERESTING, 0)),
            (3, aux(role::INTERESTING, 0)),
            (5, crate::strategy::Surw::weight_aux(0, 2)),
            (4, crate::strategy::Surw::weight_aux(2, 1)),
        ],
        StrategyId::Schedule => &[
            (2, crate::strategy::Schedule::switch(1, 2, 2).aux),
            (1, crate::strategy::Schedule::switch(2, 1, 3).aux),
            (3, crate::strategy::Schedule::switch(0, 3, 1).aux),
        ],
        _ => &[],
    };
    let mut config = with(strategy, seed, bps);
    // Below full trace, where the lean path runs (it stands aside at full trace).
    config.trace = if full {
        TraceLevel::Full
    } else {
        TraceLevel::Sync
    };
    config.params = if strategy == StrategyId::Pct {
        [3, 60, 0, 0]
    } else {
        [0; 4]
    };
    config.step_limit = step_limit;
    config
}

#[test]
fn racefuzzer_makes_the_race_real_and_resolves_it_both_ways() {
    let bps = [(10, aux(role::RACE, 0)), (20, aux(role::RACE, 1))];
    let mut writer: Vec<Op> = FILLER.to_vec();
    writer.push(Op::Write { s: 10, a: 7 });
    let reader = [Op::Read { s: 20, a: 7 }];
    let mut firsts = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let (v, events) = simulate(&with(StrategyId::Race, seed, &bps), &[&writer, &reader]);
        assert_eq!(v, Verdict::Pass);
        let races: Vec<_> = events
            .iter()
            .filter(|e| matches!(e, Event::RealRace { .. }))
            .collect();
        assert_eq!(races.len(), 1, "seed {seed}: {events:?}");
        if let Event::RealRace { t, s, t2, s2, a } = *races[0] {
            assert_eq!((a, t != t2), (7, true));
            assert!((s, s2) == (10, 20) || (s, s2) == (20, 10));
            firsts.insert(t);
        }
    }
    assert_eq!(firsts.len(), 2, "the coin sends either side first");
    // Random reaches the same race only when it happens to line the accesses up.
    let random = (0..40)
        .filter(|seed| {
            let (_, ev) = simulate(&with(StrategyId::Random, *seed, &bps), &[&writer, &reader]);
            ev.iter().any(|e| matches!(e, Event::RealRace { .. }))
        })
        .count();
    assert!(random < 40);
}

#[test]
fn racefuzzer_sends_the_side_the_host_names_first() {
    // params[0] = side_first(s): side s goes first in every run, instead of the coin; a site
    // racing with itself has no sides, so the coin stays.
    let bps = [(10, aux(role::RACE, 0)), (20, aux(role::RACE, 1))];
    let mut writer: Vec<Op> = FILLER.to_vec();
    writer.push(Op::Write { s: 10, a: 7 });
    let reader = [Op::Read { s: 20, a: 7 }];
    for (side, site) in [(0, 10), (1, 20)] {
        for seed in 0..40 {
            let mut config = with(StrategyId::Race, seed, &bps);
            config.params[0] = crate::strategy::side_first(side);
            let (_, events) = simulate(&config, &[&writer, &reader]);
            let first = events.iter().find_map(|e| match e {
                Event::RealRace { s, .. } => Some(*s),
                _ => None,
            });
            assert_eq!(first, Some(site), "side {side}, seed {seed}: {events:?}");
        }
    }
    let same = [(10, aux(role::RACE, 0)), (10, aux(role::RACE, 1))];
    let writer2: Vec<Op> = FILLER
        .iter()
        .copied()
        .chain([Op::Write { s: 10, a: 7 }])
        .collect();
    let mut firsts = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let mut config = with(StrategyId::Race, seed, &same);
        config.params[0] = crate::strategy::side_first(0);
        let (_, events) = simulate(&config, &[&writer2, &[Op::Write { s: 10, a: 7 }]]);
        for e in &events {
            if let Event::RealRace { t, .. } = e {
                firsts.insert(*t);
            }
        }
    }
    assert_eq!(firsts.len(), 2, "one site racing with itself: the coin");
}

#[test]
fn thrashing_releases_a_task_when_all_are_postponed() {
    let bps = [(10, aux(role::RACE, 0)), (20, aux(role::RACE, 1))];
    // Only one side ever runs: the postponed writer is released by thrashing.
    let (v, events) = simulate(
        &with(StrategyId::Race, 1, &bps),
        &[&[Op::Write { s: 10, a: 7 }], &FILLER],
    );
    assert_eq!(v, Verdict::Pass);
    assert!(events.contains(&Event::Postpone { t: 1, s: 10 }));
    assert!(events.contains(&Event::Thrash { t: 1 }));
    assert!(!events.iter().any(|e| matches!(e, Event::RealRace { .. })));
}

#[test]
fn the_livelock_bound_releases_a_task_after_that_many_steps() {
    let bps = [(10, aux(role::RACE, 0)), (20, aux(role::RACE, 1))];
    let mut config = with(StrategyId::Race, 2, &bps);
    config.livelock_bound = 3;
    let (v, events) = simulate(&config, &[&[Op::Write { s: 10, a: 7 }], &FILLER, &FILLER]);
    assert_eq!(v, Verdict::Pass);
    let at = events
        .iter()
        .position(|e| *e == Event::LivelockRelease { t: 1, steps: 3 })
        .expect("released by the bound");
    // The released task runs next.
    assert_eq!(events[at + 1], Event::Write { t: 1, s: 10, a: 7 });
}

/// A task that waits for location 8 to change: the same read and yield, `n` times.
fn spin_on(n: usize) -> Vec<Op> {
    (0..n)
        .flat_map(|_| [Op::Read { s: 30, a: 8 }, Op::Yield { s: 31 }])
        .collect()
}

#[test]
fn a_postponed_task_is_released_as_soon_as_the_others_only_spin() {
    // RaceFuzzer holds the writer at its race site (the other side never comes); the other
    // task spins. Released at the spinner's second yield, not at the livelock bound.
    let bps = [(10, aux(role::RACE, 0)), (20, aux(role::RACE, 1))];
    // Fewer steps than the starvation bound: once the writer has ended, the spinner spins
    // alone on what nothing changes, and a longer script would starve.
    let spinner = spin_on(100);
    for seed in 0..20 {
        let (v, events) = simulate(
            &with(StrategyId::Race, seed, &bps),
            &[&[Op::Write { s: 10, a: 7 }], &spinner],
        );
        assert_eq!(v, Verdict::Pass);
        let Some(postponed) = events
            .iter()
            .position(|e| *e == Event::Postpone { t: 1, s: 10 })
        else {
            continue; // the writer went before the spinner started: nothing held back
        };
        let released = events
            .iter()
            .position(|e| *e == Event::SpinRelease { t: 1 })
            .unwrap_or_else(|| panic!("seed {seed}: not released: {events:?}"));
        let yields = events[postponed..released]
            .iter()
            .filter(|e| matches!(e, Event::Yield { .. }))
            .count();
        assert!(
            yields <= 2,
            "seed {seed}: {yields} yields before the release"
        );
        assert_eq!(events[released + 1], Event::Write { t: 1, s: 10, a: 7 });
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::LivelockRelease { .. }))
        );
    }
}

#[test]
fn a_task_that_makes_progress_does_not_release_a_postponed_one() {
    // The other task writes between its yields: it is not spinning, so the postponed
    // writer waits for the bound.
    let bps = [(10, aux(role::RACE, 0)), (20, aux(role::RACE, 1))];
    let worker: Vec<Op> = (0..40)
        .flat_map(|_| [Op::Write { s: 32, a: 9 }, Op::Yield { s: 31 }])
        .collect();
    let mut config = with(StrategyId::Race, 2, &bps);
    config.livelock_bound = 20;
    let (_, events) = simulate(&config, &[&[Op::Write { s: 10, a: 7 }], &worker]);
    assert!(
        events.contains(&Event::Postpone { t: 1, s: 10 }),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::SpinRelease { .. }))
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::LivelockRelease { t: 1, .. }))
    );
}

#[test]
fn a_task_spinning_alone_on_what_nothing_can_change_starves() {
    // Main waits in a join; the worker spins on location 8 that no one else can write.
    let mut config = with(StrategyId::Random, 1, &[]);
    config.livelock_bound = 50;
    config.trace = TraceLevel::Results;
    let (v, events) = simulate(&config, &[&spin_on(1000)]);
    assert_eq!(v, Verdict::Starvation, "{events:?}");
    let starved = events
        .iter()
        .find_map(|e| match *e {
            Event::Starved { t, s, a, steps } => Some((t, s, a, steps)),
            _ => None,
        })
        .expect("the Starved event");
    assert_eq!((starved.0, starved.1, starved.2), (1, 30, 8));
    assert!(starved.3 >= 50);
    // Ended soon after the bound, not at the end of the script.
    let end = events
        .iter()
        .find_map(|e| match *e {
            Event::RunEnd { steps, .. } => Some(steps),
            _ => None,
        })
        .unwrap();
    assert!(end < 80, "{end}");
    // The same at full trace: same step.
    config.trace = TraceLevel::Full;
    let (v, full) = simulate(&config, &[&spin_on(1000)]);
    assert_eq!(v, Verdict::Starvation);
    assert_eq!(full.last(), events.last());
}

#[test]
fn a_lone_spinner_starves_at_the_starvation_bound_not_at_a_longer_livelock_bound() {
    // The default livelock bound (1,000 steps): the spinner starves once its identical
    // iterations reach STARVATION_BOUND steps, whatever the livelock bound.
    use crate::config::{DEFAULT_LIVELOCK_BOUND, STARVATION_BOUND};
    const { assert!(STARVATION_BOUND < DEFAULT_LIVELOCK_BOUND) };
    let mut config = with(StrategyId::Random, 1, &[]);
    config.livelock_bound = DEFAULT_LIVELOCK_BOUND;
    let (v, events) = simulate(&config, &[&spin_on(2000)]);
    assert_eq!(v, Verdict::Starvation, "{events:?}");
    let steps = events
        .iter()
        .find_map(|e| match *e {
            Event::Starved { steps, .. } => Some(steps),
            _ => None,
        })
        .expect("the Starved event");
    assert!(
        (STARVATION_BOUND..STARVATION_BOUND + 10).contains(&steps),
        "{steps}"
    );
}

#[test]
fn a_pending_timer_keeps_a_lone_spinner_from_starving_until_it_is_cancelled() {
    // Main alone spins on location 8 (results trace: the lean path may run). While a timer
    // is pending it may be what the spin waits for; once cancelled, nothing is.
    let mut config = with(StrategyId::Random, 1, &[]);
    config.livelock_bound = 50;
    config.trace = TraceLevel::Results;
    let mut c = Core::new(&config, 0, Rec::default());
    c.set_timer(1, 1_000_000, time::TimerAction::Wake(1));
    let spin = [Op::Read { s: 30, a: 8 }, Op::Yield { s: 31 }];
    let mut next = c.decide();
    for k in 0..600 {
        if k == 300 {
            c.cancel_timer(1);
        }
        match next {
            Next::Run(0) => next = c.point(0, spin[k % 2]),
            other => panic!("step {k}: {other:?}"),
        }
        if k < 300 {
            assert_eq!(next, Next::Run(0), "step {k}: starved with a timer pending");
        }
        if let Next::End(v) = next {
            assert_eq!(v, Verdict::Starvation);
            assert!(k < 300 + 80, "{k}");
            return;
        }
    }
    panic!("never starved after the timer was cancelled");
}

#[test]
fn a_loop_that_reads_something_else_each_time_does_not_starve() {
    // An array scan: alone and writing nothing, but each iteration reads another element.
    let scan: Vec<Op> = (0..500)
        .flat_map(|i| [Op::Read { s: 30, a: 1000 + i }, Op::Yield { s: 31 }])
        .collect();
    let mut config = with(StrategyId::Random, 1, &[]);
    config.livelock_bound = 50;
    assert_eq!(simulate(&config, &[&scan]).0, Verdict::Pass);
    // And a task that waits while another still runs is not alone: it is left to spin
    // (the writer outlasts the spinner's script).
    let writer: Vec<Op> = (0..2000).map(|_| Op::Write { s: 33, a: 9 }).collect();
    assert_eq!(
        simulate(&config, &[&spin_on(200), &writer]).0,
        Verdict::Pass
    );
}

#[test]
fn deadlockfuzzer_closes_the_abba_cycle_in_every_run() {
    let t1 = [
        Op::Acquire { s: 30, l: 1, c: 1 },
        Op::Acquire { s: 31, l: 2, c: 2 },
        Op::Release { s: 32, l: 2 },
        Op::Release { s: 33, l: 1 },
    ];
    let mut t2: Vec<Op> = FILLER.to_vec();
    t2.extend([
        Op::Acquire { s: 40, l: 2, c: 2 },
        Op::Acquire { s: 41, l: 1, c: 1 },
        Op::Release { s: 42, l: 1 },
        Op::Release { s: 43, l: 2 },
    ]);
    let bps = [
        (31, aux(role::ACQUIRE, 0)),
        (30, aux(role::CONTEXT, 0)),
        (41, aux(role::ACQUIRE, 1)),
        (40, aux(role::CONTEXT, 1)),
    ];
    let mut random_deadlocks = 0;
    for seed in 0..30 {
        let (v, events) = simulate(&with(StrategyId::Deadlock, seed, &bps), &[&t1, &t2]);
        assert_eq!(v, Verdict::Deadlock, "seed {seed}");
        let cycle: Vec<_> = events
            .iter()
            .filter_map(|e| match *e {
                Event::DeadlockConfirmed { t, s, l, holder } => Some((t, s, l, holder)),
                _ => None,
            })
            .collect();
        assert_eq!(cycle, [(1, 31, 2, 2), (2, 41, 1, 1)]);
        let (rv, _) = simulate(&with(StrategyId::Random, seed, &[]), &[&t1, &t2]);
        random_deadlocks += (rv == Verdict::Deadlock) as u32;
    }
    assert!(random_deadlocks < 30);
}

#[test]
fn atomfuzzer_lets_another_task_take_the_lock_between_acquires() {
    let block = [
        Op::AtomicEnter { s: 50 },
        Op::Acquire { s: 51, l: 5, c: 5 },
        Op::Release { s: 52, l: 5 },
        Op::Acquire { s: 53, l: 5, c: 5 },
        Op::Release { s: 54, l: 5 },
        Op::AtomicExit { s: 50 },
    ];
    let other = [
        Op::Acquire { s: 60, l: 5, c: 5 },
        Op::Release { s: 61, l: 5 },
    ];
    let mut found = 0;
    for seed in 0..30 {
        let mut config = with(StrategyId::Atom, seed, &[]);
        config.params[0] = crate::strategy::Q_ONE;
        let (v, events) = simulate(&config, &[&block, &other]);
        assert_eq!(v, Verdict::Pass);
        for e in &events {
            if let Event::AtomicityViolation { t, block, l, by, s } = *e {
                assert_eq!((t, block, l, by, s), (1, 50, 5, 2, 60));
                found += 1;
            }
        }
    }
    // q = 1: the re-acquire always waits; the other task intrudes unless it already ran.
    assert!(found >= 10, "{found}");
}

#[test]
fn atomfuzzer_holds_an_early_interleaver_back_until_the_block_pauses() {
    // The block comes after twelve writes of the task's own; the other task takes the lock
    // at once. Run freely, it is nearly always done before the block starts.
    let mut late_block: Vec<Op> = (0..12).map(|i| Op::Write { s: 70 + i, a: 9 }).collect();
    late_block.extend([
        Op::Acquire { s: 51, l: 5, c: 5 },
        Op::Release { s: 52, l: 5 },
        Op::Acquire { s: 53, l: 5, c: 5 },
        Op::Release { s: 54, l: 5 },
    ]);
    let early = [
        Op::Acquire { s: 60, l: 5, c: 5 },
        Op::Release { s: 61, l: 5 },
    ];
    let block = (51, aux(role::BLOCK, 0));
    let reacquire = (53, aux(role::REACQUIRE, 0));
    let interleaver = (60, aux(role::INTERLEAVER, 0));
    let violations = |bps: &[(u32, u32)], lean: bool| {
        let mut found = 0;
        for seed in 0..40 {
            let mut config = with(StrategyId::Atom, seed, bps);
            config.params[0] = crate::strategy::Q_ONE;
            let (v, events) = simulate_with(&config, &[&late_block, &early], lean);
            assert_eq!(v, Verdict::Pass);
            found += events
                .iter()
                .filter(|e| {
                    matches!(
                        e,
                        Event::AtomicityViolation {
                            t: 1,
                            by: 2,
                            s: 60,
                            ..
                        }
                    )
                })
                .count();
        }
        found
    };
    // Without the interleaver's site, the block pauses in vain (the heuristic block: the
    // first section's acquire is the block).
    let free = violations(&[block, reacquire], true);
    assert!(free <= 4, "{free} of 40 without holding back");
    // Held at its acquire until the block pauses, it goes first then: every run.
    for lean in [true, false] {
        assert_eq!(violations(&[block, reacquire, interleaver], lean), 40);
    }
}

/// Six writes of a location of its own (no yields: a yield is a PCT change point).
fn writes(a: u32) -> Vec<Op> {
    (0..6).map(|i| Op::Write { s: 80 + i, a }).collect()
}

/// The order in which tasks executed writes.
fn write_order(events: &[Event]) -> Vec<u8> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Write { t, .. } => Some(*t),
            _ => None,
        })
        .collect()
}

#[test]
fn pct_is_deterministic_and_seed_dependent() {
    let (w1, w2, w3) = (writes(1), writes(2), writes(3));
    let programs: [&[Op]; 3] = [&w1, &w2, &w3];
    let run = |seed| {
        let mut config = with(StrategyId::Pct, seed, &[]);
        config.params = [2, 20, 0, 0];
        simulate(&config, &programs).1
    };
    assert_eq!(run(4), run(4));
    let mut distinct: Vec<Vec<Event>> = (0..20).map(run).collect();
    distinct.sort_by_key(|e| std::format!("{e:?}"));
    distinct.dedup();
    assert!(distinct.len() > 3);
    // Without a change point (d = 1), the highest-priority task runs to its end.
    let mut config = with(StrategyId::Pct, 9, &[]);
    config.params = [1, 20, 0, 0];
    let order = write_order(&simulate(&config, &programs).1);
    let mut runs = order.clone();
    runs.dedup();
    assert_eq!(runs.len(), 3, "one uninterrupted run per task: {order:?}");
}

#[test]
fn pct_lets_others_run_when_a_task_yields_or_fails_a_cas() {
    // A task that yields hands over to the others at once, whatever its priority.
    let (w2, w3) = (writes(2), writes(3));
    let mut yielder = vec![Op::Write { s: 90, a: 1 }, Op::Yield { s: 91 }];
    yielder.extend(writes(1));
    let programs: [&[Op]; 3] = [&yielder, &w2, &w3];
    for seed in 0..20 {
        let mut config = with(StrategyId::Pct, seed, &[]);
        config.params = [1, 20, 0, 0];
        let order = write_order(&simulate(&config, &programs).1);
        if order[0] == 1 {
            // It ran first: after its yield, every other task's writes come before its own.
            assert_eq!(
                order[1..13].iter().filter(|t| **t == 1).count(),
                0,
                "{order:?}"
            );
        }
    }
    // A failed compare-and-swap outside a decision drops the task's priority too.
    for seed in 0..10 {
        let mut c = Core::new(&with(StrategyId::Pct, seed, &[]), 0, Rec::default());
        c.decide();
        let a = c.reserve().unwrap();
        c.point(0, Op::Spawn { s: 1, child: a });
        c.cas_outcome(0, 5, 6, 4, 4, false);
        assert!(c.sink.0.contains(&Event::CasFailed {
            t: 0,
            s: 5,
            a: 6,
            o: 4
        }));
        let crate::strategy::AnyStrategy::Pct(p) = &c.strategy else {
            unreachable!()
        };
        assert_eq!(p.highest(TaskSet(0b11)), a, "seed {seed}");
    }
}

/// A Schedule configuration with these entries.
fn schedule_config(entries: &[crate::config::Breakpoint]) -> Config {
    let bps: Vec<(u32, u32)> = entries.iter().map(|b| (b.site, b.aux)).collect();
    with(StrategyId::Schedule, 5, &bps)
}

#[test]
fn schedule_without_entries_runs_each_task_until_it_blocks_or_ends() {
    let (w1, w2, w3) = (writes(1), writes(2), writes(3));
    let programs: [&[Op]; 3] = [&w1, &w2, &w3];
    let (v, events) = simulate(&schedule_config(&[]), &programs);
    assert_eq!(v, Verdict::Pass);
    // Main spawns all three and blocks joining task 1: the lowest enabled task, 1, runs to
    // its end; then main (lowest) joins it and blocks on 2; and so on. No seed involved.
    let mut expect = vec![1u8; 6];
    expect.extend([2u8; 6]);
    expect.extend([3u8; 6]);
    assert_eq!(write_order(&events), expect);
    let other_seed = {
        let mut c = schedule_config(&[]);
        c.seed = 77;
        simulate(&c, &programs).1
    };
    assert_eq!(other_seed[1..], events[1..], "the seed decides nothing");
}

#[test]
fn a_schedule_entry_switches_at_its_tasks_nth_operation() {
    use crate::strategy::Schedule;
    let (w1, w2) = (writes(1), writes(2));
    let programs: [&[Op]; 2] = [&w1, &w2];
    // Task 1 stands before its operation 3 (Start, two writes done): task 2 goes.
    let preempt = Schedule::switch(1, 3, 2);
    let (_, events) = simulate(&schedule_config(&[preempt]), &programs);
    assert_eq!(write_order(&events), [1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1]);
    // A second entry, anchored in task 2's own count, sends it back to task 1 after one
    // write; without the first entry it never applies (task 2 reaches no such decision
    // while 1 is running), and the first one means the same with or without it.
    let back = Schedule::switch(2, 2, 1);
    let (_, events) = simulate(&schedule_config(&[preempt, back]), &programs);
    assert_eq!(write_order(&events), [1, 1, 2, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
    let (_, events) = simulate(&schedule_config(&[back]), &programs);
    assert_eq!(write_order(&events), [1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]);
    // An entry whose task is blocked is not taken: task 2 starts (entry at task 1's
    // operation 2), blocks on the lock task 1 holds, and the entry at task 1's operation 3
    // cannot send it back there, so task 1 goes on to its release.
    let locked = |a| {
        vec![
            Op::Acquire { s: 30, l: 5, c: 5 },
            Op::Write { s: 31, a },
            Op::Release { s: 32, l: 5 },
        ]
    };
    let (l1, l2) = (locked(1), locked(2));
    let entries = [Schedule::switch(1, 2, 2), Schedule::switch(1, 3, 2)];
    let (v, events) = simulate(&schedule_config(&entries), &[&l1, &l2]);
    assert_eq!(v, Verdict::Pass);
    let steps: Vec<(u8, crate::event::EventKind)> = events
        .iter()
        .filter(|e| e.task().is_some_and(|t| t != 0))
        .map(|e| (e.task().unwrap(), e.kind()))
        .collect();
    use crate::event::EventKind::*;
    assert_eq!(
        steps[..6],
        [
            (1, TaskStart),
            (1, Acquire),
            (2, TaskStart),
            (1, Write),
            (1, Release),
            (1, TaskExit)
        ]
    );
}

#[test]
fn pos_is_deterministic_and_seed_dependent_and_a_yield_hands_over() {
    let (w1, w2, w3) = (writes(1), writes(2), writes(3));
    let programs: [&[Op]; 3] = [&w1, &w2, &w3];
    let run = |seed| simulate(&with(StrategyId::Pos, seed, &[]), &programs).1;
    assert_eq!(run(4), run(4));
    let mut distinct: Vec<Vec<Event>> = (0..20).map(run).collect();
    distinct.sort_by_key(|e| std::format!("{e:?}"));
    distinct.dedup();
    assert!(distinct.len() > 3);
    // A task that yields goes below the others: their writes all come before its next one.
    let mut yielder = vec![Op::Write { s: 90, a: 1 }, Op::Yield { s: 91 }];
    yielder.extend(writes(1));
    let programs: [&[Op]; 3] = [&yielder, &w2, &w3];
    for seed in 0..20 {
        let (v, events) = simulate(&with(StrategyId::Pos, seed, &[]), &programs);
        assert_eq!(v, Verdict::Pass);
        let order = write_order(&events);
        let first = order.iter().position(|t| *t == 1).unwrap();
        let next = order[first + 1..].iter().position(|t| *t == 1).unwrap();
        // Between its first write and its next one come all the 12 writes of tasks 2 and 3
        // that had not come before.
        assert_eq!(next, 12 - first, "seed {seed}: {order:?}");
    }
    // A failed compare-and-swap outside a decision drops the task's priority too.
    let mut c = Core::new(&with(StrategyId::Pos, 3, &[]), 0, Rec::default());
    c.decide();
    c.cas_outcome(0, 5, 6, 4, 4, false);
    let crate::strategy::AnyStrategy::Pos(p) = &c.strategy else {
        unreachable!()
    };
    assert_eq!(p.priority(0).map(|p| p.0), Some(true));
}

/// SURW's breakpoints: site 50 is interesting, and task `t` has initial weight `w[t]`.
fn surw_config(seed: u64, weights: &[u32]) -> Config {
    let mut bps = vec![(50, aux(role::INTERESTING, 0))];
    for (t, &w) in weights.iter().enumerate() {
        bps.push((w, crate::strategy::Surw::weight_aux(t as TaskId, 1)));
    }
    with(StrategyId::Surw, seed, &bps)
}

/// Task 1 writes location 7 once after three writes of its own location; task 2 writes
/// location 7 three times. The interesting accesses are those of location 7 (site 50).
fn one_among_three() -> [Vec<Op>; 2] {
    let mut one: Vec<Op> = (0..3).map(|i| Op::Write { s: 60 + i, a: 8 }).collect();
    one.push(Op::Write { s: 50, a: 7 });
    [one, vec![Op::Write { s: 50, a: 7 }; 3]]
}

/// How many of task 2's writes of location 7 come before task 1's, per run of `config`.
fn place_of_the_single_write(config: &Config) -> usize {
    let [one, three] = one_among_three();
    let (v, events) = simulate(config, &[&one, &three]);
    assert_eq!(v, Verdict::Pass);
    let order: Vec<u8> = events
        .iter()
        .filter_map(|e| match e {
            Event::Write { t, a: 7, .. } => Some(*t),
            _ => None,
        })
        .collect();
    assert_eq!(order.len(), 4);
    order.iter().position(|t| *t == 1).unwrap()
}

/// URW's property (Zhao et al. ASPLOS'25, Theorem 1): the interleavings of the interesting
/// accesses are sampled uniformly. Task 1's single write falls at each of its 4 places
/// among task 2's 3 writes in a quarter of the runs, although task 1 first makes three
/// uninteresting steps. Without the weights (task 2's count of 3, the main task's 4 =
/// 1 + 3 before it spawns them), and under Random, it does not.
#[test]
fn surw_samples_the_interleavings_of_the_interesting_accesses_uniformly() {
    const RUNS: u64 = 4000;
    let histogram = |config: &dyn Fn(u64) -> Config| {
        let mut counts = [0u32; 4];
        for seed in 0..RUNS {
            counts[place_of_the_single_write(&config(seed))] += 1;
        }
        counts
    };
    let surw = histogram(&|seed| surw_config(seed, &[4, 1, 3]));
    // 1000 each; the standard deviation is 27.
    for (place, n) in surw.iter().enumerate() {
        assert!((880..1120).contains(n), "place {place}: {surw:?}");
    }
    let unweighted = histogram(&|seed| surw_config(seed, &[]));
    assert!(
        unweighted.iter().any(|n| !(800..1200).contains(n)),
        "{unweighted:?}"
    );
    let random = histogram(&|seed| with(StrategyId::Random, seed, &[]));
    assert!(
        random.iter().any(|n| !(800..1200).contains(n)),
        "{random:?}"
    );
}

#[test]
fn surw_is_deterministic_and_seed_dependent_and_a_yield_hands_over() {
    let [one, three] = one_among_three();
    let programs: [&[Op]; 2] = [&one, &three];
    let run = |seed| simulate(&surw_config(seed, &[4, 1, 3]), &programs).1;
    assert_eq!(run(4), run(4));
    let mut distinct: Vec<Vec<Event>> = (0..20).map(run).collect();
    distinct.sort_by_key(|e| std::format!("{e:?}"));
    distinct.dedup();
    assert!(distinct.len() > 3);
    // A task that yields goes below the others, as under POS: their uninteresting writes all
    // come before its next one.
    let (w2, w3) = (writes(2), writes(3));
    let mut yielder = vec![Op::Write { s: 90, a: 1 }, Op::Yield { s: 91 }];
    yielder.extend(writes(1));
    let programs: [&[Op]; 3] = [&yielder, &w2, &w3];
    for seed in 0..20 {
        let (v, events) = simulate(&surw_config(seed, &[]), &programs);
        assert_eq!(v, Verdict::Pass);
        let order = write_order(&events);
        let first = order.iter().position(|t| *t == 1).unwrap();
        let next = order[first + 1..].iter().position(|t| *t == 1).unwrap();
        assert_eq!(next, 12 - first, "seed {seed}: {order:?}");
    }
}

#[test]
fn drfinder_escorts_the_task_that_may_take_the_lock_first() {
    // Task 1 publishes then takes lock 5; task 2, inside frame 70, later takes lock 5.
    let publisher = [
        Op::FrameEnter { s: 60 },
        Op::Write { s: 61, a: 9 },
        Op::Acquire { s: 62, l: 5, c: 5 },
        Op::Release { s: 63, l: 5 },
        Op::FrameExit { s: 60 },
    ];
    let mut user = vec![Op::FrameEnter { s: 70 }];
    user.extend(FILLER);
    user.extend([
        Op::Acquire { s: 71, l: 5, c: 5 },
        Op::Release { s: 72, l: 5 },
        Op::Read { s: 73, a: 9 },
        Op::FrameExit { s: 70 },
    ]);
    // mt(70, 5): frame 70 may trigger an acquire of class 5.
    let bps = [(70, aux(role::RELATION, 0)), (5, aux(role::CLASS, 0))];
    let first_acquirer = |strategy, seed| {
        let (v, events) = simulate(&with(strategy, seed, &bps), &[&publisher, &user]);
        assert_eq!(v, Verdict::Pass);
        events.iter().find_map(|e| match e {
            Event::Acquire { t, .. } => Some(*t),
            _ => None,
        })
    };
    let reversed = (0..30)
        .filter(|s| first_acquirer(StrategyId::DrFinder, *s) == Some(2))
        .count();
    let random = (0..30)
        .filter(|s| first_acquirer(StrategyId::Random, *s) == Some(2))
        .count();
    // Whenever task 2 is inside frame 70 when task 1 asks for the lock, it goes first.
    assert!(reversed >= 15, "{reversed}");
    assert!(reversed > random + 5, "{reversed} vs {random}");
}

mod interrupts {
    use super::*;
    use crate::op::ALL_IRQS;
    use irq::{Firing, IrqSource};

    fn spontaneous(priority: u8, max: u8) -> IrqSource {
        IrqSource {
            priority,
            firing: Firing::Spontaneous { max },
        }
    }

    fn requested(priority: u8) -> IrqSource {
        IrqSource {
            priority,
            firing: Firing::Requested,
        }
    }

    /// Events of a run with a task program and handlers, below full trace unless `full`.
    fn run(seed: u64, task: &[Op], handlers: &[Handler<'_>]) -> (Verdict, Vec<Event>) {
        let mut config = with(StrategyId::Random, seed, &[]);
        config.irq_horizon = 8;
        let (v, events, _) = schedule_with_irqs(&config, &[task], handlers, true);
        (v, events)
    }

    /// The read-modify-write of a task: a read and a write of location 7.
    const RMW: [Op; 2] = [Op::Read { s: 10, a: 7 }, Op::Write { s: 11, a: 7 }];
    const HANDLER: [Op; 1] = [Op::Update { s: 20, a: 7 }];

    /// Did a handler's access come between the task's read and its write?
    fn interleaved(events: &[Event]) -> bool {
        let at = |pred: &dyn Fn(&Event) -> bool| events.iter().position(pred);
        let read = at(&|e| matches!(e, Event::Read { s: 10, .. }));
        let write = at(&|e| matches!(e, Event::Write { s: 11, .. }));
        match (read, write) {
            (Some(r), Some(w)) => events[r..w]
                .iter()
                .any(|e| matches!(e, Event::Update { s: 20, .. })),
            _ => false,
        }
    }

    #[test]
    fn a_schedule_fires_a_handler_at_its_entry_and_the_seed_draws_no_firing() {
        use crate::strategy::Schedule;
        let handlers = [(spontaneous(1, 2), &HANDLER[..])];
        let run = |seed, entries: &[crate::config::Breakpoint]| {
            let bps: Vec<(u32, u32)> = entries.iter().map(|b| (b.site, b.aux)).collect();
            let mut config = with(StrategyId::Schedule, seed, &bps);
            config.irq_horizon = 2;
            schedule_with_irqs(&config, &[&RMW], &handlers, true).1
        };
        let enters = |events: &[Event]| {
            events
                .iter()
                .filter(|e| matches!(e, Event::IrqEnter { .. }))
                .count()
        };
        // A horizon of 2 steps would have Random fire it early; Schedule draws no firing.
        for seed in 0..20 {
            assert_eq!(enters(&run(seed, &[])), 0, "seed {seed}");
        }
        // Task 1 stands before its write (Start and the read done): the handler fires there,
        // once.
        let events = run(0, &[Schedule::fire(1, 2, 0)]);
        assert!(interleaved(&events), "{events:?}");
        assert_eq!(enters(&events), 1);
    }

    #[test]
    fn a_schedule_nests_a_firing_at_a_handlers_operation_count() {
        use crate::event::IRQ_CONTEXT;
        use crate::strategy::Schedule;
        // Source 0 (priority 2) runs the read-modify-write; source 1 (priority 1) preempts
        // it. Task 1 fires 0 once started; 0, having run its read, lets 1 in.
        let handlers = [
            (spontaneous(2, 1), &RMW[..]),
            (spontaneous(1, 1), &HANDLER[..]),
        ];
        let run = |entries: &[crate::config::Breakpoint]| {
            let bps: Vec<(u32, u32)> = entries.iter().map(|b| (b.site, b.aux)).collect();
            let config = with(StrategyId::Schedule, 0, &bps);
            schedule_with_irqs(&config, &[&[Op::Yield { s: 1 }]], &handlers, true).1
        };
        let nested = [Schedule::fire(1, 1, 0), Schedule::fire(IRQ_CONTEXT, 1, 1)];
        let events = run(&nested);
        assert!(interleaved(&events), "{events:?}");
        let by = events.iter().find_map(|e| match *e {
            Event::IrqEnter { i: 1, by, f, .. } => Some((by, f)),
            _ => None,
        });
        // Nested in handler 0, chosen by the schedule (not a pend: `f` = 0).
        assert_eq!(by, Some((IRQ_CONTEXT, 0)), "{events:?}");
        // Anchored one operation later, it comes after the write.
        let events = run(&[Schedule::fire(1, 1, 0), Schedule::fire(IRQ_CONTEXT, 2, 1)]);
        assert!(!interleaved(&events), "{events:?}");
    }

    #[test]
    fn a_spontaneous_handler_lands_between_an_unmasked_read_and_write_for_some_seeds() {
        let handlers = [(spontaneous(1, 2), &HANDLER[..])];
        let hits = (0..60)
            .filter(|s| interleaved(&run(*s, &RMW, &handlers).1))
            .count();
        assert!(hits > 0 && hits < 60, "{hits}");
        // Every firing is an entry, the handler's step and an exit, at most twice.
        let (v, events) = run(3, &RMW, &handlers);
        assert_eq!(v, Verdict::Pass);
        let enters = events
            .iter()
            .filter(|e| matches!(e, Event::IrqEnter { .. }))
            .count();
        assert!(enters <= 2);
    }

    #[test]
    fn a_reserved_sources_drawn_firing_spreads_over_the_whole_horizon() {
        // Two firings: unreserved, the first is drawn over 2/3 of the horizon; when the run
        // targets the source its last firing is the strategy's, and the drawn one may come
        // as late as the horizon (a window late in the run may need it before it).
        let task: Vec<Op> = (0..30).map(|k| Op::Read { s: 100 + k, a: 7 }).collect();
        let handlers = [(spontaneous(1, 2), &HANDLER[..])];
        let latest = |targeted: bool| {
            let bps: &[(u32, u32)] = if targeted {
                &[(0, aux(role::FIRE, 0))]
            } else {
                &[]
            };
            (0..200)
                .filter_map(|seed| {
                    let mut config = with(StrategyId::Random, seed, bps);
                    config.irq_horizon = 30;
                    let (_, events, _) = schedule_with_irqs(&config, &[&task], &handlers, true);
                    let first = events
                        .iter()
                        .position(|e| matches!(e, Event::IrqEnter { .. }))?;
                    Some(
                        events[..first]
                            .iter()
                            .filter(|e| matches!(e, Event::Read { a: 7, .. }))
                            .count(),
                    )
                })
                .max()
                .unwrap_or(0)
        };
        assert!(latest(false) <= 20, "{}", latest(false));
        assert!(latest(true) > 24, "{}", latest(true));
    }

    #[test]
    fn masks_and_the_critical_section_keep_the_handler_out() {
        let handlers = [(spontaneous(1, 3), &HANDLER[..])];
        let masked = [
            Op::IrqMask {
                s: 1,
                i: 0,
                on: true,
            },
            RMW[0],
            RMW[1],
            Op::IrqMask {
                s: 2,
                i: 0,
                on: false,
            },
        ];
        let all = [
            Op::IrqMask {
                s: 1,
                i: ALL_IRQS,
                on: true,
            },
            RMW[0],
            RMW[1],
            Op::IrqMask {
                s: 2,
                i: ALL_IRQS,
                on: false,
            },
        ];
        let cs = [Op::CsEnter, RMW[0], RMW[1], Op::CsExit];
        let prio = [
            Op::PrioMask {
                s: 1,
                level: 1,
                r: 0,
            },
            RMW[0],
            RMW[1],
            Op::PrioMask {
                s: 2,
                level: 0,
                r: 0,
            },
        ];
        for task in [&masked[..], &all, &cs, &prio] {
            for seed in 0..40 {
                assert!(
                    !interleaved(&run(seed, task, &handlers).1),
                    "seed {seed}: {task:?}"
                );
            }
        }
        // A priority mask above the source's priority does not mask it.
        let weak = [
            Op::PrioMask {
                s: 1,
                level: 2,
                r: 0,
            },
            RMW[0],
            RMW[1],
            Op::PrioMask {
                s: 2,
                level: 0,
                r: 0,
            },
        ];
        assert!(
            (0..60).any(|s| interleaved(&run(s, &weak, &[(spontaneous(1, 3), &HANDLER[..])]).1))
        );
    }

    #[test]
    fn only_a_more_urgent_source_nests() {
        let low = [Op::Read { s: 30, a: 8 }, Op::Write { s: 31, a: 8 }];
        let high = [Op::Update { s: 40, a: 8 }];
        let handlers = [
            (spontaneous(2, 3), &low[..]),
            (spontaneous(1, 3), &high[..]),
        ];
        let task = [Op::Yield { s: 9 }; 30];
        let mut nested = 0;
        for seed in 0..80 {
            let (v, events) = run(seed, &task, &handlers);
            assert_eq!(v, Verdict::Pass);
            let mut stack = Vec::new();
            for e in &events {
                match *e {
                    Event::IrqEnter { i, by, .. } => {
                        // The urgent source never runs under... it may preempt the low one;
                        // the low one never enters while the urgent one runs.
                        assert!(!(i == 0 && stack.contains(&1)), "seed {seed}: {events:?}");
                        if i == 1 && stack.contains(&0) {
                            assert_eq!(by, irq::irq_context(0));
                            nested += 1;
                        }
                        stack.push(i);
                    }
                    Event::IrqExit { .. } => {
                        stack.pop();
                    }
                    _ => {}
                }
            }
        }
        assert!(nested > 0);
        // Equal priorities never nest.
        let handlers = [
            (spontaneous(1, 3), &low[..]),
            (spontaneous(1, 3), &high[..]),
        ];
        for seed in 0..40 {
            let events = run(seed, &task, &handlers).1;
            let mut depth = 0;
            for e in &events {
                match e {
                    Event::IrqEnter { .. } => {
                        depth += 1;
                        assert!(depth <= 1, "seed {seed}");
                    }
                    Event::IrqExit { .. } => depth -= 1,
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn a_requested_source_fires_once_per_request_and_only_after_it() {
        let handlers = [(requested(1), &HANDLER[..])];
        let task = [
            Op::Yield { s: 9 },
            Op::Yield { s: 9 },
            Op::IrqRequest { s: 5, i: 0 },
            Op::IrqRequest { s: 6, i: 0 },
            Op::Yield { s: 9 },
        ];
        for seed in 0..40 {
            let (v, events) = run(seed, &task, &handlers);
            assert_eq!(v, Verdict::Pass);
            let request = events
                .iter()
                .position(|e| matches!(e, Event::IrqRequest { s: 5, .. }))
                .unwrap();
            let enters: Vec<usize> = (0..events.len())
                .filter(|k| matches!(events[*k], Event::IrqEnter { .. }))
                .collect();
            // Two requests before any firing merge into one: one or two firings, never before
            // the first request, always at least one (it fires before the run ends).
            assert!(
                !enters.is_empty() && enters.len() <= 2,
                "seed {seed}: {events:?}"
            );
            assert!(enters[0] > request);
        }
    }

    #[test]
    fn a_blocked_task_is_rescued_by_the_handler_it_waits_for() {
        let handler = [Op::Signal { s: 21, g: 3 }];
        let handlers = [(requested(1), &handler[..])];
        let task = [Op::IrqRequest { s: 5, i: 0 }, Op::Wait { s: 6, g: 3 }];
        for seed in 0..20 {
            assert_eq!(run(seed, &task, &handlers).0, Verdict::Pass, "seed {seed}");
        }
    }

    #[test]
    fn a_source_that_can_fire_keeps_a_lone_spinner_from_starving() {
        // The handler may still fire (it writes what the task reads): not a starvation.
        let mut config = with(StrategyId::Random, 3, &[]);
        config.livelock_bound = 50;
        config.irq_horizon = 400;
        let handler = [Op::Write { s: 20, a: 8 }];
        let handlers = [(spontaneous(1, 1), &handler[..])];
        let (v, events, _) = schedule_with_irqs(&config, &[&spin_on(4000)], &handlers, true);
        // The task spins for longer than the bound while the firing may come; once its one
        // firing is spent, nothing can change location 8 any more: it starves then.
        assert_eq!(v, Verdict::Starvation, "{events:?}");
        let fired = events
            .iter()
            .position(|e| matches!(e, Event::IrqEnter { .. }))
            .expect("fired");
        let reads = |evs: &[Event]| {
            evs.iter()
                .filter(|e| matches!(e, Event::Read { .. }))
                .count()
        };
        assert!(reads(&events[..fired]) > 50, "{}", reads(&events[..fired]));
        let starved = events
            .iter()
            .position(|e| matches!(e, Event::Starved { .. }))
            .unwrap();
        assert!(reads(&events[fired..starved]) >= 25);
    }

    #[test]
    fn a_firing_held_in_reserve_is_released_when_the_task_only_spins() {
        // RaceFuzzer keeps the handler's one firing for the task's race site, which the task
        // reaches only after its spin: the spin releases it.
        let handler = [Op::Write { s: 20, a: 8 }];
        let handlers = [(spontaneous(1, 1), &handler[..])];
        let bps = [
            (11, aux(role::RACE, 0)),
            (20, aux(role::RACE, 1)),
            (0, aux(role::FIRE, 1)),
        ];
        let mut task = spin_on(300);
        task.push(Op::Write { s: 11, a: 7 });
        let mut config = with(StrategyId::Race, 5, &bps);
        config.irq_horizon = 1000;
        let (_, events, _) = schedule_with_irqs(&config, &[&task], &handlers, true);
        let released = events
            .iter()
            .position(|e| {
                *e == Event::SpinRelease {
                    t: irq::irq_context(0),
                }
            })
            .unwrap_or_else(|| panic!("{events:?}"));
        assert!(matches!(events[released + 1], Event::IrqEnter { i: 0, .. }));
        let yields = events[..released]
            .iter()
            .filter(|e| matches!(e, Event::Yield { .. }))
            .count();
        assert!(yields <= 2, "{yields}");
    }

    #[test]
    fn a_handler_that_would_block_ends_the_run_with_its_verdict() {
        let handler = [
            Op::Acquire { s: 21, l: 4, c: 4 },
            Op::Release { s: 22, l: 4 },
        ];
        let handlers = [(spontaneous(1, 1), &handler[..])];
        let mut task = vec![Op::Acquire { s: 5, l: 4, c: 4 }];
        task.extend([Op::Yield { s: 9 }; 20]);
        task.push(Op::Release { s: 6, l: 4 });
        let mut blocked = 0;
        for seed in 0..20 {
            let (v, events) = run(seed, &task, &handlers);
            if v == Verdict::HandlerBlocked {
                blocked += 1;
                assert!(events.iter().any(|e| matches!(
                    e,
                    Event::HandlerBlocked { t, s: 21, kind: 0, on: 4 } if *t == irq::irq_context(0)
                )));
            }
        }
        assert!(blocked > 0);
    }

    #[test]
    fn the_lean_path_takes_the_general_loops_decisions_with_interrupts() {
        let handlers = [
            (spontaneous(2, 3), &HANDLER[..]),
            (requested(1), &HANDLER[..]),
        ];
        let mut task = vec![Op::IrqRequest { s: 5, i: 1 }];
        task.extend(
            [
                Op::Read { s: 10, a: 7 },
                Op::Yield { s: 9 },
                Op::Write { s: 11, a: 7 },
            ]
            .repeat(6),
        );
        for seed in 0..40 {
            let mut config = with(StrategyId::Random, seed, &[]);
            config.trace = TraceLevel::Sync;
            config.irq_horizon = 6;
            let lean = schedule_with_irqs(&config, &[&task, &task], &handlers, true);
            let general = schedule_with_irqs(&config, &[&task, &task], &handlers, false);
            assert_eq!(lean, general, "seed {seed}");
        }
    }
}

mod triples {
    use super::*;
    use irq::{Firing, IrqSource};

    /// Task A reads then writes location 7 (sites 10, 11); task B writes it (site 20).
    fn bps() -> Vec<(u32, u32)> {
        vec![
            (10, aux(role::FIRST, 0)),
            (11, aux(role::SECOND, 0)),
            (20, aux(role::REMOTE, 0)),
        ]
    }

    fn unserializable(events: &[Event]) -> Vec<Event> {
        events
            .iter()
            .filter(|e| matches!(e, Event::Unserializable { .. }))
            .copied()
            .collect()
    }

    #[test]
    fn avio_puts_the_remote_write_between_two_accesses_of_a_task() {
        let a = [Op::Read { s: 10, a: 7 }, Op::Write { s: 11, a: 7 }];
        let mut b: Vec<Op> = FILLER.to_vec();
        b.push(Op::Write { s: 20, a: 7 });
        let mut avio = 0;
        let mut random = 0;
        for seed in 0..40 {
            let (v, events) = simulate(&with(StrategyId::Avio, seed, &bps()), &[&a, &b]);
            assert_eq!(v, Verdict::Pass);
            let found = unserializable(&events);
            if let [Event::Unserializable { t, s, by, s2, a }] = found[..] {
                assert_eq!((t, s, by, s2, a), (1, 11, 2, 20, 7));
                avio += 1;
            }
            let (_, events) = simulate(&with(StrategyId::Random, seed, &bps()), &[&a, &b]);
            random += (!unserializable(&events).is_empty()) as u32;
        }
        // B writes after its yields: only holding A at its write lines the triple up.
        assert!(avio >= 35, "{avio}");
        assert!(random < avio, "{random}");
        // A serializable triple (R-R-W) is never reported.
        let b_reads: Vec<Op> = [Op::Read { s: 20, a: 7 }].to_vec();
        for seed in 0..20 {
            let (_, events) = simulate(&with(StrategyId::Avio, seed, &bps()), &[&a, &b_reads]);
            assert!(unserializable(&events).is_empty());
        }
    }

    /// One poll of an Embassy task (as Jostle's embassy-executor makes it): its executor's
    /// lock `e` (of class `class`) around `body`, each access of `body` inside a guard of
    /// the async mutex 0x40.
    fn poll(e: u32, class: u32, body: &[Op]) -> Vec<Op> {
        let mut ops = vec![Op::Acquire {
            s: 30,
            l: e,
            c: class,
        }];
        for op in body {
            ops.push(Op::Acquire {
                s: 31,
                l: 0x40,
                c: 0x40,
            });
            ops.push(*op);
            ops.push(Op::Release { s: 31, l: 0x40 });
        }
        ops.push(Op::Release { s: 30, l: e });
        ops
    }

    /// mutex_check_then_act's shape: task A checks location 7 in one poll (`a1`, site 10)
    /// and acts on it in its next (`a3`, site 11); task B polls three times, then writes it
    /// (`a2`, site 20). With `class` the executor's lock's class: how many of 40 seeds
    /// report the triple under `strategy`, and whether any held A at `a3`.
    fn check_then_act_across_polls(strategy: StrategyId, class: u32) -> (usize, bool) {
        let e = 0xE0;
        let mut a = poll(e, class, &[Op::Read { s: 10, a: 7 }]);
        a.extend(poll(e, class, &[Op::Write { s: 11, a: 7 }]));
        let mut b = Vec::new();
        for work in 0..3 {
            b.extend(poll(e, class, &[Op::Write { s: 9, a: 99 + work }]));
        }
        b.extend(poll(e, class, &[Op::Write { s: 20, a: 7 }]));
        let mut reported = 0;
        let mut held_in_vain = false;
        for seed in 0..40 {
            let (v, events) = simulate(&with(strategy, seed, &bps()), &[&a, &b]);
            assert_eq!(v, Verdict::Pass, "seed {seed}");
            let found = unserializable(&events);
            if let [Event::Unserializable { t, s, by, s2, a }] = found[..] {
                assert_eq!((t, s, by, s2, a), (1, 11, 2, 20, 7), "seed {seed}");
                reported += 1;
            }
            held_in_vain |= events
                .iter()
                .any(|e| matches!(e, Event::Postpone { s: 11, .. }));
        }
        (reported, held_in_vain)
    }

    #[test]
    fn avio_pauses_an_embassy_task_between_its_polls_until_the_remote_write_lands() {
        use crate::event::EXECUTOR_CLASS;
        // Held at `a3` the task would hold its executor's lock, and B could never come
        // first: Avio pauses A at the start of its next poll instead, until B's write lands.
        // (Unless B made its write before A's first poll.)
        let (avio, held_in_vain) = check_then_act_across_polls(StrategyId::Avio, EXECUTOR_CLASS);
        assert!(avio >= 35, "{avio}");
        assert!(!held_in_vain);
        // What lands between two polls is real under any strategy: Random reports the
        // seeds where B's write happened to come between A's polls.
        let (random, _) = check_then_act_across_polls(StrategyId::Random, EXECUTOR_CLASS);
        assert!(random > 0 && random < avio, "{random}");
        // Between two sections of an ordinary lock, the same accesses are the design
        // (`Windows::crossed`): nothing is reported.
        let (ordinary, _) = check_then_act_across_polls(StrategyId::Avio, 0xE0);
        assert_eq!(ordinary, 0);
    }

    #[test]
    fn a_window_stays_open_while_its_first_site_touches_another_location() {
        // racebench 024's getter: site 10 reads location 7 then location 8 before site 11
        // reads 7 again. With one window per task the read of 8 replaced the one on 7 and
        // the triple on 7 was never lined up.
        let a = [
            Op::Read { s: 10, a: 7 },
            Op::Read { s: 10, a: 8 },
            Op::Read { s: 11, a: 7 },
        ];
        let mut b: Vec<Op> = FILLER.to_vec();
        b.push(Op::Write { s: 20, a: 7 });
        let mut lined_up = 0;
        for seed in 0..40 {
            let (_, events) = simulate(&with(StrategyId::Avio, seed, &bps()), &[&a, &b]);
            let found = unserializable(&events);
            if let [Event::Unserializable { t, s, by, s2, a }] = found[..] {
                assert_eq!((t, s, by, s2, a), (1, 11, 2, 20, 7));
                lined_up += 1;
            }
        }
        // As in the test above (B may also write before A reaches `a3`, unheld).
        assert!(lined_up >= 35, "{lined_up}");
        // Another access to 7 in between (site 768, whose filter bit no target shares): `a1` and `a3`
        // are no longer consecutive, so the window closes and nothing is reported, on the
        // kernel's lean path as in the general loop (the lean path must not skip the
        // access that closes the window: a confirmation would not replay at full trace).
        let broken = [
            Op::Read { s: 10, a: 7 },
            Op::Yield { s: 9 },
            Op::Read { s: 768, a: 7 },
            Op::Read { s: 11, a: 7 },
        ];
        for seed in 0..40 {
            let mut config = with(StrategyId::Avio, seed, &bps());
            config.trace = TraceLevel::Sync;
            let lean = schedule_with_irqs(&config, &[&broken, &b], &[], true);
            let general = schedule_with_irqs(&config, &[&broken, &b], &[], false);
            assert!(
                unserializable(&lean.1).is_empty(),
                "seed {seed}: {:?}",
                lean.1
            );
            assert_eq!(lean, general, "seed {seed}");
        }
    }

    #[test]
    fn a_handler_is_fired_before_the_window_masks_it() {
        // racebench 019's shape: after `a1` the task yields, then masks the handler before
        // `a3`. Fired at `a3` the handler could never land; fired in the window it can.
        let handler = [Op::Write { s: 20, a: 7 }];
        let handlers = [(
            IrqSource {
                priority: 1,
                firing: Firing::Spontaneous { max: 1 },
            },
            &handler[..],
        )];
        let task = [
            Op::Read { s: 10, a: 7 },
            Op::Yield { s: 9 },
            Op::IrqMask {
                s: 12,
                i: 0,
                on: true,
            },
            Op::Read { s: 11, a: 7 },
            Op::IrqMask {
                s: 13,
                i: 0,
                on: false,
            },
        ];
        let mut bps = bps();
        bps.push((0, aux(role::FIRE, 0)));
        let mut lined_up = 0;
        for seed in 0..40 {
            let mut config = with(StrategyId::Avio, seed, &bps);
            // The handler's spontaneous firing falls past the run: only the strategy fires.
            config.irq_horizon = 1000;
            let (_, events, _) = schedule_with_irqs(&config, &[&task], &handlers, true);
            let found = unserializable(&events);
            if let [
                Event::Unserializable {
                    t: 1,
                    s: 11,
                    s2: 20,
                    a: 7,
                    by,
                },
            ] = found[..]
            {
                assert_eq!(by, irq::irq_context(0));
                lined_up += 1;
            }
        }
        // Two points before the mask, each fires with probability 1/2: about 3 in 4.
        assert!(lined_up >= 20, "{lined_up}");
    }

    #[test]
    fn a_masked_remote_is_fired_after_the_handler_that_unmasks_it() {
        // racebench 014's shape: the task masks source 0 around `a1`..`a3`; source 1, more
        // urgent, enables source 0. Named as the unmasker, source 1 fires in the window, then
        // source 0 lands between the reads; without it, source 0 never can.
        let remote = [Op::Write { s: 20, a: 7 }];
        let unmasker = [Op::IrqMask {
            s: 30,
            i: 0,
            on: false,
        }];
        let spontaneous = |priority| IrqSource {
            priority,
            firing: Firing::Spontaneous { max: 1 },
        };
        let handlers = [
            (spontaneous(2), &remote[..]),
            (spontaneous(1), &unmasker[..]),
        ];
        let task = [
            Op::IrqMask {
                s: 12,
                i: 0,
                on: true,
            },
            Op::Read { s: 10, a: 7 },
            Op::Yield { s: 9 },
            Op::Read { s: 11, a: 7 },
        ];
        let lined_up = |unmasker: bool| {
            let mut bps = bps();
            bps.push((0, aux(role::FIRE, 0)));
            if unmasker {
                bps.push((1, aux(role::FIRE, 1)));
            }
            (0..40)
                .filter(|&seed| {
                    let mut config = with(StrategyId::Avio, seed, &bps);
                    // Spontaneous firings fall past the run: only the strategy fires.
                    config.irq_horizon = 1000;
                    let (_, events, _) = schedule_with_irqs(&config, &[&task], &handlers, true);
                    matches!(
                        unserializable(&events)[..],
                        [Event::Unserializable { t: 1, s: 11, s2: 20, a: 7, by }]
                            if by == irq::irq_context(0)
                    )
                })
                .count()
        };
        assert_eq!(lined_up(false), 0);
        // Fired at the yield with probability 1/2, else at `a3`: every seed.
        assert_eq!(lined_up(true), 40);
    }

    #[test]
    fn a_handler_between_two_critical_sections_is_the_design() {
        // irq_masked_ok's shape: `a1` ends one critical section, `a3` starts the next; the
        // handler may run between them, by design. Neither a firing in the window nor a
        // spontaneous one there is a violation; the same task without the sections is one.
        let handler = [Op::Update { s: 20, a: 7 }];
        let handlers = [(
            IrqSource {
                priority: 1,
                firing: Firing::Spontaneous { max: 2 },
            },
            &handler[..],
        )];
        let sections = [
            Op::CsEnter,
            Op::Write { s: 10, a: 7 },
            Op::CsExit,
            Op::Yield { s: 9 },
            Op::CsEnter,
            Op::Read { s: 11, a: 7 },
            Op::CsExit,
        ];
        let bare = [
            Op::Write { s: 10, a: 7 },
            Op::Yield { s: 9 },
            Op::Read { s: 11, a: 7 },
        ];
        let mut bps = bps();
        bps.push((0, aux(role::FIRE, 0)));
        let found = |task: &[Op]| {
            (0..40)
                .filter(|&seed| {
                    let mut config = with(StrategyId::Avio, seed, &bps);
                    config.irq_horizon = 8;
                    let (_, events, _) = schedule_with_irqs(&config, &[task], &handlers, true);
                    !unserializable(&events).is_empty()
                })
                .count()
        };
        assert_eq!(found(&sections), 0);
        assert!(found(&bare) >= 20, "{}", found(&bare));
    }

    #[test]
    fn a_remote_read_of_its_own_write_is_not_unserializable() {
        // racebench 009's shape: W-R-W, but the handler reads back what it stored itself.
        let reads_back = [Op::Write { s: 19, a: 7 }, Op::Read { s: 20, a: 7 }];
        let reads_only = [Op::Read { s: 20, a: 7 }];
        let task = [
            Op::Write { s: 10, a: 7 },
            Op::Yield { s: 9 },
            Op::Write { s: 11, a: 7 },
        ];
        let mut bps = bps();
        bps.push((0, aux(role::FIRE, 0)));
        let found = |handler: &[Op]| {
            let handlers = [(
                IrqSource {
                    priority: 1,
                    firing: Firing::Spontaneous { max: 1 },
                },
                handler,
            )];
            (0..20)
                .filter(|&seed| {
                    let mut config = with(StrategyId::Avio, seed, &bps);
                    config.irq_horizon = 1000;
                    let (_, events, _) = schedule_with_irqs(&config, &[&task], &handlers, true);
                    !unserializable(&events).is_empty()
                })
                .count()
        };
        assert_eq!(found(&reads_only), 20);
        assert_eq!(found(&reads_back), 0);
    }

    #[test]
    fn a_handler_holding_the_remote_access_is_fired_in_the_window() {
        let handler = [Op::Update { s: 20, a: 7 }];
        let handlers = [(
            IrqSource {
                priority: 1,
                firing: Firing::Spontaneous { max: 1 },
            },
            &handler[..],
        )];
        let task = [Op::Read { s: 10, a: 7 }, Op::Write { s: 11, a: 7 }];
        let mut bps = bps();
        bps.push((0, aux(role::FIRE, 0)));
        for seed in 0..20 {
            let mut config = with(StrategyId::Avio, seed, &bps);
            config.irq_horizon = 1000;
            let (_, events, _) = schedule_with_irqs(&config, &[&task], &handlers, true);
            let found = unserializable(&events);
            assert_eq!(found.len(), 1, "seed {seed}: {events:?}");
            assert!(
                matches!(found[0], Event::Unserializable { t: 1, s: 11, s2: 20, a: 7, by } if by == irq::irq_context(0))
            );
        }
    }

    #[test]
    fn racefuzzer_makes_a_race_between_nested_handlers_real() {
        // A low-priority handler reads then writes; a more urgent one updates the same
        // location. RaceFuzzer fires the urgent one while the low one stands at its write.
        let low = [Op::Read { s: 30, a: 7 }, Op::Write { s: 31, a: 7 }];
        let high = [Op::Update { s: 40, a: 7 }];
        let spontaneous = |priority| IrqSource {
            priority,
            firing: Firing::Spontaneous { max: 1 },
        };
        let handlers = [(spontaneous(2), &low[..]), (spontaneous(1), &high[..])];
        let bps = [
            (31, aux(role::RACE, 0)),
            (40, aux(role::RACE, 1)),
            (1, aux(role::FIRE, 1)),
        ];
        for seed in 0..20 {
            let mut config = with(StrategyId::Race, seed, &bps);
            config.irq_horizon = 4;
            let (_, events, _) = schedule_with_irqs(&config, &[&FILLER], &handlers, true);
            let races: Vec<_> = events
                .iter()
                .filter(|e| matches!(e, Event::RealRace { .. }))
                .collect();
            assert_eq!(races.len(), 1, "seed {seed}: {events:?}");
            let (low_ctx, high_ctx) = (irq::irq_context(0), irq::irq_context(1));
            assert!(
                matches!(races[0], Event::RealRace { t, s: 40, t2, s2: 31, a: 7 } if *t == high_ctx && *t2 == low_ctx),
                "seed {seed}: {races:?}"
            );
        }
    }

    #[test]
    fn racefuzzer_fires_the_handler_on_the_other_side() {
        let handler = [Op::Update { s: 20, a: 7 }];
        let handlers = [(
            IrqSource {
                priority: 1,
                firing: Firing::Spontaneous { max: 1 },
            },
            &handler[..],
        )];
        let mut task: Vec<Op> = FILLER.to_vec();
        task.push(Op::Write { s: 11, a: 7 });
        let bps = [
            (11, aux(role::RACE, 0)),
            (20, aux(role::RACE, 1)),
            (0, aux(role::FIRE, 1)),
        ];
        let mut handler_first = 0;
        for seed in 0..30 {
            let mut config = with(StrategyId::Race, seed, &bps);
            config.irq_horizon = 1000;
            let (_, events, _) = schedule_with_irqs(&config, &[&task], &handlers, true);
            let races: Vec<_> = events
                .iter()
                .filter(|e| matches!(e, Event::RealRace { .. }))
                .collect();
            let write = events
                .iter()
                .position(|e| matches!(e, Event::Write { s: 11, .. }))
                .unwrap();
            let update = events
                .iter()
                .position(|e| matches!(e, Event::Update { s: 20, .. }))
                .unwrap();
            if update < write {
                // Fired before the task's access: the race with the stopped task is real.
                assert_eq!(races.len(), 1, "seed {seed}: {events:?}");
                handler_first += 1;
            } else {
                // Fired right after it: no other operation between the write and the entry.
                let enter = events
                    .iter()
                    .position(|e| matches!(e, Event::IrqEnter { .. }))
                    .unwrap();
                assert!(
                    events[write + 1..enter]
                        .iter()
                        .all(|e| matches!(e, Event::TaskExit { .. })),
                    "seed {seed}: {events:?}"
                );
            }
        }
        assert!(handler_first > 5 && handler_first < 25, "{handler_first}");
    }

    #[test]
    fn a_more_urgent_handler_lands_between_a_handlers_two_accesses() {
        let low = [Op::Read { s: 10, a: 8 }, Op::Write { s: 11, a: 8 }];
        let high = [Op::Update { s: 20, a: 8 }];
        let handlers = [
            (
                IrqSource {
                    priority: 2,
                    firing: Firing::Spontaneous { max: 1 },
                },
                &low[..],
            ),
            (
                IrqSource {
                    priority: 1,
                    firing: Firing::Spontaneous { max: 1 },
                },
                &high[..],
            ),
        ];
        let task = [Op::Yield { s: 9 }; 20];
        let mut bps = bps();
        bps.push((1, aux(role::FIRE, 0)));
        let mut found = 0;
        for seed in 0..30 {
            let mut config = with(StrategyId::Avio, seed, &bps);
            config.irq_horizon = 10;
            let (_, events, _) = schedule_with_irqs(&config, &[&task], &handlers, true);
            for e in unserializable(&events) {
                assert!(
                    matches!(e, Event::Unserializable { t, by, .. } if t == irq::irq_context(0) && by == irq::irq_context(1))
                );
                found += 1;
            }
        }
        // Whenever the low handler fires before the high one, the high one is fired into it.
        assert!(found >= 10, "{found}");
    }
}

#[test]
fn inputs_follow_the_seed_and_leave_the_schedule_alone() {
    let draw = |seed| {
        let mut c = core(seed);
        let before = c.rng.clone();
        let values: Vec<u32> = (0..32).map(|_| c.input(10)).collect();
        // The scheduler's stream is untouched: drawing inputs changes no decision.
        assert_eq!(c.rng, before);
        values
    };
    assert_eq!(draw(7), draw(7));
    assert_ne!(draw(7), draw(8));
    assert!(draw(7).iter().all(|&v| v < 10));
    assert!(draw(7).iter().any(|&v| v != draw(7)[0]));
    assert_eq!(core(7).input(0), 0);
}

/// A step of a scripted task that uses time and wake-ups.
#[derive(Clone, Copy)]
enum Act {
    Do(Op),
    /// Sets the task's timer (key = its wake-up signal) to tick `at`.
    TimerAt(u32, u64),
    /// Sleeps on wake-up `g`: declares the sleeper, then waits on `g`.
    Sleep(u32),
    /// Records the clock.
    Clock,
    /// The task's poll returned `Pending` ([`Core::poll_pending`]).
    PollPending,
}

/// Runs main (task 0) and `programs`; returns the verdict, the events and the clock each
/// `Act::Clock` read, with its task.
fn timed(seed: u64, main: &[Act], programs: &[&[Act]]) -> (Verdict, Vec<Event>, Vec<(u8, u64)>) {
    timed_with(&with(StrategyId::Random, seed, &[]), main, programs)
}

/// [`timed`] under `config`.
fn timed_with(
    config: &Config,
    main: &[Act],
    programs: &[&[Act]],
) -> (Verdict, Vec<Event>, Vec<(u8, u64)>) {
    let mut c = Core::new(config, 0, Rec::default());
    let mut scripts: Vec<Vec<Act>> = vec![Vec::new(); MAX_TASKS];
    let mut spawns = Vec::new();
    for p in programs {
        let id = c.reserve().unwrap();
        scripts[id as usize] = p.to_vec();
        spawns.push(Act::Do(Op::Spawn { s: 1, child: id }));
    }
    scripts[0] = spawns.into_iter().chain(main.iter().copied()).collect();
    let mut pc = [0usize; MAX_TASKS];
    let mut clocks = Vec::new();
    let mut next = c.decide();
    loop {
        let t = match next {
            Next::End(v) => return (v, c.sink.0, clocks),
            Next::Run(t) => t,
            Next::Fire(_) => unreachable!("no sources"),
        };
        let i = t as usize;
        next = loop {
            let Some(act) = scripts[i].get(pc[i]).copied() else {
                break c.exit(t);
            };
            pc[i] += 1;
            match act {
                Act::Do(op) => break c.point(t, op),
                Act::TimerAt(g, at) => c.set_timer(g, at, time::TimerAction::Wake(g)),
                Act::Sleep(g) => {
                    c.sleep(t, g, 40 + g, [g, 0, 0, 0]);
                    break c.point(t, Op::Wait { s: 40 + g, g });
                }
                Act::Clock => clocks.push((t, c.now())),
                Act::PollPending => c.poll_pending(t),
            }
        };
    }
}

#[test]
fn time_jumps_to_each_deadline_only_when_nothing_else_can_run() {
    // Task a sleeps until tick 50, task b until tick 30 and then works; main spins a while.
    let a = [Act::TimerAt(100, 50), Act::Sleep(100), Act::Clock];
    let b = [
        Act::TimerAt(200, 30),
        Act::Sleep(200),
        Act::Clock,
        Act::Do(Op::Yield { s: 9 }),
        Act::Clock,
    ];
    let main = [
        Act::Clock,
        Act::Do(Op::Yield { s: 8 }),
        Act::Do(Op::Yield { s: 8 }),
        Act::Clock,
    ];
    for seed in 0..20 {
        let (verdict, events, clocks) = timed(seed, &main, &[&a, &b]);
        assert_eq!(verdict, Verdict::Pass, "seed {seed}");
        // Main runs at tick 0 whatever the order: nobody sleeps while it can run.
        assert!(clocks.iter().filter(|(t, _)| *t == 0).all(|(_, c)| *c == 0));
        // b's two readings are at tick 30 (a step takes no time), a's at 50.
        let of = |t: u8| -> Vec<u64> {
            clocks
                .iter()
                .filter(|(x, _)| *x == t)
                .map(|(_, c)| *c)
                .collect()
        };
        assert_eq!(of(2), [30, 30], "seed {seed}");
        assert_eq!(of(1), [50], "seed {seed}");
        let advances: Vec<u64> = events
            .iter()
            .filter_map(|e| match e {
                Event::TimeAdvance { now } => Some(*now),
                _ => None,
            })
            .collect();
        assert_eq!(advances, [30, 50], "seed {seed}");
        assert!(events.contains(&Event::TimerFire {
            k: 200,
            g: 200,
            i: time::NO_SOURCE
        }));
    }
}

/// `rounds` polls of a task that wakes `other`, returns `Pending` (after a write of `a`
/// when `writes`), then waits for its own wake-up `me`.
fn waker_ping_pong(me: u32, other: u32, rounds: usize, writes: Option<u32>) -> Vec<Act> {
    let mut p = Vec::new();
    for _ in 0..rounds {
        if let Some(a) = writes {
            p.push(Act::Do(Op::Write { s: 70, a }));
        }
        p.push(Act::Do(Op::Signal { s: 71, g: other }));
        p.push(Act::PollPending);
        p.push(Act::Sleep(me));
    }
    p
}

/// The index of the first event `f` accepts.
fn first(events: &[Event], f: impl Fn(&Event) -> bool) -> usize {
    events.iter().position(f).unwrap()
}

#[test]
fn tasks_that_only_wake_each_other_let_time_pass_to_the_next_deadline() {
    // The holder sleeps until tick 50; two waiters wake each other and do nothing else
    // (embassy-sync's Mutex waiters): time passes once they have spun for the livelock
    // bound (1000 steps), not when their (long) scripts end.
    let holder = [Act::TimerAt(100, 50), Act::Sleep(100), Act::Clock];
    let b = waker_ping_pong(200, 300, 1000, None);
    let c = waker_ping_pong(300, 200, 1000, None);
    for seed in 0..10 {
        let (verdict, events, clocks) = timed(seed, &[], &[&holder, &b, &c]);
        assert_eq!(verdict, Verdict::Pass, "seed {seed}");
        assert_eq!(clocks, [(1, 50)], "seed {seed}");
        let advance = first(&events, |e| matches!(e, Event::TimeAdvance { now: 50 }));
        let woken = first(&events, |e| matches!(e, Event::Wait { t: 1, .. }));
        // One event per step, a few before the waiters begin.
        assert!(
            (1000..1100).contains(&advance),
            "seed {seed}: time passed at event {advance}"
        );
        assert!(
            woken > advance && woken < advance + 100,
            "seed {seed}: {woken}"
        );
    }
    // A hand-off of a few polls (fewer steps than the bound) is no spin: time stays.
    let b = waker_ping_pong(200, 300, 50, None);
    let c = waker_ping_pong(300, 200, 50, None);
    // Waiters that write between their wakes make progress, however long.
    let bw = waker_ping_pong(200, 300, 1000, Some(1));
    let cw = waker_ping_pong(300, 200, 1000, Some(2));
    for (b, c, signals) in [(b, c, 100), (bw, cw, 2000)] {
        let (verdict, events, _) = timed(3, &[], &[&holder, &b, &c]);
        assert_eq!(verdict, Verdict::Pass);
        let advance = first(&events, |e| matches!(e, Event::TimeAdvance { .. }));
        let before = events[..advance]
            .iter()
            .filter(|e| matches!(e, Event::Signal { .. }))
            .count();
        assert_eq!(before, signals);
    }
}

#[test]
fn a_task_a_timer_woke_goes_before_spinners_whatever_the_strategy_prefers() {
    // The waiters wake each other for ever; the holder, woken at tick 50, must get its turn
    // under PCT too (whose priorities may put both waiters above it).
    let holder = [Act::TimerAt(100, 50), Act::Sleep(100), Act::Clock];
    let b = waker_ping_pong(200, 300, 30_000, None);
    let c = waker_ping_pong(300, 200, 30_000, None);
    for seed in 0..40 {
        let mut config = with(StrategyId::Pct, seed, &[]);
        // Priority change points spread over a long run: the first priorities hold a while.
        config.params[1] = 100_000;
        let (_, events, clocks) = timed_with(&config, &[], &[&holder, &b, &c]);
        assert_eq!(clocks, [(1, 50)], "seed {seed}");
        // Time passes after the bound's steps of spinning; the holder, woken, may be passed
        // over until the spinners have spun for the bound again, not longer.
        let woken = first(&events, |e| matches!(e, Event::Wait { t: 1, .. }));
        assert!(
            woken < 2200,
            "seed {seed}: the holder went on at event {woken}"
        );
    }
}

#[test]
fn spinning_polls_with_no_timer_pending_still_end_at_the_step_limit() {
    // No deadline to pass to: the waiters' wakes go on, and the step limit ends the run.
    let b = waker_ping_pong(200, 300, 100_000, None);
    let c = waker_ping_pong(300, 200, 100_000, None);
    let (verdict, events, _) = timed(1, &[], &[&b, &c]);
    assert_eq!(verdict, Verdict::StepLimit);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::TimeAdvance { .. }))
    );
}

#[test]
fn timers_due_together_fire_together_and_the_strategy_orders_their_tasks() {
    // Both sleep until tick 10; which writes first varies with the seed.
    let a = [
        Act::TimerAt(100, 10),
        Act::Sleep(100),
        Act::Do(Op::Write { s: 5, a: 1 }),
    ];
    let b = [
        Act::TimerAt(200, 10),
        Act::Sleep(200),
        Act::Do(Op::Write { s: 6, a: 1 }),
    ];
    let mut firsts = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let (verdict, events, _) = timed(seed, &[], &[&a, &b]);
        assert_eq!(verdict, Verdict::Pass);
        let fired: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, Event::TimerFire { .. }))
            .map(|(i, _)| i)
            .collect();
        // One jump, both fire before either task goes on.
        assert_eq!(fired.len(), 2);
        assert_eq!(fired[1], fired[0] + 1);
        let first = events.iter().find_map(|e| match e {
            Event::Wait { t, .. } => Some(*t),
            _ => None,
        });
        firsts.insert(first);
    }
    assert_eq!(firsts.len(), 2, "both orders over 20 seeds: {firsts:?}");
}

#[test]
fn a_sleeper_nothing_wakes_is_a_lost_wake_up_and_one_woken_is_not() {
    // a sleeps on 100 and nobody signals it.
    let a = [Act::Sleep(100)];
    let (verdict, events, _) = timed(1, &[], &[&a]);
    assert_eq!(verdict, Verdict::LostWake);
    assert_eq!(verdict.exit_code(), 44);
    assert!(events.contains(&Event::LostWake {
        t: 1,
        s: 140,
        g: 100,
        p0: 100,
        p1: 0,
        p2: 0,
        p3: 0
    }));
    assert!(!events.iter().any(|e| matches!(e, Event::Blocked { .. })));
    // The same with b signalling 100 (before or after a sleeps): a pass.
    let b = [Act::Do(Op::Signal { s: 7, g: 100 })];
    for seed in 0..10 {
        let (verdict, events, _) = timed(seed, &[], &[&a, &b]);
        assert_eq!(verdict, Verdict::Pass, "seed {seed}");
        assert!(!events.iter().any(|e| matches!(e, Event::LostWake { .. })));
    }
    // A timer is a wake-up too: a run with one pending is not over.
    let c = [Act::TimerAt(100, 1_000_000), Act::Sleep(100)];
    assert_eq!(timed(1, &[], &[&c]).0, Verdict::Pass);
}

#[test]
fn a_lock_cycle_stays_a_deadlock_beside_a_sleeper() {
    let sleeper = [Act::Sleep(100)];
    let ab = [
        Act::Do(Op::Acquire { s: 1, l: 10, c: 10 }),
        Act::Do(Op::Yield { s: 2 }),
        Act::Do(Op::Acquire { s: 3, l: 20, c: 20 }),
    ];
    let ba = [
        Act::Do(Op::Acquire { s: 4, l: 20, c: 20 }),
        Act::Do(Op::Yield { s: 5 }),
        Act::Do(Op::Acquire { s: 6, l: 10, c: 10 }),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let (verdict, _, _) = timed(seed, &[], &[&sleeper, &ab, &ba]);
        assert!(
            matches!(verdict, Verdict::Deadlock | Verdict::LostWake),
            "{verdict:?}"
        );
        seen.insert(verdict as u8);
    }
    // Some seeds close the cycle (deadlock), others do not (only the sleeper is left).
    assert_eq!(seen.len(), 2, "{seen:?}");
}

#[test]
fn a_timer_may_request_an_interrupt_source() {
    let mut c = core(3);
    let source = irq::IrqSource {
        priority: 1,
        firing: irq::Firing::Requested,
    };
    c.declare_irqs(&[source]);
    assert_eq!(c.decide(), Next::Run(0));
    assert_eq!(
        c.point(
            0,
            Op::IrqMask {
                s: 1,
                i: crate::op::ALL_IRQS,
                on: false
            }
        ),
        Next::Run(0)
    );
    c.set_timer(7, 25, time::TimerAction::Request(0));
    c.sleep(0, 300, 0, [0; 4]);
    // Main waits for a signal the handler sends: the clock moves, the source fires.
    assert_eq!(c.point(0, Op::Wait { s: 2, g: 300 }), Next::Fire(0));
    assert_eq!(c.now(), 25);
    let ctx = c.irq_enter(0, 0);
    assert_eq!(
        c.handler_point(ctx, Op::Signal { s: 3, g: 300 }),
        irq::HandlerNext::Run
    );
    c.irq_exit(0);
    assert_eq!(c.resume(), Next::Run(0));
    assert_eq!(c.exit(0), Next::End(Verdict::Pass));
}
