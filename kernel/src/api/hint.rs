//! `core::hint` for firmware under test.

/// A spin-wait hint: a scheduling point (a yield), so a spinning task lets the others run,
/// and a strategy that watches spins (PCT) sees one.
#[track_caller]
pub fn spin_loop() {
    super::task::yield_now();
}
