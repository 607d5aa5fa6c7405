//! The output of the race detectors: racing site pairs.

use serde::{Deserialize, Serialize};

use crate::hash::FxHashMap;

/// Read or write (an `Update` is a write).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessKind {
    /// A read.
    Read,
    /// A write or read-modify-write.
    Write,
}

/// One side of a race witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RaceAccess {
    /// The site.
    pub site: u32,
    /// The task.
    pub task: u8,
    /// Read or write.
    pub kind: AccessKind,
    /// Index of the access event in the trace.
    pub event: u64,
}

/// A racing pair of sites (unordered: `first.site <= second.site`), with the memory
/// locations it raced on and one witnessing pair of accesses (the first found).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RacePair {
    /// The witness access at the smaller site (the earlier event when both sites are equal).
    pub first: RaceAccess,
    /// The witness access at the other site.
    pub second: RaceAccess,
    /// Every location the two sites raced on, sorted.
    pub locations: Vec<u32>,
}

impl RacePair {
    /// The normalized site pair.
    pub fn sites(&self) -> (u32, u32) {
        (self.first.site, self.second.site)
    }
}

/// Collects race reports, deduplicated by site pair.
#[derive(Clone, Debug, Default)]
pub(crate) struct PairSet {
    index: FxHashMap<(u32, u32), usize>,
    pairs: Vec<RacePair>,
}

impl PairSet {
    /// Records a race between access `a` (earlier in the trace) and `b` on `location`.
    pub fn record(&mut self, a: RaceAccess, b: RaceAccess, location: u32) {
        let (first, second) = if (a.site, a.event) <= (b.site, b.event) {
            (a, b)
        } else {
            (b, a)
        };
        let key = (first.site, second.site);
        match self.index.get(&key) {
            Some(&i) => {
                let locs = &mut self.pairs[i].locations;
                if let Err(p) = locs.binary_search(&location) {
                    locs.insert(p, location);
                }
            }
            None => {
                self.index.insert(key, self.pairs.len());
                self.pairs.push(RacePair {
                    first,
                    second,
                    locations: vec![location],
                });
            }
        }
    }

    /// The pairs, sorted by site pair.
    pub fn into_sorted(self) -> Vec<RacePair> {
        let mut v = self.pairs;
        v.sort_by_key(RacePair::sites);
        v
    }

    /// The pairs found so far, sorted by site pair.
    pub fn sorted(&self) -> Vec<RacePair> {
        self.clone().into_sorted()
    }

    /// Approximate heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.index.capacity() * 16
            + self.pairs.capacity() * size_of::<RacePair>()
            + self
                .pairs
                .iter()
                .map(|p| p.locations.capacity() * 4)
                .sum::<usize>()
    }
}
