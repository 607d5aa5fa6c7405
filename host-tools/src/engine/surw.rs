//! SURW's estimates (`--strategy surw`, the kernel's `strategy::Surw`): which location a run
//! aims at and how many of its accesses each task has left, taken from a *profiling run* of
//! the same firmware. This follows the artifact of Zhao et al. (ASPLOS 2025,
//! `zhaohuanqdcn/SURW`; `docs/research/surw.md` §1.2 and §5).
//!
//! - The profiling run is a Random run at full trace, the artifact's dry run. It is a real
//!   run and is counted as one: `jostle run` and `jostle confirm` make it first and say so,
//!   and a campaign uses its first Phase I run. The SURW paper charges it too: its
//!   `eval_period.py` adds one schedule to SURW's counts.
//! - A location is a candidate when at least `max(2, ⌊T/2⌋)` distinct tasks access it (`T`:
//!   the tasks of the run) and one of them writes it (the artifact's `get_var_count.py`).
//!   Interrupt handlers are not tasks: their accesses are not counted.
//! - Each run draws one candidate, with probability proportional to its access count
//!   (`bench_runner.py` `choose_target_addr`, called before every schedule). The draw comes
//!   from the run's seed, so it is replayed with the run. Consecutive seeds that draw the
//!   same choice share a boot ([`run_batch`]).
//! - The kernel learns the choice from the configuration block's breakpoints. The
//!   location's access sites get [`role::INTERESTING`]. Site ids are the same in every run of
//!   one image, and a location's id on the host port is not: the host port numbers
//!   locations in order of first use in each run. Each task's initial weight goes in
//!   [`role::WEIGHT`] breakpoints, one per run of consecutive tasks with equal weights
//!   ([`Surw::weight_aux`]). The weight is the task's number of accesses at those sites in
//!   the profiling run, plus the weights of the tasks it spawned (the artifact's
//!   `get_count`). The kernel counts every access at an interesting site, whatever its
//!   location, and the weights count the same way.
//! - The sites and weights must fit in the room the block leaves ([`MAX_BREAKPOINTS`] in
//!   all). When they do not, the location's least-used sites are left out first.
//!
//! One deviation from the artifact: when only one location qualifies, the artifact passes
//! no target (`len(mem_list) > 1`, `bench_runner.py`), and its SURW then runs on random
//! priorities alone. Here that location is aimed at.

use crate::error::JostleError;
use crate::trace::run::RunOutcome;
use crate::transport::Transport;
use jostle_checker::mixed::access;
use jostle_kernel::config::{Breakpoint, MAX_BREAKPOINTS, StrategyId};
use jostle_kernel::event::IRQ_CONTEXT;
use jostle_kernel::strategy::Surw;
use jostle_kernel::targets::{aux, role, role_of};
use jostle_kernel::{Config, Event, TraceLevel};
use std::collections::BTreeMap;

/// Mixed into a run's seed for its draw of a location (a stream apart from the scheduler's).
const DRAW_STREAM: u64 = 0x5E1E_C7ED_0C47_10A5;

/// A shared location that qualifies: accessed by enough tasks, written at least once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// Its id in the profiling run.
    pub id: u32,
    /// Its accesses by tasks.
    pub accesses: u64,
    /// Its access sites, most accesses first (ties: first used first), with their counts.
    pub sites: Vec<(u32, u64)>,
}

/// What SURW needs of a profiling run.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// The profiling run's seed.
    pub seed: u64,
    /// Its verdict (`none` if the stream ended early).
    pub verdict: String,
    /// Its scheduling steps.
    pub steps: u32,
    /// Tasks that ran (`T`).
    pub tasks: u32,
    /// The locations that qualify, in order of first access.
    pub locations: Vec<Location>,
    /// Accesses per site and task (every location).
    by_site: BTreeMap<u32, BTreeMap<u8, u64>>,
    /// The task that spawned each task.
    parent: BTreeMap<u8, u8>,
    /// `file:line:col` of the sites named in the choices.
    site_text: BTreeMap<u32, String>,
}

/// One run's choice: the location it aims at, its sites and the tasks' initial weights.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The location's id in the profiling run.
    pub location: u32,
    /// The interesting sites.
    pub sites: Vec<u32>,
    /// Initial weight per task id (`W0`: own accesses at the sites plus the spawned tasks').
    pub weights: Vec<u64>,
    /// The breakpoints that carry it.
    pub breakpoints: Vec<Breakpoint>,
}

