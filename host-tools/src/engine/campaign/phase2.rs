//! Phase II per candidate: its breakpoints, the strategy of its kind (or DrFinder as the
//! fallback for a race), seeds derived from the base seed and the candidate id; run 0 at
//! full trace (it feeds prediction, in every shard), the rest results-only in batches, a
//! DrFinder chain whole. A round takes every candidate's first run, then every candidate's
//! next three, then twelve, then the rest (tiers), so one real bug is not found only after
//! the whole quota of each harmless candidate queued before it.

use super::Campaign;
use super::jobs::{Job, Work, batches};
use crate::engine::targeting::{candidate_breakpoints, strategy_name};
use crate::error::JostleError;
use jostle_checker::{Candidate, CandidateKind};
use jostle_kernel::config::StrategyId;
use jostle_kernel::{Config, TraceLevel};
use std::collections::BTreeSet;

/// A round's Phase II jobs.
pub(super) struct Phase2Jobs {
    /// Every candidate's first run (and DrFinder chains).
    pub(super) first: Vec<Job>,
    /// The rest of each candidate's runs, tier by tier.
    pub(super) later: Vec<Job>,
}

impl Campaign<'_> {
    /// The jobs of `queue`'s candidates: every candidate's first run (and DrFinder chains),
    /// then the later runs, tier by tier. A candidate that cannot be targeted is marked
    /// skipped in the report; the others still run.
    pub(super) fn phase2_jobs(
        &mut self,
        queue: &[(Candidate, StrategyId)],
    ) -> Result<Phase2Jobs, JostleError> {
        let space = self.transport.space();
        let mut first_runs = Vec::new();
        let mut later_runs: [Vec<Job>; TIERS - 1] = Default::default();
        for (place, (candidate, strategy)) in queue.iter().enumerate() {
            let place = place as u64;
            let bug = self.bug_handle(candidate);
            let breakpoints =
                candidate_breakpoints(candidate, &self.prediction, *strategy, &space, true)
                    .and_then(|mut bps| {
                        if *strategy == StrategyId::DrFinder {
                            let (more, _) = crate::engine::targeting::relation_breakpoints(
                                &self.prediction.relations,
                                bps.len(),
                            );
                            bps.extend(more);
                        }
                        jostle_kernel::fixed::Vec::from_slice(&bps).map_err(|()| {
                            JostleError::Usage(format!(
                                "{} breakpoints, more than a configuration block holds",
                                bps.len()
                            ))
                        })
                    });
            let breakpoints = match breakpoints {
                Ok(bps) => bps,
                Err(e) => {
                    // This candidate cannot be targeted; the others still are.
                    let at = self.bug_at(bug);
                    self.report.bugs[at].skipped =
                        Some(format!("{}: {e}", strategy_name(*strategy)));
                    continue;
                }
            };
            let config = Config {
                strategy: *strategy,
                breakpoints,
                ..self.settings.base.clone()
            };
            let first = candidate_seed(self.settings.seed, &candidate.id, *strategy);
            let unseen = unseen_side_first(candidate);
            let indices: Vec<u64> = self.slice(self.settings.runs_per_candidate).collect();
            let owns_first = indices.first() == Some(&0);
            if *strategy == StrategyId::DrFinder {
                // One chain, each run's relations driving the next (full trace: DrFinder's
                // confirmation is the happens-before detector's). A chain cannot be split,
                // so the shard that owns run 0 makes all of it.
                if owns_first {
                    first_runs.push(Job {
                        work: Work::Candidate(bug),
                        index: 0,
                        config: Config {
                            seed: first,
                            trace: TraceLevel::Full,
                            ..config
                        },
                        chain: self.settings.runs_per_candidate,
                        tally: true,
                        place,
                    });
                }
                continue;
            }
            // Run 0 feeds prediction (full trace), in every shard so that all predict the
            // same; the others need only the results.
            if self.settings.runs_per_candidate > 0 {
                first_runs.push(Job {
                    work: Work::Candidate(bug),
                    index: 0,
                    config: Config {
                        seed: first,
                        trace: TraceLevel::Full,
                        params: params_for(&config, 0, unseen),
                        ..config.clone()
                    },
                    chain: 1,
                    tally: owns_first,
                    place,
                });
            }
            for (tier, jobs) in later_runs.iter_mut().enumerate() {
                let in_tier: Vec<u64> = indices
                    .iter()
                    .copied()
                    .filter(|&i| tier_of(i) == tier + 1)
                    .collect();
                for (i, n) in batches(&in_tier) {
                    jobs.push(Job {
                        work: Work::Candidate(bug),
                        index: i,
                        config: Config {
                            seed: first.wrapping_add(i),
                            trace: TraceLevel::Results,
                            params: params_for(&config, tier + 1, unseen),
                            ..config.clone()
                        },
                        chain: n,
                        tally: true,
                        place,
                    });
                }
            }
        }
        // Every candidate's first run, then every candidate's next few, and so on: a real
        // bug its strategy makes happen shows in its first runs, so it is not left waiting
        // behind the whole quota of each harmless candidate queued before it.
        Ok(Phase2Jobs {
            first: first_runs,
            later: later_runs.into_iter().flatten().collect(),
        })
    }

    /// The races to try with DrFinder: those whose first RaceFuzzer run did not make them
    /// real, when may-trigger relations exist. Decided on the first run, which every shard
    /// makes, so that shards try the same chains.
    pub(super) fn drfinder_fallback(&mut self) -> Vec<(Candidate, StrategyId)> {
        let has_relations = !self.prediction.relations.is_empty();
        let real: BTreeSet<&String> = self
            .real_at_first
            .iter()
            .map(|&h| &self.handles[h])
            .collect();
        let unconfirmed: BTreeSet<String> = self
            .report
            .bugs
            .iter()
            .filter(|b| !real.contains(&b.id))
            .map(|b| b.id.clone())
            .collect();
        self.untried(|c| {
            (has_relations && c.kind == CandidateKind::Race && unconfirmed.contains(&c.id))
                .then_some(StrategyId::DrFinder)
        })
    }
}

