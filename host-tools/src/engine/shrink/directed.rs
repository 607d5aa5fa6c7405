//! Directed schedules: when a run's schedule has too many entries to delta-debug (a random
//! run switches at nearly every step, and noise tasks multiply the switches), the switch
//! that makes the finding is looked for among the tasks the finding involves: those its
//! events name (the racing tasks, the panicking one, the blocked ones, the starving one) and
//! those that share a memory location or lock with them. Tasks that touch only their own
//! data cannot matter to the finding, however many switches the run made among them.

use super::schedule::{Entry, counted, task_step};
use crate::trace::run::location_of;
use jostle_kernel::Event;
use jostle_kernel::config::Breakpoint;
use jostle_kernel::event::IRQ_CONTEXT;
use jostle_kernel::strategy::Schedule;
use std::collections::{BTreeMap, BTreeSet};

/// The contexts the finding's events name: tasks, and handlers (as contexts
/// `IRQ_CONTEXT + i`).
fn named(events: &[Event]) -> BTreeSet<u8> {
    let mut out = BTreeSet::new();
    for e in events {
        out.extend(named_by(e));
    }
    out.remove(&jostle_kernel::event::NO_TASK);
    out
}

/// The contexts one finding event names (none for another event).
fn named_by(e: &Event) -> Vec<u8> {
    let mut out = Vec::new();
    {
        match *e {
            Event::RealRace { t, t2, .. } => out.extend([t, t2]),
            Event::AtomicityViolation { t, by, .. } | Event::Unserializable { t, by, .. } => {
                out.extend([t, by])
            }
            Event::DeadlockConfirmed { t, holder, .. } | Event::Blocked { t, holder, .. } => {
                out.extend([t, holder])
            }
            Event::TaskPanic { t, .. }
            | Event::StackOverflow { t, .. }
            | Event::HardFault { t, .. }
            | Event::HandlerBlocked { t, .. }
            | Event::Starved { t, .. } => out.push(t),
            _ => {}
        }
    }
    out.retain(|&c| c != jostle_kernel::event::NO_TASK);
    out
}

/// The focus of a finding: the event that shows it first (its index), and the tasks it
/// names.
fn focus(events: &[Event]) -> Option<(usize, Vec<u8>)> {
    let at = events.iter().position(|e| !named_by(e).is_empty())?;
    let mut tasks: Vec<u8> = named_by(&events[at])
        .into_iter()
        .filter(|&c| c < IRQ_CONTEXT)
        .collect();
    tasks.sort_unstable();
    tasks.dedup();
    Some((at, tasks))
}

/// Schedules aimed at the finding's first event, tried before any other. At that event each
/// task had executed some number of operations; for a task `x` the event names and a task
/// `y` it names or that shares data with it, having executed `n` and `m`: `x` runs to `n` (or
/// a little before) and hands over to `y`, or `y` runs to `m` (or a little before) and hands
/// over to `x`. Then the recorded run's own last switches (`entries`) before the event, each
/// alone, then two consecutive ones; then the first schedules with the other task handing
/// back where it stood.
pub fn focus_schedules(events: &[Event], entries: &[Entry]) -> Vec<Vec<Breakpoint>> {
    let Some((at, named)) = focus(events) else {
        return Vec::new();
    };
    let involved = involved(events);
    let count = |t: u8| {
        events[..at]
            .iter()
            .filter(|e| task_step(e) == Some(t))
            .count() as u32
    };
    let mut pairs: Vec<((u8, u32), (u8, u32))> = Vec::new();
    for &x in &named {
        for &y in involved.iter().filter(|&&y| y != x && y < IRQ_CONTEXT) {
            for p in [
                ((x, count(x)), (y, count(y))),
                ((y, count(y)), (x, count(x))),
            ] {
                if !pairs.contains(&p) {
                    pairs.push(p);
                }
            }
        }
    }
    let mut out: Vec<Vec<Breakpoint>> = Vec::new();
    let mut push = |schedule: Vec<Breakpoint>| {
        if !out.contains(&schedule) {
            out.push(schedule);
        }
    };
    for d in 0..3u32 {
        for &((a, n), (b, _)) in &pairs {
            if let Some(n) = n.checked_sub(d) {
                push(vec![Schedule::switch(a, n, b)]);
            }
        }
    }
    // The recorded run's own last switches before the event, closest first: alone, then
    // two in a row (a task let in, then sent back).
    let near: Vec<Breakpoint> = entries
        .iter()
        .rev()
        .filter(|e| e.at <= at)
        .take(NEAR)
        .map(|e| e.bp)
        .collect();
    for &bp in &near {
        push(vec![bp]);
    }
    for w in near.windows(2) {
        push(vec![w[1], w[0]]);
    }
    for d in 0..3u32 {
        for &((a, n), (b, m)) in &pairs {
            if let Some(n) = n.checked_sub(d) {
                push(vec![Schedule::switch(a, n, b), Schedule::switch(b, m, a)]);
            }
        }
    }
    out
}

/// How many of the recorded run's last switches before the finding are tried.
const NEAR: usize = 8;

