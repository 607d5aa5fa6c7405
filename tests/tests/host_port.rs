//! The host port makes many runs in one process: each run must be the one a fresh process
//! would make (same lines, same verdict), whatever the runs before it did — panicked,
//! deadlocked, changed shared variables, locks' data and atomics, fired interrupts.

use crate::common;

use common::*;
use jostle_host_tools::transport::hostport::{self, runs_of};
use jostle_host_tools::transport::{Limits, Runner};
use jostle_kernel::{Config, TraceLevel};
use std::time::Duration;

fn config(seed: u64, runs: u32, args: &[u32]) -> Config {
    let mut c = Config {
        seed,
        runs,
        trace: TraceLevel::Full,
        ..Config::default()
    };
    c.args.extend_from_slice(args).unwrap();
    c
}

#[test]
fn every_run_of_a_process_is_the_run_a_fresh_process_makes() {
    const N: u32 = 16;
    for (bin, args) in [
        // A counter in a shared variable, asserted at the end: a value left from the run
        // before would fail the next run.
        ("correct_counter", &[3][..]),
        // An account in a lock's data.
        ("af_fig2", &[2][..]),
        // Panics in most runs (the process goes on after each).
        ("rf_fig1", &[][..]),
        // Deadlocks in some runs (the tasks are abandoned where they stand).
        ("abba_deadlock", &[1][..]),
        ("atomic_check_then_act", &[][..]),
        ("irq_counter", &[][..]),
        ("irq_ringbuf", &[][..]),
    ] {
        let exe = host_exe(bin);
        let timeout = Duration::from_secs(20);
        let batch = hostport::run(&exe, &config(100, N, args), timeout).expect("host runs");
        let together = runs_of(&batch.stdout);
        assert_eq!(together.len(), N as usize, "{bin}: {}", batch.stdout);
        let mut verdicts = std::collections::BTreeSet::new();
        for k in 0..N {
            let seed = 100 + u64::from(k);
            let alone = hostport::run(&exe, &config(seed, 1, args), timeout).expect("host runs");
            let alone_runs = runs_of(&alone.stdout);
            assert_eq!(alone_runs.len(), 1);
            assert_eq!(
                together[k as usize], alone_runs[0],
                "{bin}: seed {seed}, run {k} of one process, differs from a process of its own"
            );
            verdicts.insert(alone_runs[0].lines().last().unwrap().to_string());
        }
        // The process ends as its last run does.
        let last = hostport::run(&exe, &config(100 + u64::from(N - 1), 1, args), timeout)
            .expect("host runs");
        assert_eq!(batch.exit_code, last.exit_code, "{bin}");
        if bin == "rf_fig1" || bin == "abba_deadlock" {
            assert!(
                verdicts.len() > 1,
                "{bin}: every run ended alike: {verdicts:?}"
            );
        }
    }
}

#[test]
fn the_host_transport_splits_a_process_into_runs_with_their_own_seeds() {
    let runner = Runner::with_limits(
        host_exe("rf_fig1"),
        true,
        Limits::quiet(Duration::from_secs(20)),
    )
    .unwrap();
    let outcomes = runner.run_batch(&config(7, 1, &[]), 40).unwrap();
    assert_eq!(outcomes.len(), 40);
    for (k, o) in outcomes.iter().enumerate() {
        assert_eq!(o.config.seed, 7 + k as u64);
        assert_eq!(o.config.runs, 1);
        assert!(o.error.is_none(), "seed {}: {:?}", o.config.seed, o.error);
        // Each run's outcome is the one of a process of its own.
        let alone = run_host("rf_fig1", o.config.clone());
        assert_eq!(o.outcome, alone.outcome, "seed {}", o.config.seed);
        // All but the run start, whose index in the process differs.
        assert_eq!(o.events[1..], alone.events[1..], "seed {}", o.config.seed);
        assert_eq!(o.panic, alone.panic, "seed {}", o.config.seed);
    }
    assert!(outcomes.iter().any(|o| o.panic.is_some()));
    assert!(outcomes.iter().any(|o| o.panic.is_none()));
}

