//! The spine on QEMU and the host port: determinism, exploration, verdicts, the event
//! model's round trip, the configuration block, and cross-port equality of decisions.

use crate::common;

use common::*;
use jostle_host_tools::Outcome;
use jostle_host_tools::trace::decode::{FrameDecoder, Item};
use jostle_kernel::config::{Rejection, StrategyId};
use jostle_kernel::event::WaitKind;
use jostle_kernel::{Config, Event, TraceLevel, Verdict};

#[test]
fn same_seed_gives_a_byte_identical_event_stream() {
    let fw = firmware("rf_fig2");
    for seed in [0, 7, 12345] {
        let a = qemu().run(&fw, &config(seed, &[5])).unwrap();
        let b = qemu().run(&fw, &config(seed, &[5])).unwrap();
        assert!(!a.frames.is_empty());
        assert_eq!(a.frames, b.frames, "seed {seed}: streams differ");
        assert_eq!(a.exit_code, b.exit_code);
    }
}

#[test]
fn twenty_seeds_give_distinct_interleavings_of_rf_fig2() {
    let fw = firmware("rf_fig2");
    let mut seen = std::collections::HashSet::new();
    for seed in 0..20 {
        seen.insert(run_qemu(&fw, config(seed, &[])).decisions());
    }
    assert!(seen.len() >= 2, "only {} interleaving(s)", seen.len());
}

#[test]
fn abba_deadlock_is_reached_and_reported_with_holders() {
    let fw = firmware("abba_deadlock");
    let found = (0..200).map(|seed| run_qemu(&fw, config(seed, &[])));
    let run = found
        .into_iter()
        .find(|r| r.outcome == Some(Outcome::Verdict(Verdict::Deadlock)))
        .expect("a deadlock within 200 seeds");
    assert_eq!(run.exit_code, Some(12));
    let blocked: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match *e {
            Event::Blocked {
                t,
                kind,
                on,
                holder,
                ..
            } => Some((t, kind, on, holder)),
            _ => None,
        })
        .collect();
    // Main waits to join; the two workers each wait for the lock the other holds.
    let locks: Vec<_> = blocked
        .iter()
        .filter(|b| b.1 == WaitKind::Lock as u8)
        .collect();
    assert_eq!(locks.len(), 2, "{blocked:?}");
    assert_eq!(locks[0].3, locks[1].0);
    assert_eq!(locks[1].3, locks[0].0);
    assert_ne!(locks[0].2, locks[1].2);
}

#[test]
fn a_panicking_task_gives_the_panic_verdict_with_its_site() {
    let fw = firmware("rf_fig1");
    let run = (0..100)
        .map(|seed| run_qemu(&fw, config(seed, &[])))
        .find(|r| r.outcome == Some(Outcome::Verdict(Verdict::Panic)))
        .expect("ERROR1 is reachable");
    let panic = run.panic.clone().expect("panic report");
    let site = panic.site.expect("panic site");
    assert_eq!(site.file, "examples/src/bin/rf_fig1.rs");
    assert_eq!(
        site.line,
        line_of("examples/src/bin/rf_fig1.rs", "panic!(\"ERROR1\")")
    );
    assert_eq!(panic.message.as_deref(), Some("ERROR1"));
    assert_eq!(run.exit_code, Some(11));
    // The device's own site definition agrees with resolving the address from the ELF.
    let Some(Event::TaskPanic { s, .. }) = run
        .events
        .iter()
        .find(|e| matches!(e, Event::TaskPanic { .. }))
    else {
        panic!("no TaskPanic event")
    };
    let from_elf = fw.resolve_site(*s).expect("ELF resolves the panic site");
    assert_eq!(from_elf.file, site.file);
    assert_eq!(from_elf.line, site.line);
}

#[test]
fn every_event_kind_round_trips_through_defmt() {
    let fw = firmware("event_roundtrip");
    let raw = qemu().run(&fw, &config(0, &[])).unwrap();
    let decoded = FrameDecoder::new(&fw.table).decode_all(&raw.frames);
    assert!(decoded.error.is_none(), "{:?}", decoded.error);
    let events = decoded.events();
    let samples: Vec<Event> = Event::samples().collect();
    // The samples sit between the run's own start and end events.
    let at = events
        .windows(samples.len())
        .position(|w| w == samples.as_slice())
        .expect("all samples, in order, unchanged");
    assert!(at > 0);
    assert!(decoded.items.iter().any(|i| matches!(
        i,
        Item::Site(0x1234_5678, loc) if loc.file == "src/sample.rs" && loc.line == 12 && loc.col == 34
    )));
    assert!(
        decoded
            .items
            .iter()
            .any(|i| matches!(i, Item::PanicMessage(m) if m == "sample message: 1 + 1 != 3"))
    );
}

