//! Phase II on QEMU and the host port: each active strategy makes its predicted bug real,
//! reports it, replays it from the seed event for event, and takes the same decisions on
//! both ports.

use crate::common;

use common::*;
use jostle_checker::{CandidateKind, Options, Prediction};
use jostle_host_tools::RunOutcome;
use jostle_host_tools::engine::predict::{Trace, predict_trace};
use jostle_host_tools::engine::targeting::candidate_breakpoints;
use jostle_host_tools::trace::elf::Firmware;
use jostle_host_tools::trace::space::SiteSpace;
use jostle_kernel::config::StrategyId;
use jostle_kernel::{Config, Event, TraceLevel, Verdict};

/// Phase I on QEMU: a few Random runs of `bin` with `args`, predicted.
fn predicted(fw: &Firmware, args: &[u32]) -> Prediction {
    let mut p = Prediction::new();
    for seed in 0..6 {
        let run = run_qemu(fw, config(seed, args));
        p.merge(predict_trace(
            &Trace::of_run(&run),
            seed as u32,
            &Options::default(),
        ));
    }
    p
}

/// A configuration that targets the only candidate of `kind` with `strategy`.
fn targeting(
    fw: &Firmware,
    p: &Prediction,
    kind: CandidateKind,
    strategy: StrategyId,
    seed: u64,
    args: &[u32],
) -> Config {
    let candidates: Vec<_> = p.of_kind(kind).collect();
    assert_eq!(candidates.len(), 1, "{p:#?}");
    let bps = candidate_breakpoints(candidates[0], p, strategy, &SiteSpace::Elf(fw), true)
        .expect("breakpoints");
    let mut c = config(seed, args);
    c.strategy = strategy;
    c.trace = TraceLevel::Sync;
    c.breakpoints = jostle_kernel::fixed::Vec::from_slice(&bps).unwrap();
    c
}

fn with_seed(c: &Config, seed: u64) -> Config {
    Config { seed, ..c.clone() }
}

fn count(runs: &[RunOutcome], f: impl Fn(&RunOutcome) -> bool) -> usize {
    runs.iter().filter(|r| f(r)).count()
}

fn panicked(r: &RunOutcome) -> bool {
    r.outcome == Some(jostle_host_tools::Outcome::Verdict(Verdict::Panic))
}

/// The first run among seeds 0..40 that `found` accepts is replayed event for event.
fn replays_when(fw: &Firmware, base: &Config, found: fn(&RunOutcome) -> bool) {
    let seed = (0..40)
        .find(|s| found(&run_qemu(fw, with_seed(base, *s))))
        .expect("a seed that finds it");
    let a = run_qemu(fw, with_seed(base, seed));
    let b = run_qemu(fw, with_seed(base, seed));
    assert!(found(&a));
    assert_eq!(a.events, b.events);
    assert_eq!(a.outcome, b.outcome);
}

/// The first confirming run among seeds 0..40 is replayed event for event.
fn replays(fw: &Firmware, base: &Config) {
    replays_when(fw, base, RunOutcome::confirmed);
}

#[test]
fn racefuzzer_on_racefuzzer_figure2_confirms_the_race_whatever_the_filler() {
    let fw = firmware("rf_fig2");
    for filler in [5, 100] {
        let p = predicted(&fw, &[filler]);
        let base = targeting(&fw, &p, CandidateKind::Race, StrategyId::Race, 0, &[filler]);
        let runs: Vec<RunOutcome> = (0..40)
            .map(|s| run_qemu(&fw, with_seed(&base, s)))
            .collect();
        assert_eq!(count(&runs, RunOutcome::confirmed), 40, "filler {filler}");
        let errors = count(&runs, panicked);
        assert!(
            (8..=32).contains(&errors),
            "filler {filler}: ERROR in {errors}/40"
        );
        // Every failure follows the confirmation, and the race event names both sides.
        assert_eq!(count(&runs, RunOutcome::harmful), errors);
        for r in &runs {
            let race = r.events.iter().find_map(|e| match *e {
                Event::RealRace { t, t2, a, .. } => Some((t, t2, a)),
                _ => None,
            });
            let (t, t2, _) = race.expect("a RealRace event");
            assert_ne!(t, t2);
        }
        if filler == 5 {
            replays(&fw, &base);
            // The same target under Random is measured the same way, and rarely made real.
            let random = Config {
                strategy: StrategyId::Random,
                ..base.clone()
            };
            let hits = (0..40)
                .filter(|s| run_qemu(&fw, with_seed(&random, *s)).confirmed())
                .count();
            assert!(hits < 20, "random confirmed {hits}/40");
        }
    }
}

