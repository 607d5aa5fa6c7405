//! DrFinder may-trigger relations (drfinder-fse15 §4.3, Algorithm 1 *MTCollector*).
//!
//! Each task keeps its stack of instrumented frames (`FrameEnter` pushes the frame's site,
//! `FrameExit` pops, lines 8–11). At each lock acquire, every frame among the top `d` of the
//! acquiring task's stack may trigger an acquire of that lock's class: `MTR := MTR ∪
//! {mt(f, type(o))}` (lines 12–16). The critical section counts as an acquire of class
//! [`crate::CS_CLASS`]. The result drives the DrFinder scheduler of the next run (§4.4,
//! the feedback loop).

use serde::{Deserialize, Serialize};

use jostle_kernel::event::Event;

use crate::hash::FxHashSet;
use crate::vc::CS_CLASS;

/// `mt(frame, class)`: the frame entered at site `frame` may (within depth `d`) trigger an
/// acquire of a lock of class `class`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MayTrigger {
    /// Site of the frame (its `FrameEnter`).
    pub frame: u32,
    /// Lock class.
    pub class: u32,
}

/// Default depth `d`.
pub const DEFAULT_DEPTH: usize = 12;

/// The may-trigger relations of `trace` with depth `depth`, sorted and deduplicated.
pub fn collect(trace: &[Event], depth: usize) -> Vec<MayTrigger> {
    let mut stacks: Vec<Vec<u32>> = vec![Vec::new(); 256];
    let mut mtr = FxHashSet::default();
    for ev in trace {
        let (t, class) = match *ev {
            Event::FrameEnter { t, s } => {
                stacks[t as usize].push(s);
                continue;
            }
            Event::FrameExit { t, s } => {
                // Pop the frame entered at `s` (and any frame left without its exit above it).
                let st = &mut stacks[t as usize];
                if let Some(p) = st.iter().rposition(|&f| f == s) {
                    st.truncate(p);
                }
                continue;
            }
            Event::TaskExit { t } => {
                stacks[t as usize].clear();
                continue;
            }
            Event::Acquire { t, c, .. } => (t, c),
            Event::CsEnter { t } => (t, CS_CLASS),
            _ => continue,
        };
        for &frame in stacks[t as usize].iter().rev().take(depth) {
            mtr.insert(MayTrigger { frame, class });
        }
    }
    let mut v: Vec<MayTrigger> = mtr.into_iter().collect();
    v.sort_unstable();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_limits_the_frames() {
        let trace = [
            Event::FrameEnter { t: 1, s: 100 },
            Event::FrameEnter { t: 1, s: 200 },
            Event::Acquire {
                t: 1,
                s: 5,
                l: 9,
                c: 7,
            },
            Event::Release { t: 1, s: 6, l: 9 },
            Event::FrameExit { t: 1, s: 200 },
            Event::CsEnter { t: 1 },
            Event::CsExit { t: 1 },
            Event::FrameExit { t: 1, s: 100 },
            Event::Acquire {
                t: 1,
                s: 5,
                l: 9,
                c: 8,
            },
        ];
        let mt = |frame, class| MayTrigger { frame, class };
        assert_eq!(
            collect(&trace, 12),
            vec![mt(100, 7), mt(100, CS_CLASS), mt(200, 7)]
        );
        assert_eq!(collect(&trace, 1), vec![mt(100, CS_CLASS), mt(200, 7)]);
        assert!(collect(&trace, 0).is_empty());
    }
}
