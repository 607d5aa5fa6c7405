//! Phase II per candidate: its breakpoints, the strategy of its kind (or DrFinder as the
//! fallback for a race), seeds derived from the base seed and the candidate id; run 0 at
//! full trace (it feeds prediction, in every shard), the rest results-only in batches, a
//! DrFinder chain whole. A round takes every candidate's first run, then every candidate's
//! next three, then twelve, then the rest (tiers), so one real bug is not found only after
//! the whole quota of each harmless candidate queued before it.

use super::Campaign;
use super::jobs::{Job, Work, batch_at};
use super::plan::{Plan, Step};
use crate::engine::targeting::{candidate_breakpoints, strategy_name};
use crate::error::JostleError;
use jostle_checker::{Candidate, CandidateKind};
use jostle_kernel::config::StrategyId;
use jostle_kernel::{Config, TraceLevel};
use std::collections::BTreeSet;

/// One candidate's Phase II runs under one strategy: what its jobs share.
#[derive(Clone)]
pub(super) struct Target {
    /// The bug's handle.
    bug: usize,
    /// Its runs' configuration (strategy, breakpoints), before seed, trace and parameters.
    config: Config,
    /// The seed of its run 0.
    first: u64,
    /// RaceFuzzer's side to send first in the first tiers (see [`params_for`]).
    unseen: Option<u8>,
    /// Its place in the wave's queue.
    place: u64,
    /// This shard's run indices.
    slice: std::ops::Range<u64>,
    /// A DrFinder chain (all its runs in one sequence, by the shard that owns run 0).
    chain: bool,
}

impl Target {
    /// Whether this shard makes run 0 (every shard makes it; this one counts it).
    fn owns_first(&self) -> bool {
        self.slice.start == 0 && !self.slice.is_empty()
    }
}

/// A DrFinder chain under way: its first run's configuration, and the next run's (the
/// first's with the relations the last run collected, drfinder-fse15 Algorithm 2, line 21).
pub(super) struct Chain {
    /// The first run's configuration.
    pub(super) base: Config,
    /// The next run's (its seed aside).
    pub(super) next: Config,
    /// Runs of the chain taken so far.
    pub(super) taken: u64,
}

/// Every candidate's first run, and the DrFinder chains whole, in queue order. A chain
/// longer than [`BATCH`](super::BATCH) comes in jobs of as many runs, each started from the last run of
/// the one before (so the plan waits for it).
pub(super) struct FirstRuns {
    targets: Vec<Target>,
    /// Runs per candidate.
    runs: u32,
    at: usize,
    /// Runs of the current chain given so far.
    given: u64,
}

impl Plan for FirstRuns {
    fn runs(&self) -> u64 {
        let left = self.targets.iter().skip(self.at).map(|t| match t.chain {
            true if t.owns_first() => u64::from(self.runs),
            true => 0,
            false => 1,
        });
        left.sum::<u64>().saturating_sub(self.given)
    }

    fn next(&mut self, campaign: &mut Campaign<'_>) -> Step {
        loop {
            let Some(t) = self.targets.get(self.at) else {
                return Step::Done;
            };
            if !t.chain {
                self.at += 1;
                // Run 0 feeds prediction (full trace), in every shard so that all predict
                // the same; the others need only the results.
                return Step::Job(Box::new(Job {
                    work: Work::Candidate(t.bug),
                    index: 0,
                    config: Config {
                        seed: t.first,
                        trace: TraceLevel::Full,
                        params: params_for(&t.config, 0, t.unseen),
                        ..t.config.clone()
                    },
                    chain: 1,
                    tally: t.owns_first(),
                    place: t.place,
                }));
            }
            // A chain cannot be split between shards: the one that owns run 0 makes it.
            let runs = u64::from(self.runs);
            if !t.owns_first() || self.given >= runs {
                self.at += 1;
                self.given = 0;
                continue;
            }
            // Full trace: DrFinder's confirmation is the happens-before detector's.
            let chain = campaign.chains.entry(t.bug).or_insert_with(|| {
                let base = Config {
                    seed: t.first,
                    trace: TraceLevel::Full,
                    ..t.config.clone()
                };
                Chain {
                    next: base.clone(),
                    base,
                    taken: 0,
                }
            });
            if chain.taken < self.given {
                return Step::Wait;
            }
            let (index, n) = batch_at(self.given, runs);
            self.given += u64::from(n);
            return Step::Job(Box::new(Job {
                work: Work::Candidate(t.bug),
                index,
                config: Config {
                    seed: t.first.wrapping_add(index),
                    ..chain.next.clone()
                },
                chain: n,
                tally: true,
                place: t.place,
            }));
        }
    }
}