impl Profile {
    /// The profile of a full-trace run.
    pub fn of(run: &RunOutcome) -> Profile {
        #[derive(Default)]
        struct Loc {
            first: usize,
            accesses: u64,
            written: bool,
            tasks: std::collections::BTreeSet<u8>,
            /// Per site: (accesses, first use).
            sites: BTreeMap<u32, (u64, usize)>,
        }
        let mut locs: BTreeMap<u32, Loc> = BTreeMap::new();
        let mut p = Profile {
            seed: run.config.seed,
            verdict: run.outcome.map_or("none", |o| o.name()).to_owned(),
            steps: run.steps,
            ..Profile::default()
        };
        let mut tasks = std::collections::BTreeSet::new();
        for (i, e) in run.events.iter().enumerate() {
            match *e {
                Event::TaskStart { t } if t < IRQ_CONTEXT => {
                    tasks.insert(t);
                }
                Event::Spawn { t, child, .. } => {
                    p.parent.insert(child, t);
                }
                _ => {}
            }
            let Some((a, s, t, writes, _)) = access(e).filter(|x| x.2 < IRQ_CONTEXT) else {
                continue;
            };
            tasks.insert(t);
            *p.by_site.entry(s).or_default().entry(t).or_default() += 1;
            let l = locs.entry(a).or_insert_with(|| Loc {
                first: i,
                ..Loc::default()
            });
            l.accesses += 1;
            l.written |= writes;
            l.tasks.insert(t);
            l.sites.entry(s).or_insert((0, i)).0 += 1;
        }
        p.tasks = tasks.len() as u32;
        let needed = (p.tasks as usize / 2).max(2);
        let mut qualified: Vec<(usize, Location)> = locs
            .into_iter()
            .filter(|(_, l)| l.written && l.tasks.len() >= needed)
            .map(|(id, l)| {
                let mut sites: Vec<(u32, u64, usize)> =
                    l.sites.into_iter().map(|(s, (n, at))| (s, n, at)).collect();
                sites.sort_by_key(|&(_, n, at)| (std::cmp::Reverse(n), at));
                let location = Location {
                    id,
                    accesses: l.accesses,
                    sites: sites.into_iter().map(|(s, n, _)| (s, n)).collect(),
                };
                (l.first, location)
            })
            .collect();
        qualified.sort_by_key(|(first, _)| *first);
        p.locations = qualified.into_iter().map(|(_, l)| l).collect();
        for l in &p.locations {
            for &(s, _) in &l.sites {
                p.site_text.insert(s, run.site_text(s));
            }
        }
        p
    }

    /// The location run `seed` aims at: drawn with probability proportional to its
    /// accesses, from the seed alone.
    pub fn draw(&self, seed: u64) -> Option<&Location> {
        let total: u64 = self.locations.iter().map(|l| l.accesses).sum();
        if total == 0 {
            return None;
        }
        // SplitMix64 of the seed: 64 uniform bits (the modulo's bias is below 2^-40 for
        // any count of accesses a run can make).
        let mut z = (seed ^ DRAW_STREAM).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let r = (z ^ (z >> 31)) % total;
        let mut cumulative = 0;
        self.locations.iter().find(|l| {
            cumulative += l.accesses;
            r < cumulative
        })
    }

    /// Initial weights per task id when `sites` are the interesting ones: each task's
    /// accesses at them, plus the weights of the tasks it spawned.
    pub fn weights(&self, sites: &[u32]) -> Vec<u64> {
        let n = self
            .by_site
            .values()
            .flat_map(|m| m.keys())
            .chain(self.parent.keys())
            .chain(self.parent.values())
            .map(|t| usize::from(*t) + 1)
            .max()
            .unwrap_or(0);
        let mut w = vec![0u64; n];
        for s in sites {
            for (&t, &count) in self.by_site.get(s).into_iter().flatten() {
                w[usize::from(t)] += count;
            }
        }
        // A child's id is above its parent's (the kernel gives each spawn the lowest id never
        // used in the run), so children are summed before their parents.
        for child in (0..n).rev() {
            if let Some(&parent) = self.parent.get(&(child as u8)) {
                w[usize::from(parent)] += w[child];
            }
        }
        w
    }

