//! Shrinking: a finding's run reduced to the fewest preemptions, then the fewest other
//! context switches, that still give the same finding.
//!
//! The run's full trace gives its schedule ([`extract`]): one entry per context switch the
//! `schedule` strategy (`kernel/src/strategy/schedule.rs`) could not make on its own (it keeps
//! the last task running while it is enabled, else takes the lowest enabled one), each
//! anchored at the number of operations the task switched away from had run, and one per
//! interrupt firing at a task's decision. A switch is *preemptive* when that task could have
//! gone on. The entries are replayed through the `schedule` strategy, which reproduces the
//! interleaving, and delta debugging ([`ddmin`]) removes entries while each test run still
//! gives the same finding (the same failure signature, or the same bug confirmed) in no more
//! steps than the original: first over the preemptive entries, then over the rest. When two
//! or more preemptions are left, every one-switch schedule is tried as well, and the fewest
//! preemptions win. Each test is one run, at most [`MAX_RUNS`] per finding.

use crate::error::JostleError;
use crate::trace::run::{RunOutcome, is_step};
use crate::transport::Transport;
use jostle_kernel::config::{Breakpoint, MAX_BREAKPOINTS, StrategyId};
use jostle_kernel::event::IRQ_CONTEXT;
use jostle_kernel::strategy::Schedule;
use jostle_kernel::targets::{role, role_of};
use jostle_kernel::{Config, Event, TraceLevel};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};

/// Most runs spent shrinking one finding.
pub const MAX_RUNS: u32 = 200;

/// One entry of a schedule: its breakpoint and whether it is a preemption.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The `schedule` strategy's breakpoint ([`Schedule::switch`] or [`Schedule::fire`]).
    pub bp: Breakpoint,
    /// A switch away from a task that was still enabled.
    pub preemptive: bool,
}

/// A run's schedule, read from its full trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extracted {
    /// The entries the `schedule` strategy needs to make the run's interleaving, in order.
    pub entries: Vec<Entry>,
    /// Context switches between tasks.
    pub switches: u32,
    /// Of them, preemptions.
    pub preemptions: u32,
    /// Firings inside a handler (nested), which the `schedule` strategy does not replay.
    pub nested_firings: u32,
}

/// What each context holds, from the trace's effects so far: enough to tell whether a task's
/// next operation was enabled at a decision (the kernel's `sched::blocking` rules).
#[derive(Default)]
struct Model {
    locks: BTreeMap<u32, u8>,
    signals: BTreeMap<u32, u32>,
    cs: Option<u8>,
    done: BTreeSet<u8>,
    alive: BTreeSet<u8>,
}

impl Model {
    fn enabled(&self, t: u8, next: Option<&Event>) -> bool {
        if self.done.contains(&t) {
            return false;
        }
        if self.cs.is_some_and(|h| h != t) {
            return false;
        }
        match next {
            Some(Event::Acquire { l, .. }) => !self.locks.contains_key(l),
            Some(Event::Join { child, .. }) => self.done.contains(child),
            Some(Event::Wait { g, .. }) => self.signals.get(g).is_some_and(|n| *n > 0),
            Some(Event::CsEnter { .. }) => self.cs.is_none(),
            // A task that never steps again and did not end: stopped at something the run
            // did not get to (treated as enabled: a switch away from it counts as a
            // preemption).
            _ => true,
        }
    }

    fn apply(&mut self, ctx: u8, e: &Event) {
        match *e {
            Event::Acquire { l, .. } => {
                self.locks.insert(l, ctx);
            }
            Event::Release { l, .. } => {
                self.locks.remove(&l);
            }
            Event::Signal { g, .. } => *self.signals.entry(g).or_default() += 1,
            Event::Wait { g, .. } => {
                if let Some(n) = self.signals.get_mut(&g) {
                    *n = n.saturating_sub(1);
                }
            }
            Event::CsEnter { .. } => self.cs = Some(ctx),
            Event::CsExit { .. } => self.cs = None,
            Event::Spawn { child, .. } => {
                self.alive.insert(child);
            }
            _ => {}
        }
    }
}

/// A task's operation as an event: a step by a task (not a handler, not a handler's entry or
/// exit).
fn task_step(e: &Event) -> Option<u8> {
    let t = e.task()?;
    (is_step(e) && t < IRQ_CONTEXT && !matches!(e, Event::IrqEnter { .. } | Event::IrqExit { .. }))
        .then_some(t)
}

