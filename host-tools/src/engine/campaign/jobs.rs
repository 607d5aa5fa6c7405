//! Bookkeeping: the work. Runs are grouped into jobs (consecutive seeds of one boot, or a
//! DrFinder chain), run on J workers, and their results taken in job order, so the report
//! never depends on which worker finished first. A shard takes its own block of each
//! candidate's run indices.

use super::plan::{Plan, Step};
use super::{Campaign, Status};
use crate::engine::confirm::with_relations_of;
use crate::engine::pool::run_all;
use crate::engine::targeting::strategy_name;
use crate::error::JostleError;
use crate::trace::run::RunOutcome;
use jostle_kernel::Config;
use jostle_kernel::config::StrategyId;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Runs per boot (consecutive seeds; the firmware resets itself between them). Fixed,
/// so that which runs share a boot never depends on the number of workers.
pub const BATCH: u64 = crate::transport::RUNS_PER_BOOT as u64;

/// The report is written at least this often while runs finish.
pub(super) const WRITE_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// One unit of work for a worker: consecutive runs with seeds `config.seed + k`, several
/// per boot; or, for DrFinder, a chain where each run's relations configure the next
/// (drfinder-fse15 Algorithm 2, line 21).
pub(super) struct Job {
    /// What the runs are for.
    pub(super) work: Work,
    /// Index of the first run among this bug's runs of this strategy.
    pub(super) index: u64,
    /// The first run's configuration.
    pub(super) config: Config,
    /// Runs.
    pub(super) chain: u32,
    /// Whether this shard counts the runs (a shard also makes runs it does not count: Phase I
    /// and each candidate's first, full-trace run, so that every shard predicts the same).
    pub(super) tally: bool,
    /// The candidate's place in its wave's queue (orders first runs across shards).
    pub(super) place: u64,
}

/// What a job's runs are for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Work {
    /// Phase I: Random at full trace, feeding prediction.
    PhaseOne,
    /// Undirected search after the candidates (a portfolio of strategies).
    Search,
    /// Phase II of the bug with this handle (`Campaign::bug_handle`).
    Candidate(usize),
}

/// Shard `index` of `count`'s run indices among `0..n`: the `index`-th of `count`
/// contiguous blocks of `ceil(n / count)`.
pub(super) fn shard_range(n: u32, (index, count): (u32, u32)) -> std::ops::Range<u64> {
    let block = u64::from(n).div_ceil(u64::from(count.max(1))).max(1);
    let start = (u64::from(index) * block).min(u64::from(n));
    start..(start + block).min(u64::from(n))
}

/// The first job of consecutive run indices `from..to`: at most [`BATCH`] runs, never
/// crossing a multiple of it (so shards, which slice by blocks of [`BATCH`], group the same
/// way): `(from, runs)`.
pub(super) fn batch_at(from: u64, to: u64) -> (u64, u32) {
    let n = (to - from).min(BATCH - from % BATCH);
    (from, n as u32)
}

