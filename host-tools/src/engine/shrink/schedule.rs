//! A run's schedule, read from its full trace: the context switches and firings the
//! `schedule` strategy must be told to make the same interleaving, and their text form.

use crate::error::JostleError;
use crate::trace::run::is_step;
use jostle_kernel::Event;
use jostle_kernel::config::Breakpoint;
use jostle_kernel::event::IRQ_CONTEXT;
use jostle_kernel::strategy::Schedule;
use jostle_kernel::targets::role;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One entry of a schedule: its breakpoint and whether it is a preemption.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The `schedule` strategy's breakpoint ([`Schedule::switch`], [`Schedule::fire`] or
    /// [`Schedule::poll`]).
    pub bp: Breakpoint,
    /// A switch away from a task that was still enabled.
    pub preemptive: bool,
    /// The index in the run's events of the step (or handler entry) it made come next.
    pub at: usize,
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

/// A task's operation as an event: a step by a task (not a handler), its idle wait
/// included.
pub(super) fn task_step(e: &Event) -> Option<u8> {
    counted(e).filter(|&t| t < IRQ_CONTEXT)
}

/// The context whose operation `e` is, as the `schedule` strategy counts them: a task's step
/// (its idle wait included), or a handler's operation (not its entry or exit).
pub(super) fn counted(e: &Event) -> Option<u8> {
    if let Event::Idle { t, .. } = *e {
        return Some(t);
    }
    (is_step(e) && !matches!(e, Event::IrqEnter { .. } | Event::IrqExit { .. }))
        .then(|| e.task())
        .flatten()
}

/// The schedule of a full-trace run: every switch from the task that ran last (`A`, having
/// run `n` operations) to another task that the `schedule` strategy would not make by itself,
/// and every firing the run chose (`IrqEnter`'s `f` = 0): in the tasks' context (anchored
/// at the context that executed last), nested in a handler (anchored at that handler's count),
/// and each async task a dispatcher polled out of its own order (anchored at the context
/// that executed last), in the order they happened. A firing any strategy makes (a request
/// firmware pended, taken as soon as it could be; a poll in the dispatcher's order) needs
/// no entry.
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
    // Operations each context executed, as the strategy counts them; the task and the
    // context that executed last.
    let mut count: HashMap<u8, u32> = HashMap::new();
    let mut last = 0u8;
    let mut last_ctx = 0u8;
    // The priority of each handler context (from its entries): a firing nested at its own
    // priority is a poll by its dispatcher (equal priorities do not preempt).
    let mut priority: HashMap<u8, u8> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if let Some(ctx) = counted(e) {
            *count.entry(ctx).or_default() += 1;
            last_ctx = ctx;
        }
        match *e {
            Event::IrqEnter {
                t: ctx,
                i: source,
                p,
                by,
                f,
            } => {
                priority.insert(ctx, p);
                if f != 0 {
                    continue;
                }
                let at = |a: u8| count.get(&a).copied().unwrap_or(0);
                let bp = if by < IRQ_CONTEXT {
                    Schedule::fire(last_ctx, at(last_ctx), source)
                } else if priority.get(&by) == Some(&p) {
                    Schedule::poll(last_ctx, at(last_ctx), source)
                } else {
                    Schedule::fire(by, at(by), source)
                };
                out.entries.push(Entry {
                    bp,
                    preemptive: false,
                    at: i,
                });
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
                    at: i,
                });
            }
        }
        model.apply(t, e);
        last = t;
    }
    out
}

/// The entries as text: `A:n>B` (a switch), `A:n!i` (a firing) and `A:n?k` (a poll),
/// comma-separated.
pub fn schedule_text(entries: &[Breakpoint]) -> String {
    entries
        .iter()
        .filter_map(|bp| {
            let (r, a, n, x) = Schedule::entry(bp)?;
            let mark = match r {
                role::SWITCH => '>',
                role::POLL_AT => '?',
                _ => '!',
            };
            Some(format!("{a}:{n}{mark}{x}"))
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads [`schedule_text`]'s form back.
pub fn parse_schedule(text: &str) -> Result<Vec<Breakpoint>, JostleError> {
    let bad = |e: &str| {
        JostleError::Usage(format!(
            "--schedule: `{e}` is not an entry `A:n>B` (task A, having run n operations, hands over to task B), `A:n!i` (source i fires there) or `A:n?k` (the dispatcher polls async task k there)"
        ))
    };
    let mut out = Vec::new();
    for e in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (a, rest) = e.split_once(':').ok_or_else(|| bad(e))?;
        let (make, (n, x)): (fn(u8, u32, u8) -> Breakpoint, _) =
            if let Some(p) = rest.split_once('>') {
                (Schedule::switch, p)
            } else if let Some(p) = rest.split_once('?') {
                (Schedule::poll, p)
            } else {
                (Schedule::fire, rest.split_once('!').ok_or_else(|| bad(e))?)
            };
        let a: u8 = a.trim().parse().map_err(|_| bad(e))?;
        let n: u32 = n.trim().parse().map_err(|_| bad(e))?;
        let x: u8 = x.trim().parse().map_err(|_| bad(e))?;
        out.push(make(a, n, x));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_read_back_what_they_print() {
        let entries = [
            Schedule::switch(1, 4, 2),
            Schedule::fire(0, 7, 3),
            Schedule::poll(130, 2, 4),
        ];
        let text = schedule_text(&entries);
        assert_eq!(text, "1:4>2,0:7!3,130:2?4");
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