#[test]
fn a_corrupt_configuration_block_is_rejected_before_any_task_runs() {
    let fw = firmware("correct_counter");
    let dir = tempfile::tempdir().unwrap();
    let mut block = config(3, &[]).encode();
    block[30] ^= 0x40; // inside the checksummed area
    let path = dir.path().join("bad.bin");
    std::fs::write(&path, block).unwrap();
    let raw = qemu().run_with_block(&fw, Some(&path)).unwrap();
    let run = jostle_host_tools::RunOutcome::from_qemu(&fw, config(3, &[]), raw);
    assert!(run.error.is_none(), "{:?}", run.error);
    assert_eq!(run.outcome, Some(Outcome::Verdict(Verdict::ConfigRejected)));
    assert_eq!(run.exit_code, Some(15));
    assert!(run.events.contains(&Event::ConfigRejected {
        reason: Rejection::Checksum as u8
    }));
    assert!(
        !run.events
            .iter()
            .any(|e| matches!(e, Event::TaskStart { .. }))
    );
}

#[test]
fn an_absent_block_means_seed_zero_random() {
    let fw = firmware("rf_fig2");
    let raw = qemu().run_with_block(&fw, None).unwrap();
    let absent = jostle_host_tools::RunOutcome::from_qemu(&fw, config(0, &[]), raw);
    let explicit = run_qemu(&fw, config(0, &[]));
    assert_eq!(absent.decisions(), explicit.decisions());
    assert_eq!(
        absent.events.first(),
        Some(&Event::RunStart {
            seed: 0,
            strategy: 0,
            trace: 2,
            run: 0
        })
    );
}

#[test]
fn firmware_arguments_reach_the_firmware() {
    let fw = firmware("rf_fig2");
    // Filler statements inside the lock: thread1 does `--arg 0` updates on its own variable.
    let count = |n: u32| {
        run_qemu(&fw, config(1, &[n]))
            .events
            .iter()
            .filter(|e| matches!(e, Event::Update { t: 1, .. }))
            .count()
    };
    assert_eq!(count(5), 5);
    assert_eq!(count(37), 37);
}

#[test]
fn a_yield_on_the_lean_path_teaches_pct_the_same_on_qemu_and_the_host_port() {
    // Below the full trace, where yields take the lean path: PCT learns from the yield that
    // nobody else could have run at; who takes the lock after it shows in the sync events.
    let fw = firmware("yield_holding_lock");
    let exe = host_test_exe("yield_holding_lock");
    for seed in 0..16 {
        let c = Config {
            strategy: StrategyId::Pct,
            trace: TraceLevel::Sync,
            ..config(seed, &[])
        };
        let q = run_qemu(&fw, c.clone());
        let h = run_host_exe(&exe, c);
        assert_same_decisions(&q, &h, &format!("yield_holding_lock pct seed {seed}"));
    }
}

#[test]
fn host_port_and_qemu_make_the_same_decisions() {
    // Atomics and interrupts included: their operations are steps too. Random; POS, whose
    // decisions read every task's pending operation; PCT, which learns from every yield
    // (on the lean path as in the general loop).
    for &bin in CROSS_PORT_EXAMPLES {
        let fw = firmware(bin);
        for strategy in [StrategyId::Random, StrategyId::Pos, StrategyId::Pct] {
            for seed in 0..8 {
                let c = Config {
                    strategy,
                    ..config(seed, &[3])
                };
                let q = run_qemu(&fw, c.clone());
                let h = run_host(bin, c);
                assert_same_decisions(&q, &h, &format!("{bin} {} seed {seed}", strategy.name()));
            }
        }
    }
}