impl Campaign<'_> {
    /// This shard's run indices among `0..n`: shard `I` of `N` takes the `I`-th of `N`
    /// contiguous blocks of `ceil(n / N)` indices, so every shard has work.
    pub(super) fn slice(&self, n: u32) -> std::ops::Range<u64> {
        shard_range(n, self.settings.shard)
    }

    /// Runs `plan`'s jobs on the workers within the budget and takes their results in order,
    /// a chunk of jobs at a time (only a chunk's jobs are made at once): the report is
    /// written again whenever [`WRITE_EVERY`] has passed, so a campaign killed outright still
    /// leaves its finished runs.
    pub(super) fn execute(
        &mut self,
        plan: &mut dyn Plan,
        progress: &(dyn Fn(&Status) + Sync),
    ) -> Result<(), JostleError> {
        if self.halted() {
            return Ok(());
        }
        self.wave += 1;
        let planned = self.within_budget(plan.runs());
        self.planned.fetch_add(planned, Ordering::SeqCst);
        // Chunks of a few jobs per worker: little idle time at a chunk's end, and results
        // taken (and written) while the wave goes on.
        let chunk = (4 * self.settings.jobs).max(8);
        loop {
            let mut part = Vec::new();
            let mut done = false;
            while part.len() < chunk {
                match plan.next(self) {
                    Step::Job(job) => part.push(*job),
                    Step::Wait => break,
                    Step::Done => {
                        done = true;
                        break;
                    }
                }
            }
            self.fit_budget(&mut part);
            // Nothing left, or the budget spent (a plan waits only on jobs given before,
            // all taken by now).
            if part.is_empty() {
                break;
            }
            let complete = self.execute_chunk(&part, progress)?;
            self.sync_bugs();
            if done || !complete || self.failure_hit.load(Ordering::SeqCst) {
                break;
            }
            if self.last_write.elapsed() >= WRITE_EVERY {
                self.write()?;
            }
        }
        self.sync_bugs();
        self.write()?;
        Ok(())
    }

    /// Runs `jobs` and counts their results in job order; `false` when a job was cut short
    /// by the stop or the deadline (the rest of the wave is dropped, so the report is a
    /// prefix of the plan).
    fn execute_chunk(
        &mut self,
        jobs: &[Job],
        progress: &(dyn Fn(&Status) + Sync),
    ) -> Result<bool, JostleError> {
        let deadline = self.deadline();
        let stop = &*self.stop;
        let budget_hit = &self.budget_hit;
        let this = &*self;
        let results = run_all(
            jobs,
            self.settings.jobs,
            stop,
            |job| {
                if stop.load(Ordering::SeqCst) {
                    return Ok(None);
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    budget_hit.store(true, Ordering::SeqCst);
                    return Ok(None);
                }
                if job.config.strategy == StrategyId::DrFinder {
                    let outcomes = this.run_chain(job, deadline, progress)?;
                    return Ok((!outcomes.is_empty()).then_some(outcomes));
                }
                let outcomes = {
                    // A boot that dies (QEMU killed, a crash) is retried once in a new boot.
                    match this.run_batch(job) {
                        Err(e) if e.is_transient() && !stop.load(Ordering::SeqCst) => {
                            eprintln!("jostle: {e}; retrying these runs once in a new boot");
                            this.run_batch(job)?
                        }
                        r => r?,
                    }
                };
                this.runs_done
                    .fetch_add(outcomes.len() as u64, Ordering::SeqCst);
                progress(&this.status());
                Ok(Some(outcomes))
            },
            |_| {},
        );
        for (job, result) in jobs.iter().zip(results) {
            let outcomes = match result {
                None | Some(Ok(None)) => return Ok(false),
                Some(Err(e)) => return Err(e),
                Some(Ok(Some(o))) => o,
            };
            if outcomes.len() < job.chain as usize {
                return Ok(false);
            }
            for (k, outcome) in outcomes.iter().enumerate() {
                self.take(job, job.index + k as u64, outcome);
            }
        }
        Ok(true)
    }

    /// One boot's consecutive seeds (under SURW, each seed with its own choice of location,
    /// in as many boots as the choices change); a broken stream or the task limit is an
    /// error.
    fn run_batch(&self, job: &Job) -> Result<Vec<RunOutcome>, JostleError> {
        let mut outcomes = crate::engine::surw::run_batch(
            self.transport,
            &job.config,
            job.chain,
            self.surw_profile.as_ref(),
        )
        .map_err(|e| with_context(e, &job.config))?;
        outcomes.iter_mut().try_for_each(checked)?;
        Ok(outcomes)
    }

    /// A DrFinder chain: each run's relations configure the next (cut short, possibly
    /// empty, by the stop or the deadline).
    fn run_chain(
        &self,
        job: &Job,
        deadline: Option<Instant>,
        progress: &(dyn Fn(&Status) + Sync),
    ) -> Result<Vec<RunOutcome>, JostleError> {
        let mut outcomes = Vec::new();
        let mut config = job.config.clone();
        // Each run's relations go into the chain's first configuration.
        let base = match job.work {
            Work::Candidate(bug) => self.chains.get(&bug).map(|c| &c.base),
            _ => None,
        }
        .unwrap_or(&job.config);
        for k in 0..job.chain {
            if self.stop.load(Ordering::SeqCst) {
                break;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                self.budget_hit.store(true, Ordering::SeqCst);
                break;
            }
            config.seed = job.config.seed.wrapping_add(u64::from(k));
            let mut outcome = self
                .transport
                .run(config.clone(), None)
                .map_err(|e| with_context(e, &config))?;
            checked(&mut outcome)?;
            self.runs_done.fetch_add(1, Ordering::SeqCst);
            progress(&self.status());
            config = with_relations_of(&outcome, base);
            outcomes.push(outcome);
        }
        Ok(outcomes)
    }
}

