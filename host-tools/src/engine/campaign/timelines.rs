//! Timelines: each confirmed bug's first confirming (or harmful) run replayed at full
//! trace. It must make the bug real again (a determinism check); the steps around the bug
//! become the report's timeline and the run's schedule digest.

use super::Campaign;
use crate::engine::pool::run_all;
use crate::error::JostleError;
use crate::output::report::{Mark, Replay};
use crate::trace::failure::{failure_event, signature};
use crate::trace::run::{RunOutcome, is_step, operation};
use jostle_kernel::config::{Breakpoint, StrategyId};
use jostle_kernel::{Config, Event, TraceLevel};
use std::sync::Arc;

/// Most events of the full-trace replays kept for shrinking (some 40 MB); beyond, a shrink
/// replays its recorded run itself.
const KEPT_EVENTS: usize = 2_000_000;

impl Campaign<'_> {
    /// Replays the first confirming run of each confirmed bug at full trace: it must make
    /// the bug real again (a determinism check), and its interleaving is the timeline.
    pub(super) fn timelines(&mut self) -> Result<(), JostleError> {
        self.set_phase("timelines");
        self.bug_timelines()?;
        self.failure_timelines()?;
        self.shrink_findings()?;
        self.write()
    }

    /// The timelines of the bugs confirmed since the last call; the full-trace runs they
    /// came from, in the report's order (a run that made a bug real may have gone down a
    /// path no earlier trace showed: the campaign feeds them to prediction).
    pub(super) fn bug_timelines(&mut self) -> Result<Vec<Arc<RunOutcome>>, JostleError> {
        let todo: Vec<(usize, Config)> = self
            .report
            .bugs
            .iter()
            .enumerate()
            .filter(|(_, b)| b.timeline.is_empty())
            .filter_map(|(i, b)| {
                let r = b.first_harmful.as_ref().or(b.first_confirmed.as_ref())?;
                Some(replay_config(r, &self.settings.base, None).map(|c| (i, c)))
            })
            .collect::<Result<_, _>>()?;
        let mut runs = Vec::new();
        for (i, outcome) in self.replay_full(&todo)? {
            let bug = &mut self.report.bugs[i];
            if !outcome.confirmed() {
                return Err(JostleError::NotReproduced(format!(
                    "{} {}: seed {} made it real but its full-trace replay did not (nondeterminism)",
                    bug.kind, bug.id, outcome.config.seed
                )));
            }
            bug.timeline = timeline(&outcome);
            let schedule = Some(outcome.schedule_digest());
            match (&mut bug.first_harmful, &mut bug.first_confirmed) {
                (Some(r), _) | (None, Some(r)) => r.schedule = schedule,
                (None, None) => {}
            }
            let id = bug.id.clone();
            let outcome = Arc::new(outcome);
            self.keep_replay(id, &outcome);
            runs.push(outcome);
        }
        Ok(runs)
    }

    /// The full-trace replays of the confirming runs recorded since the last call after each
    /// bug's first ([`super::MORE_CONFIRMING`] at most per bug), for prediction. Like the
    /// timelines, these re-make runs already made and counted.
    pub(super) fn more_confirming_traces(&mut self) -> Result<Vec<RunOutcome>, JostleError> {
        let mut todo = Vec::new();
        for (&bug, (replays, fed)) in self.more_confirming.iter_mut() {
            for r in &replays[*fed..] {
                todo.push((bug, replay_config(r, &self.settings.base, None)?));
            }
            *fed = replays.len();
        }
        Ok(self
            .replay_full(&todo)?
            .into_iter()
            .map(|(_, outcome)| outcome)
            .collect())
    }

    /// Replays the first run of each failure (and starvation) at full trace: it must fail
    /// the same way again (a determinism check), and its last steps are the timeline. Runs
    /// stopped by the step limit or the wall clock are not replayed (their timeline would
    /// be the whole run, or not deterministic).
    fn failure_timelines(&mut self) -> Result<(), JostleError> {
        let mut todo = Vec::new();
        for (i, f) in self.report.failures.iter().enumerate() {
            if !f.timeline.is_empty() || f.verdict == "step_limit" || f.verdict == "timeout" {
                continue;
            }
            todo.push((i, replay_config(&f.first, &self.settings.base, None)?));
        }
        for (i, outcome) in self.replay_full(&todo)? {
            let f = &mut self.report.failures[i];
            let again = signature(&outcome).map(|s| s.id());
            if again.as_deref() != Some(f.id.as_str()) {
                return Err(JostleError::NotReproduced(format!(
                    "{} {}: seed {} ended with it but its full-trace replay did not (nondeterminism)",
                    f.verdict, f.id, outcome.config.seed
                )));
            }
            f.timeline = failure_timeline(&outcome);
            f.first.schedule = Some(outcome.schedule_digest());
            let id = f.id.clone();
            self.keep_replay(id, &Arc::new(outcome));
        }
        Ok(())
    }

    /// Keeps the full-trace replay of finding `id`'s recorded run for its shrinking (which
    /// starts from it), within [`KEPT_EVENTS`] events for all of them.
    fn keep_replay(&mut self, id: String, outcome: &Arc<RunOutcome>) {
        if !self.settings.shrink {
            return;
        }
        let kept: usize = self.replays.values().map(|o| o.events.len()).sum();
        if kept + outcome.events.len() <= KEPT_EVENTS {
            self.replays.insert(id, Arc::clone(outcome));
        }
    }

    /// Runs each `(index, configuration)` at full trace on the workers; the outcomes in
    /// order, up to the first one the stop left unmade. A broken stream is an error.
    fn replay_full(
        &self,
        todo: &[(usize, Config)],
    ) -> Result<Vec<(usize, RunOutcome)>, JostleError> {
        let transport = self.transport;
        let results = run_all(
            todo,
            self.settings.jobs,
            &self.stop,
            |(_, config)| {
                transport.run(
                    Config {
                        trace: TraceLevel::Full,
                        ..config.clone()
                    },
                    None,
                )
            },
            |_| {},
        );
        let mut out = Vec::new();
        for ((i, _), r) in todo.iter().zip(results) {
            let Some(r) = r else { break };
            let mut outcome = r?;
            if let Some(e) = outcome.error.take() {
                return Err(e);
            }
            out.push((*i, outcome));
        }
        Ok(out)
    }
}