/// The candidates' later runs (results-only), tier by tier across the candidates: every
/// candidate's runs 1-3, then 4-15, then the rest.
pub(super) struct LaterRuns {
    targets: Vec<Target>,
    /// The tier, candidate and run index given next.
    tier: usize,
    at: usize,
    next: u64,
    /// Runs left to give.
    left: u64,
}

impl Plan for LaterRuns {
    fn runs(&self) -> u64 {
        self.left
    }

    fn next(&mut self, _: &mut Campaign<'_>) -> Step {
        while self.tier < TIERS {
            let Some(t) = self.targets.get(self.at) else {
                (self.tier, self.at, self.next) = (self.tier + 1, 0, 0);
                continue;
            };
            let tier = tier_range(self.tier);
            let (from, to) = (
                self.next.max(tier.start).max(t.slice.start),
                tier.end.min(t.slice.end),
            );
            if t.chain || from >= to {
                (self.at, self.next) = (self.at + 1, 0);
                continue;
            }
            let (i, n) = batch_at(from, to);
            self.next = i + u64::from(n);
            self.left = self.left.saturating_sub(u64::from(n));
            return Step::Job(Box::new(Job {
                work: Work::Candidate(t.bug),
                index: i,
                config: Config {
                    seed: t.first.wrapping_add(i),
                    trace: TraceLevel::Results,
                    params: params_for(&t.config, self.tier, t.unseen),
                    ..t.config.clone()
                },
                chain: n,
                tally: true,
                place: t.place,
            }));
        }
        Step::Done
    }
}

