//! Phase I: Random runs at full trace, in batches of consecutive seeds. Every shard runs
//! all of it, so the shards predict the same candidates. It comes in two parts: run 0
//! alone, whose trace gives the first candidates at once, and the rest after the first
//! tier of round 1 (see `rounds`).

use super::jobs::{Job, Work, batch_at};
use super::plan::{Plan, Step};
use super::{Campaign, Status};
use crate::error::JostleError;
use jostle_kernel::config::StrategyId;
use jostle_kernel::{Config, TraceLevel};
use std::time::Instant;

impl Campaign<'_> {
    /// Runs Phase I's runs `runs` (they feed prediction as they are taken).
    pub(super) fn phase1(
        &mut self,
        runs: std::ops::Range<u64>,
        progress: &(dyn Fn(&Status) + Sync),
    ) -> Result<(), JostleError> {
        if runs.is_empty() {
            return Ok(());
        }
        self.set_phase("phase I");
        // Every shard runs all of Phase I: the shards then predict the same candidates.
        let mut plan = PhaseOne {
            runs,
            config: Config {
                strategy: StrategyId::Random,
                trace: TraceLevel::Full,
                ..self.settings.base.clone()
            },
            seed: self.settings.seed,
        };
        let phase1 = Instant::now();
        self.execute(&mut plan, progress)?;
        self.phase1_seconds += phase1.elapsed().as_secs_f64();
        Ok(())
    }
}

/// Phase I's runs `runs`: seeds `seed + i`, in batches.
struct PhaseOne {
    runs: std::ops::Range<u64>,
    config: Config,
    seed: u64,
}

impl Plan for PhaseOne {
    fn runs(&self) -> u64 {
        self.runs.end - self.runs.start
    }

    fn next(&mut self, _: &mut Campaign<'_>) -> Step {
        if self.runs.is_empty() {
            return Step::Done;
        }
        let (i, n) = batch_at(self.runs.start, self.runs.end);
        self.runs.start += u64::from(n);
        Step::Job(Box::new(Job {
            work: Work::PhaseOne,
            index: i,
            config: Config {
                seed: self.seed.wrapping_add(i),
                ..self.config.clone()
            },
            chain: n,
            tally: true,
            place: 0,
        }))
    }
}