    /// Run `seed`'s choice, in at most `room` breakpoints (`None`: no location qualifies, or
    /// no room).
    pub fn choose(&self, seed: u64, room: usize) -> Option<Choice> {
        let location = self.draw(seed)?;
        if room == 0 {
            return None;
        }
        let all: Vec<u32> = location.sites.iter().map(|&(s, _)| s).collect();
        let mut kept = all.len().min(room);
        loop {
            let sites = &all[..kept];
            let weights = self.weights(sites);
            let runs = weight_runs(&weights);
            if kept + runs.len() <= room || kept == 1 {
                let mut breakpoints: Vec<Breakpoint> = sites
                    .iter()
                    .map(|&site| Breakpoint {
                        site,
                        aux: aux(role::INTERESTING, 0),
                    })
                    .collect();
                breakpoints.extend(runs.into_iter().take(room - kept));
                return Some(Choice {
                    location: location.id,
                    sites: sites.to_vec(),
                    weights,
                    breakpoints,
                });
            }
            kept -= 1;
        }
    }

    /// One line about the profile and run `seed`'s choice, for the user.
    pub fn describe(&self, choice: Option<&Choice>) -> String {
        let head = format!(
            "profiling run (random, seed {}, {} after {} steps): {} tasks, {} location(s) shared and written",
            self.seed,
            self.verdict,
            self.steps,
            self.tasks,
            self.locations.len()
        );
        let Some(c) = choice else {
            return format!("{head}; nothing aimed at (random priorities alone)");
        };
        let sites: Vec<&str> = c
            .sites
            .iter()
            .map(|s| self.site_text.get(s).map_or("?", String::as_str))
            .collect();
        let weights: Vec<String> = c
            .weights
            .iter()
            .enumerate()
            .filter(|(_, w)| **w > 0)
            .map(|(t, w)| format!("t{t} {w}"))
            .collect();
        format!(
            "{head}; aims at {} ({}), weights {}",
            sites.join(" "),
            if c.sites.len() == 1 {
                "1 site".to_owned()
            } else {
                format!("{} sites", c.sites.len())
            },
            weights.join(", ")
        )
    }
}

/// The [`role::WEIGHT`] breakpoints of `weights` (per task id): one per run of consecutive
/// tasks with the same positive weight.
pub fn weight_runs(weights: &[u64]) -> Vec<Breakpoint> {
    let mut out: Vec<Breakpoint> = Vec::new();
    let mut t = 0;
    while t < weights.len() {
        let w = weights[t];
        let mut len = 1;
        while t + len < weights.len() && weights[t + len] == w && len < usize::from(u8::MAX) {
            len += 1;
        }
        if w > 0 {
            out.push(Breakpoint {
                site: w.min(u64::from(u32::MAX)) as u32,
                aux: Surw::weight_aux(t as u8, len as u8),
            });
        }
        t += len;
    }
    out
}

/// Is `b` one of SURW's breakpoints (not a target's)?
pub fn is_surw(b: &Breakpoint) -> bool {
    matches!(role_of(b.aux), role::INTERESTING | role::WEIGHT)
}

/// The profiling run for `config` when its strategy is SURW (`None` otherwise): Random, at
/// full trace, with `config`'s seed, arguments and limits, and none of its breakpoints.
pub fn profile(transport: &dyn Transport, config: &Config) -> Result<Option<Profile>, JostleError> {
    if config.strategy != StrategyId::Surw {
        return Ok(None);
    }
    let probe = Config {
        strategy: StrategyId::Random,
        params: [0; 4],
        breakpoints: jostle_kernel::fixed::Vec::new(),
        trace: TraceLevel::Full,
        runs: 1,
        ..config.clone()
    };
    let mut outcome = transport.run(probe, None)?;
    if let Some(e) = outcome.error.take() {
        return Err(e);
    }
    Ok(Some(Profile::of(&outcome)))
}