impl Campaign<'_> {
    /// The plans of `queue`'s candidates: every candidate's first run (and DrFinder chains),
    /// then the later runs, tier by tier. A candidate that cannot be targeted is marked
    /// skipped in the report; the others still run.
    pub(super) fn phase2_plans(
        &mut self,
        queue: &[(Candidate, StrategyId)],
    ) -> Result<(FirstRuns, LaterRuns), JostleError> {
        let space = self.transport.space();
        let mut targets = Vec::new();
        for (place, (candidate, strategy)) in queue.iter().enumerate() {
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
            targets.push(Target {
                bug,
                config: Config {
                    strategy: *strategy,
                    breakpoints,
                    ..self.settings.base.clone()
                },
                first: candidate_seed(self.settings.seed, &candidate.id, *strategy),
                unseen: unseen_side_first(candidate),
                place: place as u64,
                slice: self.slice(self.settings.runs_per_candidate),
                chain: *strategy == StrategyId::DrFinder,
            });
        }
        if self.settings.runs_per_candidate == 0 {
            targets.clear();
        }
        let left = targets
            .iter()
            .filter(|t| !t.chain)
            .map(|t| t.slice.end - t.slice.start.max(1).min(t.slice.end))
            .sum();
        Ok((
            FirstRuns {
                targets: targets.clone(),
                runs: self.settings.runs_per_candidate,
                at: 0,
                given: 0,
            },
            LaterRuns {
                targets,
                tier: 1,
                at: 0,
                next: 0,
                left,
            },
        ))
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

/// The run indices of `tier`.
fn tier_range(tier: usize) -> std::ops::Range<u64> {
    match tier {
        0 => 0..1,
        1 => 1..4,
        2 => 4..16,
        _ => 16..u64::MAX,
    }
}

/// The tier of run index `i`.
#[cfg(test)]
fn tier_of(i: u64) -> usize {
    // The last tier ends at u64::MAX, which no run index reaches.
    (0..TIERS)
        .find(|&t| tier_range(t).contains(&i))
        .unwrap_or(TIERS - 1)
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
    use crate::engine::campaign::{Budget, Settings};
    use crate::trace::run::RunOutcome;
    use crate::trace::space::SiteSpace;
    use crate::transport::Transport;
    use std::path::Path;
    use std::sync::Mutex;

    /// Runs nothing: every run passes at once; the configurations are kept, in order.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<Config>>);

    impl Transport for Recorder {
        fn path(&self) -> &Path {
            Path::new("/nonexistent/firmware")
        }

        fn space(&self) -> SiteSpace<'_> {
            SiteSpace::Host
        }

        fn run(&self, config: Config, _: Option<&Path>) -> Result<RunOutcome, JostleError> {
            self.0.lock().unwrap().push(config.clone());
            Ok(RunOutcome::passed(config, None))
        }
    }

    /// A campaign on `transport` with `runs` per candidate and `budget`, whose report has
    /// the bugs `ids` (handles 0, 1, ...), writing into `dir`.
    fn campaign<'t>(
        transport: &'t Recorder,
        runs: u32,
        budget: Budget,
        ids: &[&str],
        dir: &Path,
    ) -> Campaign<'t> {
        let settings = Settings {
            phase1_runs: 1,
            runs_per_candidate: runs,
            // One worker: the recorder sees the runs in the order they are taken.
            jobs: 1,
            budget,
            seed: 0,
            base: Config::default(),
            shard: (0, 1),
            options: jostle_checker::Options::default(),
            max_rounds: 1,
            firmware_command: "fw".into(),
            report_dir: dir.to_owned(),
            livelock_bound: None,
            portfolio: Vec::new(),
            until_failure: false,
            shrink: false,
        };
        let mut c = Campaign::new(transport, settings, Default::default());
        for id in ids {
            c.handles.push((*id).to_owned());
            c.report.bugs.push(crate::output::report::Bug {
                id: (*id).to_owned(),
                ..Default::default()
            });
        }
        c
    }

    fn target(bug: usize, strategy: StrategyId, first: u64, runs: u32) -> Target {
        Target {
            bug,
            config: Config {
                strategy,
                ..Config::default()
            },
            first,
            unseen: None,
            place: bug as u64,
            slice: 0..u64::from(runs),
            chain: strategy == StrategyId::DrFinder,
        }
    }

    #[test]
    fn a_long_drfinder_chain_runs_in_order_in_jobs_of_a_batch_and_a_budget_cuts_it() {
        let dir = tempfile::tempdir().unwrap();
        for (budget, made) in [(Budget::Unlimited, 131), (Budget::Runs(70), 70)] {
            let recorder = Recorder::default();
            let mut c = campaign(&recorder, 130, budget, &["a", "b"], dir.path());
            let mut first = FirstRuns {
                targets: vec![
                    target(0, StrategyId::DrFinder, 1000, 130),
                    target(1, StrategyId::Race, 5000, 130),
                ],
                runs: 130,
                at: 0,
                given: 0,
            };
            assert_eq!(first.runs(), 131);
            c.execute(&mut first, &|_| {}).unwrap();
            let seeds: Vec<u64> = recorder.0.lock().unwrap().iter().map(|c| c.seed).collect();
            // The chain whole and in order (its jobs one after another), then the other
            // candidate's first run.
            let mut want: Vec<u64> = (1000..1130).collect();
            want.push(5000);
            want.truncate(made);
            assert_eq!(seeds, want, "{budget:?}");
            assert_eq!(c.chains[&0].taken, made.min(130) as u64);
            let runs = c.report.bugs[0]
                .attempts
                .iter()
                .map(|a| a.runs)
                .sum::<u64>();
            assert_eq!(runs, made.min(130) as u64);
        }
    }

    #[test]
    fn later_runs_of_any_count_are_made_as_they_are_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let recorder = Recorder::default();
        let mut c = campaign(
            &recorder,
            u32::MAX,
            Budget::Runs(120),
            &["a", "b"],
            dir.path(),
        );
        let targets = vec![
            target(0, StrategyId::Race, 0, u32::MAX),
            target(1, StrategyId::Race, 1 << 40, u32::MAX),
        ];
        let mut later = LaterRuns {
            left: 2 * (u64::from(u32::MAX) - 1),
            targets,
            tier: 1,
            at: 0,
            next: 0,
        };
        c.execute(&mut later, &|_| {}).unwrap();
        let seeds: Vec<u64> = recorder.0.lock().unwrap().iter().map(|c| c.seed).collect();
        // Tier by tier across the candidates: runs 1-3 of each, 4-15 of each, then the rest
        // of the first (cut by the budget).
        let want: Vec<u64> = (1..4)
            .chain((1 << 40) + 1..(1 << 40) + 4)
            .chain(4..16)
            .chain((1 << 40) + 4..(1 << 40) + 16)
            .chain(16..)
            .take(120)
            .collect();
        assert_eq!(seeds, want);
        assert!(c.budget_hit.load(std::sync::atomic::Ordering::SeqCst));
    }

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