/// The contexts the finding involves: those it names, and those that touch a location or
/// lock one of them touches (every task, when the events name none).
fn involved(events: &[Event]) -> BTreeSet<u8> {
    let named = named(events);
    let mut touched: BTreeMap<u32, BTreeSet<u8>> = BTreeMap::new();
    for e in events {
        if let (Some(a), Some(t)) = (location_of(e), e.task()) {
            touched.entry(a).or_default().insert(t);
        }
    }
    let mut out = named.clone();
    for contexts in touched.values() {
        if contexts.iter().any(|c| named.contains(c)) {
            out.extend(contexts.iter().copied());
        }
    }
    if out.is_empty() {
        out.extend(events.iter().filter_map(task_step));
    }
    out
}

/// Single-entry schedules, most promising first: for each task `a` the finding involves and
/// each of its operation counts `n` in the recorded run, a switch to each other involved
/// task, then a firing of each source the run fired or the finding involves; then such a
/// firing nested in each handler the finding involves, at each of its operation counts.
pub fn one_entry_schedules(events: &[Event]) -> Vec<Breakpoint> {
    let involved = involved(events);
    let tasks: Vec<u8> = involved
        .iter()
        .copied()
        .filter(|&c| c < IRQ_CONTEXT)
        .collect();
    let mut sources: BTreeSet<u8> = involved
        .iter()
        .filter(|&&c| c >= IRQ_CONTEXT)
        .map(|&c| c - IRQ_CONTEXT)
        .collect();
    for e in events {
        if let Event::IrqEnter { i, .. } = *e {
            sources.insert(i);
        }
    }
    let mut ops: BTreeMap<u8, u32> = BTreeMap::new();
    for t in events.iter().filter_map(task_step) {
        *ops.entry(t).or_default() += 1;
    }
    let mut out = Vec::new();
    for &a in &tasks {
        for n in 0..=ops.get(&a).copied().unwrap_or(0) {
            for &b in tasks.iter().filter(|&&b| b != a) {
                out.push(Schedule::switch(a, n, b));
            }
            for &i in &sources {
                out.push(Schedule::fire(a, n, i));
            }
        }
    }
    // A framework's tasks are handlers: a firing nested in one the finding involves, at
    // each of its operation counts.
    let mut handler_ops: BTreeMap<u8, u32> = BTreeMap::new();
    for h in events.iter().filter_map(counted) {
        *handler_ops.entry(h).or_default() += u32::from(h >= IRQ_CONTEXT);
    }
    for h in involved.iter().copied().filter(|&c| c >= IRQ_CONTEXT) {
        for n in 0..handler_ops.get(&h).copied().unwrap_or(0) {
            for &i in sources.iter().filter(|&&i| IRQ_CONTEXT + i != h) {
                out.push(Schedule::fire(h, n, i));
            }
        }
    }
    out
}

/// Two-entry schedules: each switch of [`one_entry_schedules`] from `a` to `b`, followed by
/// a switch back from `b` to `a` at each of `b`'s operation counts (the other task's
/// operations landing inside `a`'s, when `b` would otherwise only run after `a`).
pub fn there_and_back_schedules(events: &[Event]) -> Vec<[Breakpoint; 2]> {
    let mut ops: BTreeMap<u8, u32> = BTreeMap::new();
    for t in events.iter().filter_map(task_step) {
        *ops.entry(t).or_default() += 1;
    }
    let mut out = Vec::new();
    for first in one_entry_schedules(events) {
        let Some((role, a, _, b)) = Schedule::entry(&first) else {
            continue;
        };
        if role != jostle_kernel::targets::role::SWITCH {
            continue;
        }
        for m in 0..=ops.get(&b).copied().unwrap_or(0) {
            out.push([first, Schedule::switch(b, m, a)]);
        }
    }
    out
}

/// The entries of a schedule that switch between, or fire at, tasks the finding involves.
pub fn entries_between_involved(events: &[Event], entries: &[Entry]) -> Vec<Entry> {
    let involved = involved(events);
    entries
        .iter()
        .copied()
        .filter(|e| {
            Schedule::entry(&e.bp).is_some_and(|(role, a, _, x)| {
                involved.contains(&a)
                    && (role != jostle_kernel::targets::role::SWITCH || involved.contains(&x))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_involved_tasks_are_the_named_ones_and_those_sharing_their_data() {
        let (s, d, n1, n2, l) = (1, 100, 200, 201, 9);
        let events = [
            Event::Write { t: 1, s, a: n1 },
            Event::Write { t: 2, s, a: n2 },
            Event::Acquire { t: 2, s, l, c: l },
            Event::Write { t: 3, s, a: d },
            Event::Read { t: 4, s, a: d },
            Event::Acquire {
                t: 4,
                s,
                l: 77,
                c: 77,
            },
            Event::TaskPanic { t: 4, s },
        ];
        // 4 panicked; 3 wrote what it read; 1 and 2 kept to their own data.
        assert_eq!(
            involved(&events).into_iter().collect::<Vec<_>>(),
            vec![3, 4]
        );
        let schedules = one_entry_schedules(&events);
        assert!(schedules.contains(&Schedule::switch(4, 1, 3)));
        assert!(!schedules.iter().any(|bp| {
            Schedule::entry(bp).is_some_and(|(_, a, _, x)| a == 1 || a == 2 || x == 1 || x == 2)
        }));
    }
}