/// The strategy parameters of a candidate's runs in `tier`. AtomFuzzer pauses the targeted
/// re-acquire every time (q = 1) in the first two tiers: a run that does not pause cannot
/// confirm the block, and the pause costs only steps (it ends at the violation, or when
/// nobody else can run). Its later runs use the paper's q = 0.5: pausing at the first
/// instance always lets the first intruder in, and a harmful intruder may come at a later
/// one.
///
/// RaceFuzzer, in the same tiers, sends first the side of the race that came second in
/// every trace that predicted it (`unseen`, from [`unseen_side_first`]): those traces passed
/// in their order, so the other order is the one still to try. Its later runs flip the
/// paper's coin (Algorithm 2, lines 11–18): the seen order may still fail after another
/// path.
fn params_for(config: &Config, tier: usize, unseen: Option<u8>) -> [u32; 4] {
    let mut params = config.params;
    if params[0] == 0 && tier < 2 {
        match (config.strategy, unseen) {
            (StrategyId::Atom, _) => params[0] = jostle_kernel::strategy::Q_ONE,
            (StrategyId::Race, Some(side)) => params[0] = jostle_kernel::strategy::side_first(side),
            _ => {}
        }
    }
    params
}

/// The side (0 or 1, as the race breakpoints number them: the candidate's sorted sites) of
/// a race candidate whose access came second in every witness; `None` when the witnesses
/// saw both orders, for a site racing with itself, and for other kinds.
fn unseen_side_first(candidate: &Candidate) -> Option<u8> {
    if candidate.kind != CandidateKind::Race || candidate.sites.first() == candidate.sites.last() {
        return None;
    }
    // A witness's events are side 0's access, then side 1's (`Candidate::from_race`).
    let mut orders =
        candidate
            .evidence
            .witnesses
            .iter()
            .filter_map(|w| match w.events.as_slice() {
                [a, b] => Some(a < b),
                _ => None,
            });
    let side0_first = orders.next()?;
    orders
        .all(|o| o == side0_first)
        .then_some(if side0_first { 1 } else { 0 })
}