#[test]
fn a_task_that_overflows_its_host_stack_ends_its_run_with_the_stack_overflow_verdict() {
    // Deep enough for the host's 1 MiB task stacks.
    let exe = host_test_exe("stack_overflow");
    let runner = Runner::with_limits(exe, true, Limits::quiet(Duration::from_secs(20))).unwrap();
    // Two seeds: the first run's overflow ends its process; the second runs in a new one.
    let outcomes = runner.run_batch(&config(0, 1, &[1_000_000]), 2).unwrap();
    assert_eq!(outcomes.len(), 2);
    for o in &outcomes {
        assert!(o.error.is_none(), "seed {}: {:?}", o.config.seed, o.error);
        assert_eq!(
            o.outcome,
            Some(jostle_host_tools::trace::run::Outcome::Verdict(
                jostle_kernel::Verdict::StackOverflow
            )),
            "seed {}",
            o.config.seed
        );
        assert_eq!(o.exit_code, Some(14));
        assert!(
            o.steps > 1000,
            "the steps before the overflow are kept: {}",
            o.steps
        );
        assert!(o.events.iter().any(|e| matches!(
            e,
            jostle_kernel::Event::StackOverflow {
                t: 1,
                size: 1_048_576,
                ..
            }
        )));
    }
    // A shallow recursion passes.
    let shallow = runner.run(config(0, 1, &[100]), None).unwrap();
    assert_eq!(
        shallow.outcome,
        Some(jostle_host_tools::trace::run::Outcome::Verdict(
            jostle_kernel::Verdict::Pass
        ))
    );
}

#[test]
fn a_firmware_whose_statics_outlive_a_run_gets_one_process_per_run() {
    use jostle_host_tools::transport::hostport::HostTransport;
    let limits = Limits::quiet(Duration::from_secs(20));
    // Jostle's own shared state is reset between runs of a process: they may share one.
    let shares = HostTransport::new(host_exe("correct_counter"), limits);
    assert!(shares.runs_share_a_process(&config(0, 1, &[3])).unwrap());
    // A critical_section::Mutex<RefCell<_>> keeps its balance from run to run: a run after
    // others is not the run a fresh process makes, and the probe says so.
    let keeps = HostTransport::new(host_exe("cs_refcell"), limits);
    assert!(!keeps.runs_share_a_process(&config(0, 1, &[])).unwrap());
    // So its runs go one per process and each is the run a fresh process makes.
    let runner = Runner::with_limits(host_exe("cs_refcell"), true, limits).unwrap();
    let batch = runner.run_batch(&config(0, 1, &[]), 8).unwrap();
    for (k, run) in batch.iter().enumerate() {
        let alone = runner.run(config(k as u64, 1, &[]), None).unwrap();
        assert_eq!(run.decisions(), alone.decisions(), "seed {k}");
        assert_eq!(run.outcome, alone.outcome, "seed {k}");
    }
    assert!(
        batch.iter().any(|r| r.panic.is_some()),
        "some seed of the first 8 overdraws"
    );
}

#[test]
fn per_run_cells_start_every_run_of_a_process_afresh() {
    use jostle_host_tools::transport::hostport::HostTransport;
    let exe = host_test_exe("per_run");
    let timeout = Duration::from_secs(20);
    // Each run draws two of the pool's four objects: a pool that kept the last run's
    // allocations would panic in the second run and exhaust in the third.
    let batch = hostport::run(&exe, &config(0, 8, &[]), timeout).expect("host runs");
    let runs = runs_of(&batch.stdout);
    assert_eq!(runs.len(), 8, "{}", batch.stdout);
    assert_eq!(batch.exit_code, Some(0), "{}", batch.stdout);
    assert!(!batch.stdout.contains("panic"), "{}", batch.stdout);
    // Nor do they make the probe fall back to one process per run.
    let transport = HostTransport::new(exe, Limits::quiet(timeout));
    assert!(transport.runs_share_a_process(&config(0, 1, &[])).unwrap());
}
