#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod access_atomicity;
pub mod atomicity;
pub mod drfinder;
mod hash;
pub mod hb;
pub mod hybrid;
pub mod igoodlock;
pub mod irq;
mod locks;
pub mod lockset;
pub mod mixed;
pub mod options;
pub mod prediction;
pub mod race;
pub mod redundant;
pub mod vc;

pub use access_atomicity::{AccessPattern, AccessTriple};
pub use atomicity::AtomicityCandidate;
pub use drfinder::MayTrigger;
pub use hash::fnv1a64;
pub use hb::HbDetector;
pub use hybrid::{HybridDetector, PairDetector};
pub use igoodlock::{DeadlockComponent, DeadlockCycle, LockRef};
pub use irq::{
    IRQ_ALL_LOCK, MASK_CLASS, RESERVED_LOCKS, handler_lock, irq_lock, level_lock, prio_lock,
};
pub use lockset::{Eraser, EraserState, EraserWarning};
pub use options::Options;
pub use prediction::{
    Analysis, AtomicityPattern, Candidate, CandidateKind, CycleEvidence, Evidence, Prediction,
    SCHEMA_VERSION, TripleEvidence, Witness, candidate_id, ordered_candidate_id, predict,
};
pub use race::{AccessKind, RaceAccess, RacePair};
pub use vc::{CS_CLASS, CS_LOCK, Clocks, Edges, Epoch, VectorClock};