/// `config` with its seed's choice from `profile` (SURW only): SURW's breakpoints replaced,
/// a target's kept.
pub fn with_choice(config: &Config, profile: Option<&Profile>) -> Config {
    let mut config = config.clone();
    let Some(profile) = profile.filter(|_| config.strategy == StrategyId::Surw) else {
        return config;
    };
    let kept: Vec<Breakpoint> = config
        .breakpoints
        .iter()
        .filter(|b| !is_surw(b))
        .copied()
        .collect();
    let room = MAX_BREAKPOINTS - kept.len();
    let choice = profile.choose(config.seed, room);
    config.breakpoints = kept
        .into_iter()
        .chain(choice.into_iter().flat_map(|c| c.breakpoints))
        .collect();
    config
}

/// `n` consecutive seeds of `config` from its seed, as [`Transport::run_batch`] makes them;
/// under SURW each seed with its own choice from `profile`, and consecutive seeds with the
/// same choice in one boot.
pub fn run_batch(
    transport: &dyn Transport,
    config: &Config,
    n: u32,
    profile: Option<&Profile>,
) -> Result<Vec<RunOutcome>, JostleError> {
    let mut outcomes = Vec::new();
    run_each(transport, config, n, profile, &mut |o| {
        outcomes.push(o);
        true
    })?;
    Ok(outcomes)
}

