//! Bookkeeping: the progress snapshot (phase, runs done and planned, bug counts).

use super::{Campaign, Status};
use std::sync::atomic::Ordering;

impl Campaign<'_> {
    /// Names what runs now.
    pub(super) fn set_phase(&self, phase: &str) {
        *self.phase.lock().unwrap_or_else(|p| p.into_inner()) = phase.to_owned();
    }

    /// The progress snapshot.
    pub fn status(&self) -> Status {
        Status {
            phase: self.phase.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            runs: self.runs_done.load(Ordering::SeqCst),
            planned: self.planned.load(Ordering::SeqCst),
            predicted: self.counts[0].load(Ordering::SeqCst),
            confirmed: self.counts[1].load(Ordering::SeqCst),
            harmful: self.counts[2].load(Ordering::SeqCst),
            failures: self.counts[3].load(Ordering::SeqCst),
            elapsed: self.started.elapsed(),
        }
    }
}