#[test]
fn racefuzzer_figure1_confirms_z_and_never_x() {
    let fw = firmware("rf_fig1");
    let p = predicted(&fw, &[]);
    let file = "examples/src/bin/rf_fig1.rs";
    let x_line = line_of(file, "X.write(1)");
    for c in p.of_kind(CandidateKind::Race) {
        let on_x = c
            .sites
            .iter()
            .any(|s| p.site_locations[s].contains(&format!(":{x_line}:")));
        let bps =
            candidate_breakpoints(c, &p, StrategyId::Race, &SiteSpace::Elf(&fw), true).unwrap();
        let mut base = config(0, &[]);
        base.strategy = StrategyId::Race;
        base.trace = TraceLevel::Results;
        base.breakpoints = jostle_kernel::fixed::Vec::from_slice(&bps).unwrap();
        let runs: Vec<RunOutcome> = (0..30)
            .map(|s| run_qemu(&fw, with_seed(&base, s)))
            .collect();
        let confirmed = count(&runs, RunOutcome::confirmed);
        if on_x {
            assert_eq!(confirmed, 0, "the pair on x is a false race");
        } else {
            assert_eq!(confirmed, 30);
        }
        for r in &runs {
            let msg = r.panic.as_ref().and_then(|p| p.message.clone());
            assert_ne!(msg.as_deref(), Some("ERROR2"));
        }
    }
}

#[test]
fn atomfuzzer_confirms_figures_1_and_2_and_rejects_figure_3() {
    for (bin, expect) in [("af_fig1", true), ("af_fig2", true), ("af_fig3", false)] {
        let fw = firmware(bin);
        let mut base = config(0, &[5]);
        base.strategy = StrategyId::Atom;
        base.params[0] = jostle_kernel::strategy::Q_ONE;
        base.trace = TraceLevel::Results;
        let runs: Vec<RunOutcome> = (0..30)
            .map(|s| run_qemu(&fw, with_seed(&base, s)))
            .collect();
        let confirmed = count(&runs, RunOutcome::confirmed);
        if expect {
            assert!(confirmed >= 27, "{bin}: {confirmed}/30");
            assert!(count(&runs, panicked) >= 12, "{bin}");
            if bin == "af_fig1" {
                replays(&fw, &base);
            }
        } else {
            assert_eq!(confirmed, 0, "{bin}: the gate lock makes the warning false");
            assert_eq!(count(&runs, panicked), 0);
        }
    }
}

#[test]
fn deadlockfuzzer_closes_the_abba_cycle_and_the_host_port_agrees() {
    let fw = firmware("abba_deadlock");
    let p = predicted(&fw, &[20]);
    let base = targeting(
        &fw,
        &p,
        CandidateKind::Deadlock,
        StrategyId::Deadlock,
        0,
        &[20],
    );
    let runs: Vec<RunOutcome> = (0..30)
        .map(|s| run_qemu(&fw, with_seed(&base, s)))
        .collect();
    assert!(count(&runs, RunOutcome::confirmed) >= 15);
    for r in runs.iter().filter(|r| r.confirmed()) {
        assert_eq!(
            r.outcome,
            Some(jostle_host_tools::Outcome::Verdict(Verdict::Deadlock))
        );
        let edges = r
            .events
            .iter()
            .filter(|e| matches!(e, Event::DeadlockConfirmed { .. }))
            .count();
        assert_eq!(edges, 2);
    }
    replays(&fw, &base);
    // The host port: same configuration with its own site ids (hashes of the locations).
    let host_bps = candidate_breakpoints(
        p.of_kind(CandidateKind::Deadlock).next().unwrap(),
        &p,
        StrategyId::Deadlock,
        &SiteSpace::Host,
        false,
    )
    .unwrap();
    for seed in 0..6 {
        let q = run_qemu(&fw, with_seed(&base, seed));
        let mut hc = with_seed(&base, seed);
        hc.breakpoints = jostle_kernel::fixed::Vec::from_slice(&host_bps).unwrap();
        let h = run_host("abba_deadlock", hc);
        assert_eq!(q.decisions(), h.decisions(), "seed {seed}");
        assert_eq!(q.confirmed(), h.confirmed());
        assert_eq!(q.outcome, h.outcome);
    }
}