/// The schedule of a full-trace run: every switch from the task that ran last (`A`, having
/// run `n` operations) to another task that the `schedule` strategy would not make by itself,
/// and every firing at a task's decision, in the order they happened.
pub fn extract(events: &[Event]) -> Extracted {
    // Each task's steps, to find its next operation after any point.
    let mut steps_of: HashMap<u8, Vec<usize>> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if let Some(t) = task_step(e) {
            steps_of.entry(t).or_default().push(i);
        }
    }
    let next_of = |t: u8, from: usize| -> Option<&Event> {
        let v = steps_of.get(&t)?;
        v.get(v.partition_point(|&i| i < from)).map(|&i| &events[i])
    };
    let mut out = Extracted::default();
    let mut model = Model::default();
    model.alive.insert(0);
    let mut count: HashMap<u8, u32> = HashMap::new();
    let mut last = 0u8;
    for (i, e) in events.iter().enumerate() {
        match *e {
            Event::IrqEnter { i: source, by, .. } => {
                if by < IRQ_CONTEXT {
                    let n = count.get(&last).copied().unwrap_or(0);
                    out.entries.push(Entry {
                        bp: Schedule::fire(last, n, source),
                        preemptive: false,
                    });
                } else {
                    out.nested_firings += 1;
                }
                continue;
            }
            Event::TaskExit { t } => {
                model.done.insert(t);
                continue;
            }
            _ => {}
        }
        let Some(t) = task_step(e) else {
            // A handler's operation changes what the tasks may do.
            if let Some(ctx) = e.task().filter(|_| is_step(e)) {
                model.apply(ctx, e);
            }
            continue;
        };
        if t != last {
            let last_enabled = model.enabled(last, next_of(last, i));
            let lowest = model
                .alive
                .iter()
                .copied()
                .find(|&u| model.enabled(u, next_of(u, i)));
            let default = if last_enabled { Some(last) } else { lowest };
            out.switches += 1;
            out.preemptions += u32::from(last_enabled);
            if default != Some(t) {
                let n = count.get(&last).copied().unwrap_or(0);
                out.entries.push(Entry {
                    bp: Schedule::switch(last, n, t),
                    preemptive: last_enabled,
                });
            }
        }
        model.apply(t, e);
        *count.entry(t).or_default() += 1;
        last = t;
    }
    out
}