/// A run's stream problem (with its seed), or a configuration verdict, as an error: never
/// a finding, and never a run that counts as tested. The task limit (the firmware must be
/// built with a larger table) and a refused configuration block (the firmware was built
/// with another version of the kernel) say nothing about the firmware's concurrency.
fn checked(outcome: &mut RunOutcome) -> Result<(), JostleError> {
    use jostle_kernel::Event;
    if let Some(e) = outcome.error.take() {
        return Err(with_context(e, &outcome.config));
    }
    for e in &outcome.events {
        match *e {
            Event::TaskLimit { max, .. } => return Err(JostleError::TaskLimit(max)),
            Event::ConfigRejected { reason } => {
                let why = jostle_kernel::config::Rejection::from_u8(reason)
                    .map_or("unknown reason", |r| r.message());
                return Err(JostleError::ConfigRejected(format!(
                    "the firmware refused the run's block ({why}): rebuild it with this version of jostle"
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

fn with_context(e: JostleError, config: &Config) -> JostleError {
    match e {
        JostleError::StreamTruncated(m) => JostleError::StreamTruncated(format!(
            "run with seed {} ({}): {m}",
            config.seed,
            strategy_name(config.strategy)
        )),
        JostleError::StreamCorrupt(m) => JostleError::StreamCorrupt(format!(
            "run with seed {} ({}): {m}",
            config.seed,
            strategy_name(config.strategy)
        )),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_verdicts_stop_a_campaign_instead_of_counting_as_runs() {
        use crate::trace::run::{Outcome, Port};
        use jostle_kernel::{Config, Event, Verdict};
        let run = |events: Vec<Event>, verdict| RunOutcome {
            port: Port::Host,
            config: Config::default(),
            events,
            sites: Default::default(),
            locations: Default::default(),
            logs: Vec::new(),
            outcome: Some(Outcome::Verdict(verdict)),
            steps: 0,
            panic: None,
            exit_code: Some(i32::from(verdict.exit_code())),
            error: None,
            frames: 0,
            task_names: Default::default(),
            wait_sites: Default::default(),
            wake_sites: Default::default(),
        };
        let mut rejected = run(
            vec![Event::ConfigRejected { reason: 1 }],
            Verdict::ConfigRejected,
        );
        let e = checked(&mut rejected).unwrap_err();
        assert_eq!(e.exit_code(), 15, "{e}");
        assert!(e.to_string().contains("rebuild it"), "{e}");
        let mut full = run(vec![Event::TaskLimit { t: 0, max: 8 }], Verdict::TaskLimit);
        assert_eq!(checked(&mut full).unwrap_err().exit_code(), 19);
        let mut panic = run(vec![Event::TaskPanic { t: 1, s: 3 }], Verdict::Panic);
        assert!(
            checked(&mut panic).is_ok(),
            "a failure is a finding, not an error"
        );
    }

    #[test]
    fn the_default_livelock_bound_outlasts_every_run_seen_within_the_step_limit() {
        use super::super::livelock_bound_for;
        assert_eq!(livelock_bound_for(100, 100_000), 1000);
        assert_eq!(livelock_bound_for(2014, 100_000), 4028);
        assert_eq!(livelock_bound_for(90_000, 100_000), 50_000);
        assert_eq!(livelock_bound_for(u32::MAX, 1), 1);
    }

    #[test]
    fn shards_split_every_candidates_runs_and_each_gets_some() {
        for (n, count) in [(50, 4), (50, 2), (7, 3), (160, 3), (5, 8)] {
            let mut all: Vec<u64> = Vec::new();
            for index in 0..count {
                let mine: Vec<u64> = shard_range(n, (index, count)).collect();
                // Work for every shard while there are as many runs as shards.
                if index < n.min(count) && n >= count {
                    assert!(!mine.is_empty(), "{n} runs, shard {index}/{count}");
                }
                all.extend(mine);
            }
            assert_eq!(all, (0..u64::from(n)).collect::<Vec<_>>(), "{n}/{count}");
        }
    }
}