/// Maps a `file:line:col` to the site ids of the image about to run.
pub type Resolve<'a> = &'a dyn Fn(&str) -> Result<Vec<u32>, JostleError>;

/// The configuration of a recorded run. `resolve` maps a breakpoint's `file:line:col` to
/// the site ids of the image about to run (`None`: the same image, ids as recorded). A
/// strategy this kernel does not know is refused (a report of another version).
pub fn replay_config(
    r: &Replay,
    base: &Config,
    resolve: Option<Resolve<'_>>,
) -> Result<Config, JostleError> {
    let strategy = StrategyId::from_name(&r.strategy).ok_or_else(|| {
        JostleError::BadReport(format!(
            "the report's run (seed {}) uses strategy `{}`, which this jostle does not know",
            r.seed, r.strategy
        ))
    })?;
    let mut breakpoints = jostle_kernel::fixed::Vec::new();
    for bp in &r.breakpoints {
        // A SURW weight and a schedule's entry are counts, not sites of the image.
        use jostle_kernel::targets::role;
        let site = !matches!(
            jostle_kernel::targets::role_of(bp.aux),
            role::WEIGHT | role::SWITCH | role::FIRE_AT | role::POLL_AT
        );
        let ids = match resolve {
            Some(f) if site => f(&bp.location).unwrap_or_else(|_| vec![bp.site]),
            _ => vec![bp.site],
        };
        for site in ids {
            let _ = breakpoints.push(Breakpoint { site, aux: bp.aux });
        }
    }
    Ok(Config {
        seed: r.seed,
        strategy,
        params: r.params,
        livelock_bound: r.livelock_bound,
        step_limit: r.step_limit,
        irq_horizon: r.irq_horizon,
        args: jostle_kernel::fixed::Vec::from_slice(&r.args).unwrap_or_default(),
        firing_bounds: jostle_kernel::fixed::Vec::from_slice(&r.firing_bounds).unwrap_or_default(),
        breakpoints,
        ..base.clone()
    })
}

/// Steps shown before the finding or failure in a timeline.
const BEFORE: usize = 40;

/// The marks of the executed steps `steps[from..]` (event indices), numbered from `from`;
/// `highlight` says which make the bug.
fn step_marks(
    outcome: &RunOutcome,
    steps: &[usize],
    from: usize,
    highlight: impl Fn(&Event) -> bool,
) -> Vec<Mark> {
    steps
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let e = &outcome.events[i];
            Mark {
                step: (from + k) as u64,
                task: e.task().unwrap_or(0),
                op: operation(e).to_owned(),
                site: e.site().map(|s| outcome.site_text(s)).unwrap_or_default(),
                location: crate::trace::run::location_of(e)
                    .map(|a| outcome.location_text(a))
                    .unwrap_or_default(),
                value: outcome.value_text(i).unwrap_or_default(),
                highlight: highlight(e),
                task_name: task_name(outcome, e.task()),
            }
        })
        .collect()
}

