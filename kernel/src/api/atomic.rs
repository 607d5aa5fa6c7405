use super::caller_site;
use crate::op::Op;
use crate::port;

/// Runs `f` as an atomic block (the `atomic { … }` of atomfuzzer-fse08): entry and exit are
/// scheduling points and events; the block's intended atomicity is what AtomFuzzer checks.
#[track_caller]
pub fn atomic<R>(f: impl FnOnce() -> R) -> R {
    let block = AtomicBlock::enter_at(caller_site());
    let r = f();
    drop(block);
    r
}

/// An atomic block as a guard: entered by [`AtomicBlock::enter`], left when dropped.
pub struct AtomicBlock {
    site: u32,
}

impl AtomicBlock {
    /// Enters an atomic block at the caller's site.
    #[track_caller]
    pub fn enter() -> Self {
        Self::enter_at(caller_site())
    }

    fn enter_at(s: u32) -> Self {
        port::point(Op::AtomicEnter { s });
        AtomicBlock { site: s }
    }
}

impl Drop for AtomicBlock {
    fn drop(&mut self) {
        port::point(Op::AtomicExit { s: self.site });
    }
}
