//! DeadlockFuzzer (Joshi, Park, Sen, Naik, PLDI'09): given a predicted lock-order cycle,
//! pause a task just before an acquire that matches a cycle component while it holds the
//! component's locks (matched by their acquire sites, since lock addresses differ between
//! ports but sites do not). When every party is paused, thrashing releases them one by one
//! into the lock they want and the cycle closes: the kernel's deadlock check reports
//! `DeadlockConfirmed` with the cycle.

use super::{Check, Strategy, View};
use crate::op::Op;
use crate::rng::SchedRng;
use crate::targets::{role, role_of};
use crate::task::TaskId;

/// The DeadlockFuzzer strategy; its cycle is the run's [`role::ACQUIRE`] and
/// [`role::CONTEXT`] breakpoints (component index in the low byte of `aux`).
#[derive(Clone, Debug, Default)]
pub struct DeadlockFuzzer;

impl Strategy for DeadlockFuzzer {
    const TRACKS: bool = true;

    fn new(_params: [u32; 4], _rng: &mut SchedRng) -> Self {
        DeadlockFuzzer
    }

    fn checks(&self, op: &Op) -> bool {
        super::is_acquire(op)
    }

    fn check(&mut self, t: TaskId, op: &Op, view: &View<'_>, _rng: &mut SchedRng) -> Check {
        let Op::Acquire { s, .. } = *op else {
            return Check::Execute;
        };
        let held = view.tracker.tasks[t as usize].held_sites;
        if held.as_slice().is_empty() {
            return Check::Execute;
        }
        let bps = view.targets.breakpoints();
        // A component matches when `s` is its acquire and every context site it names is
        // the acquire site of a lock `t` holds.
        let matches = bps.iter().any(|b| {
            role_of(b.aux) == role::ACQUIRE
                && b.site == s
                && bps
                    .iter()
                    .filter(|c| role_of(c.aux) == role::CONTEXT && c.aux as u8 == b.aux as u8)
                    .all(|c| held.contains(c.site))
        });
        if matches {
            Check::Postpone
        } else {
            Check::Execute
        }
    }
}