/// The steps before a failure (the panic, the deadlock, the fault) of a full-trace run,
/// ending with the failure itself, highlighted; a deadlock's blocked tasks each get a mark.
pub fn failure_timeline(outcome: &RunOutcome) -> Vec<Mark> {
    let events = &outcome.events;
    let Some(at) = failure_event(events) else {
        return Vec::new();
    };
    let steps: Vec<usize> = (0..at).filter(|&i| is_step(&events[i])).collect();
    let from = steps.len().saturating_sub(BEFORE);
    let mut marks = step_marks(outcome, &steps[from..], from, |_| false);
    let end = steps.len() as u64;
    for e in &events[at..] {
        let (task, op, s) = match *e {
            Event::TaskPanic { t, s } => (t, "panic", Some(s)),
            Event::Blocked { t, s, .. } => (t, "blocked", Some(s)),
            Event::StackOverflow { t, .. } => (t, "stack-overflow", None),
            Event::HardFault { t, .. } => (t, "hardfault", None),
            Event::HandlerBlocked { t, s, .. } => (t, "handler-blocked", Some(s)),
            Event::Starved { t, s, .. } => (t, "starved", (s != 0).then_some(s)),
            Event::LostWake { t, .. } => (t, "lost-wake", None),
            _ => continue,
        };
        let site = match *e {
            Event::LostWake { g, .. } => outcome.wait_sites.get(&g).cloned().unwrap_or_default(),
            _ => s.map(|s| outcome.site_text(s)).unwrap_or_default(),
        };
        marks.push(Mark {
            step: end,
            task,
            op: op.into(),
            site,
            location: crate::trace::run::location_of(e)
                .map(|a| outcome.location_text(a))
                .unwrap_or_default(),
            value: String::new(),
            highlight: true,
            task_name: task_name(outcome, Some(task)),
        });
        if !matches!(e, Event::Blocked { .. } | Event::LostWake { .. }) {
            break;
        }
    }
    marks
}

/// The interleaving around the first finding of a full-trace run: the steps before it and
/// a few after, with the operations that make the bug highlighted.
pub fn timeline(outcome: &RunOutcome) -> Vec<Mark> {
    const AFTER: usize = 12;
    let events = &outcome.events;
    let Some(found) = events.iter().position(|e| outcome.is_targeted_finding(e)) else {
        return Vec::new();
    };
    // Step numbers of executed operations.
    let mut steps = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if is_step(e) {
            steps.push(i);
        }
    }
    let found_step = steps.partition_point(|&i| i < found);
    let from = found_step.saturating_sub(BEFORE);
    let to = (found_step + AFTER).min(steps.len());
    // What to highlight: (task, site) of the operations that make the bug.
    let mut wanted: Vec<(u8, u32)> = Vec::new();
    let mut blocked = Vec::new();
    for e in &events[found..] {
        match *e {
            Event::RealRace { t, s, t2, s2, .. } => wanted.extend([(t, s), (t2, s2)]),
            Event::AtomicityViolation {
                t, block, by, s, ..
            } => {
                wanted.extend([(by, s), (t, block)]);
            }
            Event::Unserializable { t, s, by, s2, .. } => wanted.extend([(t, s), (by, s2)]),
            Event::DeadlockConfirmed { t, s, l, holder } => blocked.push((t, s, l, holder)),
            _ => {}
        }
    }
    let site = |s: Option<u32>| s.map(|s| outcome.site_text(s)).unwrap_or_default();
    let mut marks = step_marks(outcome, &steps[from..to], from, |e| {
        let task = e.task().unwrap_or(0);
        e.site().is_some_and(|s| wanted.contains(&(task, s)))
            || blocked.iter().any(|&(_, _, l, holder)| {
                holder == task && matches!(*e, Event::Acquire { l: l2, .. } if l2 == l)
            })
    });
    for (t, s, _, _) in blocked {
        marks.push(Mark {
            step: steps.len() as u64,
            task: t,
            op: "blocked".into(),
            site: site(Some(s)),
            location: String::new(),
            value: String::new(),
            highlight: true,
            task_name: task_name(outcome, Some(t)),
        });
    }
    marks
}

/// The name of task `t` in `outcome`, if the firmware named it.
fn task_name(outcome: &RunOutcome, t: Option<u8>) -> String {
    t.and_then(|t| outcome.task_names.get(&t).cloned())
        .unwrap_or_default()
}