#[test]
fn a_stack_given_to_a_later_task_is_guarded_for_that_task_alone() {
    // Both tasks with MPU regions of their own, then both on the shared guard.
    let fw = firmware("stack_reuse");
    for earlier in [0u32, 8] {
        let run = run_qemu(&fw, config(0, &[0, earlier]));
        assert_eq!(
            run.outcome,
            Some(Outcome::Verdict(Verdict::Pass)),
            "{earlier} earlier tasks: {:?}",
            run.events
        );
        let run = run_qemu(&fw, config(0, &[1000, earlier]));
        assert_eq!(
            run.outcome,
            Some(Outcome::Verdict(Verdict::StackOverflow)),
            "{earlier} earlier tasks"
        );
        // Caught at the second task's guard (its frame within the guard or just below),
        // not after running on through the memory below its stack.
        let second = earlier as u8 + 2;
        assert!(
            run.events.iter().any(|e| matches!(
                e,
                Event::StackOverflow { t, size: 1024, depth } if *t == second && *depth <= 1024 + 256
            )),
            "{earlier} earlier tasks: {:?}",
            run.events
        );
    }
}

#[test]
fn stack_overflow_step_limit_and_timeout_verdicts() {
    let run = run_qemu(&firmware("stack_overflow"), config(0, &[]));
    assert_eq!(run.outcome, Some(Outcome::Verdict(Verdict::StackOverflow)));
    assert_eq!(run.exit_code, Some(14));
    assert!(run.events.iter().any(|e| matches!(
        e,
        Event::StackOverflow {
            t: 1,
            size: 1024,
            ..
        }
    )));

    let mut c = config(0, &[]);
    c.step_limit = 500;
    let run = run_qemu(&firmware("step_forever"), c);
    assert_eq!(run.outcome, Some(Outcome::Verdict(Verdict::StepLimit)));
    assert_eq!(run.steps, 500);

    let fw = firmware("never_ends");
    let q = jostle_host_tools::transport::qemu::Qemu {
        timeout: std::time::Duration::from_secs(3),
        ..qemu()
    };
    let raw = q.run(&fw, &config(0, &[])).unwrap();
    assert!(raw.timed_out);
    let run = jostle_host_tools::RunOutcome::from_qemu(&fw, config(0, &[]), raw);
    assert_eq!(run.outcome, Some(Outcome::Timeout));
    // The partial trace is kept: the write before the spin.
    assert!(run.events.iter().any(|e| matches!(e, Event::Write { .. })));
}

#[test]
fn critical_sections_are_serialised_with_the_tasks() {
    let fw = firmware("critical_section");
    for seed in 0..10 {
        let run = run_qemu(&fw, config(seed, &[]));
        assert_eq!(
            run.outcome,
            Some(Outcome::Verdict(Verdict::Pass)),
            "seed {seed}"
        );
        let enters = run
            .events
            .iter()
            .filter(|e| matches!(e, Event::CsEnter { .. }))
            .count();
        assert_eq!(enters, 6);
        // Between a task's enter and exit, no other task executes anything.
        let mut holder = None;
        for e in &run.events {
            match *e {
                Event::CsEnter { t } => holder = Some(t),
                Event::CsExit { .. } => holder = None,
                _ => {
                    if let (Some(h), Some(t)) = (holder, e.task()) {
                        assert_eq!(h, t, "seed {seed}: {e:?} inside t{h}'s section");
                    }
                }
            }
        }
    }
}

#[test]
fn a_hard_fault_is_named_in_words_with_its_registers() {
    for (arg, words) in [
        ("0", "precise data bus error at 0x60000000"),
        ("1", "undefined instruction"),
    ] {
        let out = std::process::Command::new(jostle())
            .args(["run", elf("hard_fault").to_str().unwrap(), "--arg", arg])
            .output()
            .expect("jostle runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(16), "--arg {arg}: {text}");
        let verdict = text
            .lines()
            .find(|l| l.starts_with("verdict: hard_fault"))
            .unwrap_or_else(|| panic!("--arg {arg}: no verdict line: {text}"));
        assert!(
            verdict.contains(&format!("HardFault in task t1: {words} (pc 0x")),
            "{verdict}"
        );
        for register in [
            "lr 0x", "xpsr 0x", "cfsr 0x", "hfsr 0x", "mmfar 0x", "bfar 0x",
        ] {
            assert!(verdict.contains(register), "{verdict}");
        }
    }
}
