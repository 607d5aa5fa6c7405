//! Which analyses [`crate::predict`] runs, and their parameters.

use serde::{Deserialize, Serialize};

/// Options of [`crate::predict`]. Every field has a default (`#[serde(default)]`), so a JSON
/// object with only some fields is accepted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    /// Identifies the trace in witnesses (e.g. the run's index in the campaign), so that
    /// event indices stay meaningful after merging predictions of several traces.
    pub trace_id: u32,
    /// Hybrid race detection (lockset + happens-before without lock edges). Default on.
    pub hybrid: bool,
    /// Precise happens-before race detection (FastTrack). Default on.
    pub happens_before: bool,
    /// Precise lockset race detection (no happens-before filter: noisier). Default off.
    pub precise_lockset: bool,
    /// Eraser: marks race candidates on locations Eraser warns about. Default on.
    pub eraser: bool,
    /// Mixed atomic/plain accesses of one location as race candidates (analysis
    /// `mixed_atomic`). Default on.
    pub mixed_atomic: bool,
    /// AtomFuzzer atomicity pattern. Default on.
    pub atomicity: bool,
    /// Atomizer heuristic: outermost lock critical sections are atomic blocks when the trace
    /// has no `AtomicEnter`. Default on (it only applies to traces without annotations).
    pub atomizer_heuristic: bool,
    /// Single-variable atomicity violations (AVIO patterns, candidates of kind
    /// `access_atomicity`). Default on.
    pub access_atomicity: bool,
    /// iGoodlock deadlock prediction. Default on.
    pub deadlock: bool,
    /// Longest deadlock cycle searched (`k`). Default 4.
    pub max_cycle_len: usize,
    /// DrFinder may-trigger relations. Default on.
    pub may_trigger: bool,
    /// DrFinder depth `d`. Default 12.
    pub may_trigger_depth: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            trace_id: 0,
            hybrid: true,
            happens_before: true,
            precise_lockset: false,
            eraser: true,
            mixed_atomic: true,
            atomicity: true,
            atomizer_heuristic: true,
            access_atomicity: true,
            deadlock: true,
            max_cycle_len: 4,
            may_trigger: true,
            may_trigger_depth: crate::drfinder::DEFAULT_DEPTH,
        }
    }
}
