//! Redundant writes: a race between two sites that only write, and that wrote one same value
//! in the trace, leaves memory the same in either order. Narayanasamy et al. (PLDI 2007,
//! "Automatically classifying benign and harmful data races using replay analysis") found
//! such "redundant write" races among the commonest benign ones, so Phase II tries them after
//! the other candidates ([`crate::Candidate::redundant_writes`]).
//!
//! The values come from the trace's [`Event::Value`] events (a value follows its access, from
//! the same task). A site that also reads, or one of whose writes has no traced value (a type
//! wider than 32 bits), tells nothing: its races are never called redundant.

use std::collections::BTreeSet;

use jostle_kernel::event::Event;

use crate::hash::FxHashMap;

/// Distinct values kept per site (and per race, [`crate::Evidence::written_values`]): two
/// are enough to know the writes differ.
pub(crate) const KEEP: usize = 2;

/// What one trace says of the values each site wrote.
#[derive(Debug, Default)]
pub struct WrittenValues {
    /// Per site: the values it wrote (at most [`KEEP`]), or `None` when the site read, updated,
    /// or wrote a value the trace does not show.
    sites: FxHashMap<u32, Option<BTreeSet<u32>>>,
}

impl WrittenValues {
    /// One pass over `trace`.
    pub fn of(trace: &[Event]) -> Self {
        let mut sites: FxHashMap<u32, Option<BTreeSet<u32>>> = FxHashMap::default();
        for (i, e) in trace.iter().enumerate() {
            let (site, value) = match *e {
                Event::Write { s, .. } => (s, Event::value_after(trace, i).map(|(v, _)| v)),
                Event::Read { s, .. }
                | Event::Update { s, .. }
                | Event::AtomicLoad { s, .. }
                | Event::AtomicStore { s, .. }
                | Event::AtomicRmw { s, .. }
                | Event::CasFailed { s, .. } => (s, None),
                _ => continue,
            };
            let entry = sites.entry(site).or_insert_with(|| Some(BTreeSet::new()));
            match (value, entry.as_mut()) {
                (None, _) => *entry = None,
                (Some(v), Some(values)) if values.len() < KEEP => {
                    values.insert(v);
                }
                _ => {}
            }
        }
        Self { sites }
    }

    /// The values sites `a` and `b` wrote together (at most two), when both only wrote and
    /// every one of their writes showed its value; empty otherwise.
    pub fn of_pair(&self, a: u32, b: u32) -> BTreeSet<u32> {
        match (self.sites.get(&a), self.sites.get(&b)) {
            (Some(Some(x)), Some(Some(y))) => x.union(y).copied().take(KEEP).collect(),
            _ => BTreeSet::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(t: u8, s: u32, v: Option<u32>) -> Vec<Event> {
        let mut e = vec![Event::Write { t, s, a: 100 }];
        if let Some(v) = v {
            e.push(Event::Value { t, v, k: 0 });
        }
        e
    }

    #[test]
    fn two_writes_of_one_value_are_redundant_and_of_two_values_are_not() {
        let trace: Vec<Event> = [write(1, 10, Some(1)), write(2, 10, Some(1))].concat();
        assert_eq!(WrittenValues::of(&trace).of_pair(10, 10), [1].into());
        let trace: Vec<Event> = [write(1, 10, Some(1)), write(2, 11, Some(2))].concat();
        assert_eq!(WrittenValues::of(&trace).of_pair(10, 11), [1, 2].into());
    }

    #[test]
    fn a_site_that_reads_or_hides_its_value_tells_nothing() {
        let mut trace: Vec<Event> = [write(1, 10, Some(1)), write(2, 11, None)].concat();
        assert!(WrittenValues::of(&trace).of_pair(10, 11).is_empty());
        trace.push(Event::Read {
            t: 2,
            s: 10,
            a: 100,
        });
        trace.extend(write(2, 11, Some(1)));
        assert!(WrittenValues::of(&trace).of_pair(10, 10).is_empty());
        // Another task's value right after a write is not that write's.
        let trace = vec![
            Event::Write {
                t: 1,
                s: 10,
                a: 100,
            },
            Event::Value { t: 2, v: 1, k: 0 },
        ];
        assert!(WrittenValues::of(&trace).of_pair(10, 10).is_empty());
    }
}
