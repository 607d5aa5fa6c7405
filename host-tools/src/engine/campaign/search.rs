//! Search: after the candidates, the rest of a budget (`--budget 10000`, `--budget 10m`)
//! goes to undirected runs, so that a bug no analysis predicts (an order violation, a deep
//! interleaving) is still found and reported as a finding with its replay.
//!
//! The runs come in blocks of [`BATCH`] consecutive seeds, each block under the next strategy
//! of the portfolio (`Settings::portfolio`, from `--search`), results-only traces. A block's strategy and seeds are functions
//! of its number and the base seed, never of timing, and shard `I` of `N` takes blocks
//! `I, I + N, …`: the same runs whatever the number of workers, the same union whatever the
//! number of shards. A campaign without a budget stops after its candidates, as before.

use super::jobs::{BATCH, Job, Work};
use super::plan::{Plan, Step, WithSearch};
use super::{Budget, Campaign, Status};
use crate::error::JostleError;
use jostle_kernel::config::StrategyId;
use jostle_kernel::{Config, TraceLevel};
use std::sync::atomic::Ordering;

/// The strategies a search may use (they need no target), by name, with PCT's depth: `pct`
/// is PCT-3 (Burckhardt et al., ASPLOS 2010; the SURW paper's PCT baseline). `surw` takes
/// its estimates from Phase I's first run (its profiling run, see `engine::surw`), and each
/// of its runs draws its location from its seed. The campaign's `--search` lists them
/// (default `surw,pos,pct,random`: the strongest first, as each alone did on the cct table,
/// SURW solving 32 of its subjects in every trial and POS 28), and blocks
/// take them in turn.
pub fn search_strategy(name: &str) -> Option<(StrategyId, u32)> {
    match name {
        "random" => Some((StrategyId::Random, 0)),
        "pct" => Some((StrategyId::Pct, 3)),
        "pos" => Some((StrategyId::Pos, 0)),
        "surw" => Some((StrategyId::Surw, 0)),
        _ => None,
    }
}

/// Search seeds start this far from the base seed, clear of Phase I's (`seed + i`).
const SEED_OFFSET: u64 = 1 << 32;

/// Blocks per worker in one wave of a time budget (the deadline is checked per run).
const BLOCKS_PER_WORKER: u64 = 4;

impl Campaign<'_> {
    /// Whether the campaign searches at all: under a budget, with a portfolio.
    pub(super) fn searches(&self) -> bool {
        self.settings.budget != Budget::Unlimited && !self.settings.portfolio.is_empty()
    }

    /// Spends the rest of the budget on search runs (nothing without a budget).
    pub(super) fn search(
        &mut self,
        progress: &(dyn Fn(&Status) + Sync),
    ) -> Result<(), JostleError> {
        if !self.searches() {
            return Ok(());
        }
        self.set_phase("search");
        while !self.halted() {
            let before = self.runs_done.load(Ordering::SeqCst);
            let left = match self.settings.budget {
                Budget::Runs(n) => n.saturating_sub(before).max(1),
                _ => BLOCKS_PER_WORKER * self.settings.jobs as u64 * BATCH,
            };
            self.execute(&mut SearchRuns { left }, progress)?;
            if self.runs_done.load(Ordering::SeqCst) == before {
                // Nothing ran (the wave was cut short): never spin.
                break;
            }
        }
        Ok(())
    }

    /// `plan` with as many search runs after each job as it has runs (when the campaign
    /// searches). Phase II's later runs (every candidate's first comes before) get this: a
    /// bug that no candidate's strategy makes happen, but search does, is not left waiting
    /// behind every harmless candidate's quota (cct's StateWorkStealQueue: SURW alone finds
    /// it in 4.5 runs on average; the campaign, searching only after the quotas, in 110.6).
    pub(super) fn with_search<P: Plan>(&self, plan: P) -> WithSearch<P> {
        WithSearch {
            plan,
            owed: 0,
            search: self.searches(),
        }
    }

    /// This shard's next search job, of at most `most` runs, never crossing a block: the
    /// runs go on from where the last job stopped, so the runs and their seeds do not depend
    /// on how they were asked for.
    pub(super) fn next_search_job(&mut self, most: u64) -> Job {
        let (k, offset) = (self.search_planned / BATCH, self.search_planned % BATCH);
        let take = most.min(BATCH - offset);
        let mut job = self.search_job(k);
        job.index += offset;
        job.config.seed = job.config.seed.wrapping_add(offset);
        job.chain = take as u32;
        self.search_planned += take;
        job
    }

    /// Search block `k` of this shard.
    fn search_job(&self, k: u64) -> Job {
        let (index, count) = self.settings.shard;
        let block = k * u64::from(count.max(1)) + u64::from(index);
        let portfolio = &self.settings.portfolio;
        let (strategy, depth) = portfolio[(k % portfolio.len() as u64) as usize];
        let params = match strategy {
            // PCT's step bound: the longest Phase I run (its guarantee needs k at least the
            // run's length).
            StrategyId::Pct => [depth, self.phase1_max_steps.max(1), 0, 0],
            _ => [0; 4],
        };
        Job {
            work: Work::Search,
            index: block * BATCH,
            config: Config {
                seed: self
                    .settings
                    .seed
                    .wrapping_add(SEED_OFFSET)
                    .wrapping_add(block * BATCH),
                strategy,
                params,
                trace: TraceLevel::Results,
                ..self.settings.base.clone()
            },
            chain: BATCH as u32,
            tally: true,
            place: block,
        }
    }
}

/// `left` search runs, from where the last search job stopped.
struct SearchRuns {
    left: u64,
}

impl Plan for SearchRuns {
    fn runs(&self) -> u64 {
        self.left
    }

    fn next(&mut self, campaign: &mut Campaign<'_>) -> Step {
        if self.left == 0 {
            return Step::Done;
        }
        let job = campaign.next_search_job(self.left);
        self.left -= u64::from(job.chain);
        Step::Job(Box::new(job))
    }
}