/// As [`run_batch`], handing each run's outcome to `each` as [`Transport::run_each`] does
/// (`false` stops).
pub fn run_each(
    transport: &dyn Transport,
    config: &Config,
    n: u32,
    profile: Option<&Profile>,
    each: &mut dyn FnMut(RunOutcome) -> bool,
) -> Result<(), JostleError> {
    if config.strategy != StrategyId::Surw || profile.is_none() {
        return transport.run_each(config, n, each);
    }
    let mut k = 0;
    while k < n {
        let first = with_choice(
            &Config {
                seed: config.seed.wrapping_add(u64::from(k)),
                ..config.clone()
            },
            profile,
        );
        // The next seeds with the same choice, at most a boot's worth.
        let mut len = 1;
        while k + len < n && len < crate::transport::RUNS_PER_BOOT {
            let next = with_choice(
                &Config {
                    seed: first.seed.wrapping_add(u64::from(len)),
                    ..config.clone()
                },
                profile,
            );
            if next.breakpoints != first.breakpoints {
                break;
            }
            len += 1;
        }
        let (mut got, mut short, mut stopped) = (0, false, false);
        transport.run_each(&first, len, &mut |o| {
            got += 1;
            short |= o.error.is_some();
            stopped = !each(o);
            !stopped
        })?;
        if stopped || short || got < len {
            break;
        }
        k += len;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::run::{Outcome, Port};
    use jostle_kernel::Verdict;

    fn run(events: Vec<Event>) -> RunOutcome {
        RunOutcome {
            port: Port::Host,
            config: Config {
                seed: 9,
                ..Config::default()
            },
            events,
            sites: Default::default(),
            locations: Default::default(),
            logs: Vec::new(),
            outcome: Some(Outcome::Verdict(Verdict::Pass)),
            steps: 0,
            panic: None,
            exit_code: Some(0),
            error: None,
            frames: 0,
            task_names: Default::default(),
            wait_sites: Default::default(),
            wake_sites: Default::default(),
        }
    }

    /// Main (0) spawns 1 and 2, and 2 spawns 3. Location 100 is written by 1 and read by 2
    /// and 3 (sites 11, 12, 13); location 200 is read by 1 and 2 only (never written);
    /// location 300 is written by 3 alone; 400 is written twice by 1 and once by 2 (site
    /// 41, shared with nothing else) and read by the main task at site 12.
    fn sample() -> RunOutcome {
        use Event::*;
        run(vec![
            TaskStart { t: 0 },
            Spawn {
                t: 0,
                child: 1,
                s: 1,
            },
            Spawn {
                t: 0,
                child: 2,
                s: 1,
            },
            TaskStart { t: 1 },
            TaskStart { t: 2 },
            Write {
                t: 1,
                s: 11,
                a: 100,
            },
            Read {
                t: 1,
                s: 20,
                a: 200,
            },
            Read {
                t: 2,
                s: 20,
                a: 200,
            },
            Spawn {
                t: 2,
                child: 3,
                s: 2,
            },
            TaskStart { t: 3 },
            Read {
                t: 2,
                s: 12,
                a: 100,
            },
            AtomicLoad {
                t: 3,
                s: 13,
                a: 100,
                o: 4,
            },
            Read {
                t: 3,
                s: 13,
                a: 100,
            },
            Write {
                t: 3,
                s: 30,
                a: 300,
            },
            Update {
                t: 1,
                s: 41,
                a: 400,
            },
            Update {
                t: 1,
                s: 41,
                a: 400,
            },
            Update {
                t: 2,
                s: 41,
                a: 400,
            },
            Read {
                t: 0,
                s: 12,
                a: 400,
            },
            // A handler's access is no task's.
            Write {
                t: IRQ_CONTEXT,
                s: 30,
                a: 300,
            },
        ])
    }

    #[test]
    fn the_locations_shared_by_enough_tasks_and_written_qualify_in_order_of_first_access() {
        let p = Profile::of(&sample());
        assert_eq!(p.tasks, 4);
        let ids: Vec<u32> = p.locations.iter().map(|l| l.id).collect();
        assert_eq!(ids, [100, 400]);
        assert_eq!(p.locations[0].accesses, 4);
        assert_eq!(p.locations[0].sites, [(13, 2), (11, 1), (12, 1)]);
        assert_eq!(p.locations[1].sites, [(41, 3), (12, 1)]);
    }

    #[test]
    fn weights_are_accesses_at_the_sites_plus_the_spawned_tasks() {
        let p = Profile::of(&sample());
        // Site 12 also reads location 400 (the main task's access counts: the kernel sees
        // an access at an interesting site).
        assert_eq!(p.weights(&[11, 12, 13]), [5, 1, 3, 2]);
        assert_eq!(p.weights(&[13]), [2, 0, 2, 2]);
        let bps = weight_runs(&[5, 0, 0, 2, 2, 2, 7]);
        let decoded: Vec<(u32, u32)> = bps.iter().map(|b| (b.site, b.aux)).collect();
        assert_eq!(
            decoded,
            [
                (5, Surw::weight_aux(0, 1)),
                (2, Surw::weight_aux(3, 3)),
                (7, Surw::weight_aux(6, 1)),
            ]
        );
        let targets = jostle_kernel::targets::Targets::new(&bps);
        let w: Vec<u16> = (0..8).map(|t| Surw::initial_weight(&targets, t)).collect();
        assert_eq!(w, [5, 0, 0, 2, 2, 2, 7, 0]);
    }

    #[test]
    fn each_seed_draws_a_location_in_proportion_to_its_accesses() {
        let p = Profile::of(&sample());
        let mut on_100 = 0;
        for seed in 0..2000 {
            let c = p.choose(seed, MAX_BREAKPOINTS).unwrap();
            assert_eq!(Some(&c), p.choose(seed, MAX_BREAKPOINTS).as_ref());
            if c.location == 100 {
                on_100 += 1;
                assert_eq!(c.sites, [13, 11, 12]);
                assert_eq!(c.breakpoints.len(), 3 + 4);
            }
        }
        // Accesses 4 and 4: half each.
        assert!((900..1100).contains(&on_100), "{on_100}");
        // Little room: the least-used sites go first.
        let seed = (0..).find(|&s| p.draw(s).unwrap().id == 100).unwrap();
        let c = p.choose(seed, 4).unwrap();
        assert_eq!(c.sites, [13]);
        assert_eq!(c.weights, [2, 0, 2, 2]);
        assert_eq!(c.breakpoints.len(), 3);
        assert!(p.choose(seed, 0).is_none());
        let empty = Profile::of(&run(vec![Event::TaskStart { t: 0 }]));
        assert!(empty.choose(1, MAX_BREAKPOINTS).is_none());
    }

    #[test]
    fn a_choice_keeps_the_targets_breakpoints_and_replaces_an_earlier_choice() {
        let p = Profile::of(&sample());
        let race = Breakpoint {
            site: 77,
            aux: aux(role::RACE, 0),
        };
        let mut config = Config {
            strategy: StrategyId::Surw,
            seed: 3,
            ..Config::default()
        };
        config.breakpoints.push(race).unwrap();
        let once = with_choice(&config, Some(&p));
        assert_eq!(once.breakpoints[0], race);
        assert!(once.breakpoints[1..].iter().all(is_surw));
        assert!(once.breakpoints.len() > 1);
        assert_eq!(with_choice(&once, Some(&p)), once);
        let random = Config {
            strategy: StrategyId::Random,
            ..config.clone()
        };
        assert_eq!(with_choice(&random, Some(&p)), random);
    }
}