#[test]
fn host_port_takes_racefuzzers_decisions_too() {
    let fw = firmware("rf_fig2");
    let p = predicted(&fw, &[5]);
    let c = p.of_kind(CandidateKind::Race).next().unwrap();
    let host_bps = candidate_breakpoints(c, &p, StrategyId::Race, &SiteSpace::Host, false).unwrap();
    let base = targeting(&fw, &p, CandidateKind::Race, StrategyId::Race, 0, &[5]);
    for seed in 0..8 {
        let q = run_qemu(&fw, with_seed(&base, seed));
        let mut hc = with_seed(&base, seed);
        hc.breakpoints = jostle_kernel::fixed::Vec::from_slice(&host_bps).unwrap();
        let h = run_host("rf_fig2", hc);
        assert_eq!(q.decisions(), h.decisions(), "seed {seed}");
        assert!(q.confirmed() && h.confirmed());
        assert_eq!(q.outcome, h.outcome);
    }
}

#[test]
fn pct_replays_and_nothing_is_reported_on_correct_firmware() {
    let fw = firmware("rf_fig2");
    let p = predicted(&fw, &[5]);
    let mut base = targeting(&fw, &p, CandidateKind::Race, StrategyId::Pct, 0, &[5]);
    // Depth 2 over the run's 19 steps: PCT's failures (ERROR) replay too.
    base.params = [2, 20, 0, 0];
    replays_when(&fw, &base, panicked);

    let fw = firmware("correct_counter");
    assert!(predicted(&fw, &[]).candidates.is_empty());
    for (strategy, q) in [
        (StrategyId::Random, 0),
        (StrategyId::Pct, 0),
        (StrategyId::Atom, jostle_kernel::strategy::Q_ONE),
    ] {
        let mut c = config(0, &[]);
        c.strategy = strategy;
        c.params[0] = q;
        c.trace = TraceLevel::Results;
        for seed in 0..10 {
            let r = run_qemu(&fw, with_seed(&c, seed));
            assert!(!r.confirmed(), "{strategy:?} seed {seed}");
            assert_eq!(
                r.outcome,
                Some(jostle_host_tools::Outcome::Verdict(Verdict::Pass))
            );
        }
    }
}

#[test]
fn drfinder_reverses_the_hand_off_so_the_hidden_race_happens() {
    let fw = firmware("hidden_order");
    let p = predicted(&fw, &[20]);
    assert!(!p.relations.is_empty(), "frames give may-trigger relations");
    let mut base = targeting(&fw, &p, CandidateKind::Race, StrategyId::DrFinder, 0, &[20]);
    let (relations, kept) = jostle_host_tools::engine::targeting::relation_breakpoints(
        &p.relations,
        base.breakpoints.len(),
    );
    assert_eq!(kept, p.relations.len());
    base.breakpoints.extend(relations);
    base.trace = TraceLevel::Full;
    let happened = |c: &Config| {
        (0..20)
            .filter(|s| run_qemu(&fw, with_seed(c, *s)).happened_race())
            .count()
    };
    let drfinder = happened(&base);
    let random = happened(&Config {
        strategy: StrategyId::Random,
        ..base.clone()
    });
    assert!(drfinder >= 10, "DrFinder exposed the race in {drfinder}/20");
    assert!(
        random < drfinder,
        "Random {random}/20, DrFinder {drfinder}/20"
    );
    replays(&fw, &base);
}

#[test]
fn confirm_and_run_runs_print_the_failures_they_saw() {
    let elf = elf("order_violation");
    let fw = elf.to_str().unwrap();
    let jostle = |args: &[&str]| {
        let out = std::process::Command::new(jostle())
            .args(args)
            .output()
            .expect("jostle runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let site = format!(
        "at examples/src/bin/order_violation.rs:{}:",
        line_of("examples/src/bin/order_violation.rs", "assert_eq!(*d, 3")
    );
    for text in [
        jostle(&["run", fw, "--runs", "12"]),
        jostle(&["confirm", fw, "--runs", "12"]),
    ] {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("failure panic "))
            .unwrap_or_else(|| panic!("no failure line: {text}"));
        assert!(
            line.contains("started before configuration and calibration"),
            "{line}"
        );
        assert!(line.contains(&site), "{line}");
        assert!(line.contains("(first seed "), "{line}");
    }
}