/// The entries as text: `A:n>B` and `A:n!i`, comma-separated.
pub fn schedule_text(entries: &[Breakpoint]) -> String {
    entries
        .iter()
        .filter_map(|bp| {
            let (r, a, n, x) = Schedule::entry(bp)?;
            Some(if r == role::SWITCH {
                format!("{a}:{n}>{x}")
            } else {
                format!("{a}:{n}!{x}")
            })
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads [`schedule_text`]'s form back.
pub fn parse_schedule(text: &str) -> Result<Vec<Breakpoint>, JostleError> {
    let bad = |e: &str| {
        JostleError::Usage(format!(
            "--schedule: `{e}` is not an entry `A:n>B` (task A, having run n operations, hands over to task B) or `A:n!i` (source i fires there)"
        ))
    };
    let mut out = Vec::new();
    for e in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (a, rest) = e.split_once(':').ok_or_else(|| bad(e))?;
        let (fire, (n, x)) = match rest.split_once('>') {
            Some(p) => (false, p),
            None => (true, rest.split_once('!').ok_or_else(|| bad(e))?),
        };
        let a: u8 = a.trim().parse().map_err(|_| bad(e))?;
        let n: u32 = n.trim().parse().map_err(|_| bad(e))?;
        let x: u8 = x.trim().parse().map_err(|_| bad(e))?;
        out.push(if fire {
            Schedule::fire(a, n, x)
        } else {
            Schedule::switch(a, n, x)
        });
    }
    Ok(out)
}

/// Delta debugging: `ddmin` of Zeller and Hildebrandt, "Simplifying and Isolating
/// Failure-Inducing Input" (IEEE TSE 28(2), 2002), Figure 5. `fails(c)` tells whether the
/// subset `c` (items kept in their order) still shows the failure; `input` must. Returns a
/// 1-minimal subset: removing any one item of it makes the failure go. The empty subset is
/// tried first (a finding may need no entry at all), which the paper's version assumes passes.
pub fn ddmin<T: Clone>(input: Vec<T>, fails: &mut impl FnMut(&[T]) -> bool) -> Vec<T> {
    if input.is_empty() || fails(&[]) {
        return Vec::new();
    }
    let mut c = input;
    let mut n = 2usize;
    while c.len() >= 2 {
        let chunks = split(&c, n);
        // Reduce to a subset.
        if let Some(s) = chunks.iter().find(|s| fails(s)) {
            c = s.clone();
            n = 2;
            continue;
        }
        // Reduce to a complement (with two chunks, the complements are the subsets).
        let complement = |k: usize| -> Vec<T> {
            chunks
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .flat_map(|(_, s)| s.iter().cloned())
                .collect()
        };
        if n > 2
            && let Some(k) = (0..chunks.len()).find(|&k| fails(&complement(k)))
        {
            c = complement(k);
            n = (n - 1).max(2);
            continue;
        }
        if n >= c.len() {
            break;
        }
        n = (2 * n).min(c.len());
    }
    c
}

/// `c` in `n` chunks of nearly equal size, in order.
fn split<T: Clone>(c: &[T], n: usize) -> Vec<Vec<T>> {
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for k in 0..n {
        let end = start + (c.len() - start) / (n - k);
        out.push(c[start..end].to_vec());
        start = end;
    }
    out
}

/// What counts as the same finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Same {
    /// A failing run with this signature id (`trace::failure`).
    Failure(String),
    /// The run's targeted bug confirmed again (and a failure following it, when `harmful`).
    Bug {
        /// The recorded run was harmful.
        harmful: bool,
    },
}

impl Same {
    /// Does `outcome` give this finding?
    pub fn holds(&self, outcome: &RunOutcome) -> bool {
        if outcome.error.is_some() {
            return false;
        }
        match self {
            Same::Failure(id) => {
                crate::trace::failure::signature(outcome).is_some_and(|s| s.id() == *id)
            }
            Same::Bug { harmful } => outcome.confirmed() && (!harmful || outcome.harmful()),
        }
    }
}

/// A finding shrunk.
#[derive(Debug)]
pub struct Shrinking {
    /// The recorded run's schedule and steps.
    pub original: Extracted,
    /// See `original`.
    pub original_steps: u32,
    /// The entries kept, and the run they give (it gives the same finding).
    pub shrunk: Option<(Vec<Breakpoint>, RunOutcome)>,
    /// The shrunk run's own schedule figures.
    pub figures: Extracted,
    /// Runs made (the recorded run's replay included).
    pub runs: u32,
    /// Why there is no shrunk run.
    pub note: String,
}

/// Breakpoints of a recorded configuration that say what its finding is (race sides, blocks,
/// cycles, triples, firing sources), without those that steer its strategy (DrFinder's
/// relations, AtomFuzzer's interleavers, SURW's location and weights) or a schedule's
/// entries.
pub fn finding_breakpoints(config: &Config) -> Vec<Breakpoint> {
    config
        .breakpoints
        .iter()
        .copied()
        .filter(|b| {
            !matches!(
                role_of(b.aux),
                role::RELATION
                    | role::CLASS
                    | role::INTERLEAVER
                    | role::INTERESTING
                    | role::WEIGHT
                    | role::SWITCH
                    | role::FIRE_AT
            )
        })
        .collect()
}

/// The configuration that replays `entries` after `recorded` (seed, limits, arguments) with
/// the `schedule` strategy; `targets` are the finding's breakpoints.
pub fn schedule_config(
    recorded: &Config,
    targets: &[Breakpoint],
    entries: &[Breakpoint],
) -> Config {
    let mut bps = targets.to_vec();
    bps.extend_from_slice(entries);
    Config {
        strategy: StrategyId::Schedule,
        params: [0; 4],
        trace: TraceLevel::Full,
        runs: 1,
        breakpoints: jostle_kernel::fixed::Vec::from_slice(&bps).unwrap_or_default(),
        ..recorded.clone()
    }
}

/// Shrinks the finding `same` of the recorded run `recorded`: replays it at full trace,
/// reads its schedule, and delta-debugs the schedule's entries through runs of the
/// `schedule` strategy, at most `max_runs` of them. A transport error ends it with that
/// error; `stop` ends it early with what it has.
pub fn shrink(
    transport: &dyn Transport,
    recorded: &Config,
    same: &Same,
    max_runs: u32,
    stop: &AtomicBool,
) -> Result<Shrinking, JostleError> {
    let runs = std::cell::Cell::new(0u32);
    let run = |config: Config| -> Result<RunOutcome, JostleError> {
        runs.set(runs.get() + 1);
        transport.run(config, None)
    };
    let first = run(Config {
        trace: TraceLevel::Full,
        runs: 1,
        ..recorded.clone()
    })?;
    let mut result = Shrinking {
        original: Extracted::default(),
        original_steps: first.steps,
        shrunk: None,
        figures: Extracted::default(),
        runs: 0,
        note: String::new(),
    };
    if !same.holds(&first) {
        result.runs = runs.get();
        result.note = "the recorded run did not give the finding again".into();
        return Ok(result);
    }
    result.original = extract(&first.events);
    let targets = finding_breakpoints(&first.config);
    let room = MAX_BREAKPOINTS.saturating_sub(targets.len());
    let all: Vec<usize> = (0..result.original.entries.len()).collect();
    let entries = result.original.entries.clone();
    let bps_of = |kept: &[usize]| -> Vec<Breakpoint> {
        let mut kept = kept.to_vec();
        kept.sort_unstable();
        kept.iter().map(|&k| entries[k].bp).collect()
    };
    // Memoised tests; the last passing one's run is the current best.
    let mut memo: HashMap<Vec<usize>, bool> = HashMap::new();
    let mut best: Option<(Vec<Breakpoint>, RunOutcome)> = None;
    let mut failure: Option<JostleError> = None;
    let limit = first.steps;
    // A test run must give the finding in no more steps than the recorded run, so it needs
    // no more: capped there, a schedule that sends a task spinning ends at once instead of
    // at the configured step limit (a full-trace run of 100,000 steps).
    let test_config = |entries: &[Breakpoint]| Config {
        step_limit: first.config.step_limit.min(limit.saturating_add(1)),
        ..schedule_config(&first.config, &targets, entries)
    };
    let mut test = |kept: &[usize]| -> bool {
        let mut key = kept.to_vec();
        key.sort_unstable();
        if let Some(&v) = memo.get(&key) {
            return v;
        }
        // A schedule that does not fit the block cannot be tried: as if it did not fail
        // (ddmin's unresolved outcome), so the search goes on among smaller subsets.
        if key.len() > room
            || runs.get() >= max_runs
            || failure.is_some()
            || stop.load(Ordering::SeqCst)
        {
            return false;
        }
        let outcome = match run(test_config(&bps_of(&key))) {
            Ok(o) => o,
            Err(e) => {
                failure = Some(e);
                return false;
            }
        };
        let fails = same.holds(&outcome) && outcome.steps <= limit;
        memo.insert(key.clone(), fails);
        if fails {
            best = Some((bps_of(&key), outcome));
        }
        fails
    };
    let preemptive: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&k| entries[k].preemptive)
        .collect();
    let rest: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&k| !entries[k].preemptive)
        .collect();
    if all.len() <= room {
        if test(&all) {
            // Preemptions first (the rest kept), then the other entries (the preemptions
            // kept minimal).
            let fewest = ddmin(preemptive, &mut |p: &[usize]| {
                test(&[p, rest.as_slice()].concat())
            });
            ddmin(rest.clone(), &mut |r: &[usize]| {
                test(&[fewest.as_slice(), r].concat())
            });
        }
    } else {
        // Too many entries for the block: ddmin over all of them, trying only the subsets
        // that fit.
        ddmin(all.clone(), &mut |c: &[usize]| test(c));
    }
    if let Some(e) = failure {
        result.runs = runs.get();
        return Err(e);
    }
    // Delta debugging keeps a subset of the recorded switches, so it stops at a schedule no
    // single removal improves, which may still preempt more than needed (rf_fig1's ERROR1
    // from seed 0: 3, where one suffices). With two or more preemptions left, every schedule
    // of one switch is tried ("when A has run n operations, B runs next", over the recorded
    // run's tasks and operation counts), within the runs left; the fewest preemptions, then
    // steps, win.
    let preemptions = |o: &RunOutcome| extract(&o.events).preemptions;
    if let Some((_, current)) = &best
        && preemptions(current) >= 2
        && targets.len() < MAX_BREAKPOINTS
    {
        let mut score = (preemptions(current), current.steps);
        let mut ops: BTreeMap<u8, u32> = BTreeMap::new();
        for t in first.events.iter().filter_map(task_step) {
            *ops.entry(t).or_default() += 1;
        }
        let tasks: Vec<u8> = ops.keys().copied().collect();
        'search: for (&a, &n_a) in &ops {
            for n in 0..=n_a {
                for &b in tasks.iter().filter(|&&b| b != a) {
                    if runs.get() >= max_runs || stop.load(Ordering::SeqCst) {
                        break 'search;
                    }
                    let entry = [Schedule::switch(a, n, b)];
                    let outcome = run(test_config(&entry))?;
                    if !same.holds(&outcome) || outcome.steps > limit {
                        continue;
                    }
                    let candidate = (preemptions(&outcome), outcome.steps);
                    if candidate < score {
                        score = candidate;
                        best = Some((entry.to_vec(), outcome));
                    }
                }
            }
        }
    }
    result.runs = runs.get();
    match best {
        Some((kept, outcome)) => {
            result.figures = extract(&outcome.events);
            result.shrunk = Some((kept, outcome));
        }
        None => {
            result.note = if all.len() > room {
                format!(
                    "its schedule has {} entries, the configuration block room for {room}, and no subset that fits gave the finding within {max_runs} runs",
                    all.len()
                )
            } else if result.original.nested_firings > 0 {
                "its schedule did not replay: it has firings inside handlers, which the schedule strategy does not make".into()
            } else {
                "its schedule did not replay under the schedule strategy".into()
            };
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddmin_finds_a_one_minimal_subset() {
        // The failure needs items 3 and 7 together.
        let mut tests = 0;
        let got = ddmin((0..10).collect(), &mut |c: &[i32]| {
            tests += 1;
            c.contains(&3) && c.contains(&7)
        });
        assert_eq!(got, [3, 7]);
        assert!(tests < 40, "{tests}");
        // Needs nothing: the empty subset.
        assert!(ddmin(vec![1, 2, 3], &mut |_: &[i32]| true).is_empty());
        // Needs everything.
        assert_eq!(
            ddmin(vec![1, 2, 3], &mut |c: &[i32]| c.len() == 3),
            [1, 2, 3]
        );
    }

    #[test]
    fn schedules_read_back_what_they_print() {
        let entries = [Schedule::switch(1, 4, 2), Schedule::fire(0, 7, 3)];
        let text = schedule_text(&entries);
        assert_eq!(text, "1:4>2,0:7!3");
        assert_eq!(parse_schedule(&text).unwrap(), entries);
        assert!(parse_schedule("").unwrap().is_empty());
        assert!(parse_schedule("1:4").is_err());
        assert!(parse_schedule("x:4>2").is_err());
    }

    #[test]
    fn extraction_marks_preemptions_and_leaves_out_the_switches_the_strategy_makes() {
        let (s, a) = (1, 100);
        let events = [
            Event::TaskStart { t: 0 },
            Event::Spawn { t: 0, child: 1, s },
            Event::Spawn { t: 0, child: 2, s },
            // Main blocks joining 1 (forced; 1 is the lowest enabled: no entry).
            Event::TaskStart { t: 1 },
            Event::Write { t: 1, s, a },
            // Preempted before its second write (it has run 2 operations).
            Event::TaskStart { t: 2 },
            Event::Acquire {
                t: 2,
                s,
                l: 9,
                c: 9,
            },
            // Task 2 is preempted holding the lock (after 2 operations); task 1 writes, then
            // blocks on the lock: 2 goes on (forced, the only enabled task).
            Event::Write { t: 1, s, a },
            Event::Release { t: 2, s, l: 9 },
            Event::TaskExit { t: 2 },
            Event::Acquire {
                t: 1,
                s,
                l: 9,
                c: 9,
            },
            Event::TaskExit { t: 1 },
            Event::Join { t: 0, child: 1, s },
        ];
        let x = extract(&events);
        // 0→1, 1→2, 2→1, 1→2, 2→1 (task 2 ended), 1→0 (task 1 ended).
        assert_eq!(x.switches, 6);
        assert_eq!(x.preemptions, 2, "{x:?}");
        let bps: Vec<Breakpoint> = x.entries.iter().map(|e| e.bp).collect();
        // Only the two preemptions need entries: every forced switch goes to the lowest
        // enabled task, which the strategy picks by itself.
        assert_eq!(schedule_text(&bps), "1:2>2,2:2>1");
        assert!(x.entries.iter().all(|e| e.preemptive));
    }
}