/// Tiers of a candidate's run indices: `0`, `1..4`, `4..16`, `16..` (each four times the
/// last). Phase II takes tier by tier across the candidates.
const TIERS: usize = 4;

/// The tier of run index `i`.
fn tier_of(i: u64) -> usize {
    match i {
        0 => 0,
        1..4 => 1,
        4..16 => 2,
        _ => 3,
    }
}

/// The first seed of a candidate's runs under `strategy`: the base seed mixed with the
/// candidate id (so candidates do not share schedules) and the strategy.
pub fn candidate_seed(base: u64, id: &str, strategy: StrategyId) -> u64 {
    let id = u64::from_str_radix(id, 16).unwrap_or_else(|_| jostle_checker::fnv1a64(id.as_bytes()));
    let mut z = base ^ id ^ (u64::from(strategy as u8) << 56);
    // SplitMix64's finaliser: neighbouring ids get unrelated seed ranges.
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomfuzzer_pauses_surely_in_the_first_two_tiers_only() {
        let atom = Config {
            strategy: StrategyId::Atom,
            ..Config::default()
        };
        let q = |tier| params_for(&atom, tier, None)[0];
        let one = jostle_kernel::strategy::Q_ONE;
        assert_eq!([q(0), q(1), q(2), q(3)], [one, one, 0, 0]);
        // Another strategy's parameters, and a q the configuration gives, are kept.
        let race = Config {
            strategy: StrategyId::Race,
            ..Config::default()
        };
        assert_eq!(params_for(&race, 0, None), [0; 4]);
        let given = Config {
            params: [7, 0, 0, 0],
            ..atom
        };
        assert_eq!(params_for(&given, 0, None)[0], 7);
    }

    #[test]
    fn racefuzzer_sends_the_unseen_order_first_in_the_first_two_tiers_only() {
        use jostle_checker::{Evidence, Witness};
        use jostle_kernel::strategy::side_first;
        let race = |sites: [u32; 2], witnesses: &[[u64; 2]]| {
            Candidate::new(
                CandidateKind::Race,
                &sites,
                &sites,
                Evidence {
                    witnesses: witnesses
                        .iter()
                        .enumerate()
                        .map(|(trace, e)| Witness {
                            trace: trace as u32,
                            events: e.to_vec(),
                        })
                        .collect(),
                    ..Evidence::default()
                },
            )
        };
        // Side 0 (the smaller site) came first in every trace: side 1 goes first.
        assert_eq!(
            unseen_side_first(&race([3, 9], &[[5, 8], [2, 40]])),
            Some(1)
        );
        assert_eq!(unseen_side_first(&race([3, 9], &[[8, 5]])), Some(0));
        // Both orders seen, or one site racing with itself: the coin.
        assert_eq!(unseen_side_first(&race([3, 9], &[[5, 8], [8, 5]])), None);
        assert_eq!(unseen_side_first(&race([3, 3], &[[5, 8]])), None);
        let config = Config {
            strategy: StrategyId::Race,
            ..Config::default()
        };
        let first = |tier| params_for(&config, tier, Some(1))[0];
        assert_eq!(
            [first(0), first(1), first(2), first(3)],
            [side_first(1), side_first(1), 0, 0]
        );
    }

    #[test]
    fn tiers_cover_the_run_indices_in_order_each_four_times_the_last() {
        let tiers: Vec<usize> = (0..100).map(tier_of).collect();
        assert!(
            tiers.windows(2).all(|w| w[0] <= w[1]),
            "tiers never go back"
        );
        let size = |t| tiers.iter().filter(|&&x| x == t).count();
        assert_eq!([size(0), size(1), size(2)], [1, 3, 12]);
        assert_eq!(tier_of(u64::MAX), TIERS - 1);
    }
}
