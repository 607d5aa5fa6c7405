//! Parallel runs: J workers take jobs in order and put each result in its job's place, so
//! what a campaign does with the results never depends on which worker finished first.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Runs `work` on every job with `workers` threads. Results come back in job order; a job
/// not started because `stop` was set is `None`. `done` is called after each job (from
/// the worker that ran it).
pub fn run_all<J: Sync, R: Send>(
    jobs: &[J],
    workers: usize,
    stop: &AtomicBool,
    work: impl Fn(&J) -> R + Sync,
    done: impl Fn(&R) + Sync,
) -> Vec<Option<R>> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, jobs.len().max(1)) {
            scope.spawn(|| {
                loop {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = jobs.get(i) else { break };
                    let r = work(job);
                    done(&r);
                    *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_in_job_order_whatever_the_workers() {
        let jobs: Vec<u64> = (0..50).collect();
        let stop = AtomicBool::new(false);
        for workers in [1, 2, 7] {
            let out = run_all(
                &jobs,
                workers,
                &stop,
                |j| {
                    // Later jobs finish first on several workers.
                    std::thread::sleep(std::time::Duration::from_micros(50 - j));
                    j * 2
                },
                |_| {},
            );
            let out: Vec<u64> = out.into_iter().map(Option::unwrap).collect();
            assert_eq!(out, jobs.iter().map(|j| j * 2).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_stop_leaves_the_rest_undone() {
        let jobs: Vec<u32> = (0..20).collect();
        let stop = AtomicBool::new(false);
        let out = run_all(
            &jobs,
            1,
            &stop,
            |j| {
                if *j == 4 {
                    stop.store(true, Ordering::SeqCst);
                }
                *j
            },
            |_| {},
        );
        assert!(out[..5].iter().all(Option::is_some));
        assert!(out[5..].iter().all(Option::is_none));
    }
}
