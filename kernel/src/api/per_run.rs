//! A test's own per-run state, outside the instrumentation.

use super::run_cell::RunCell;

/// A value every run starts from afresh, with no scheduling point and no event: a test's
/// own bookkeeping that the checker should not see (an object pool standing for a heap, an
/// oracle's count of items, a mode chosen from `arg`).
///
/// On the device every run starts from a reset, so a plain `static` would do. The host port
/// makes many runs in one process, where a `static` of `core::cell` or `core::sync::atomic`
/// types would carry one run's value into the next and make a run depend on the runs before
/// it (replays would then disagree). A `PerRun` goes back to its initial value at its first
/// use in each run, as the instrumented primitives do.
///
/// Like `core::cell::Cell`, it hands out copies, never references, so no reference can
/// outlive a scheduling point.
pub struct PerRun<T: Copy> {
    value: RunCell<T>,
}

// SAFETY: the kernel runs exactly one task at a time (cooperative on the device, coroutines
// on one thread on the host port), and no access spans a scheduling point.
unsafe impl<T: Copy + Send> Sync for PerRun<T> {}

impl<T: Copy> PerRun<T> {
    /// A cell that holds `value` at the start of every run.
    pub const fn new(value: T) -> Self {
        PerRun {
            value: RunCell::new(value),
        }
    }

    /// This run's value.
    pub fn get(&self) -> T {
        // SAFETY: see the `Sync` impl: nothing else runs during the copy.
        unsafe { *self.value.get() }
    }

    /// Sets this run's value.
    pub fn set(&self, value: T) {
        // SAFETY: as in `get`.
        unsafe { *self.value.get() = value }
    }

    /// Sets this run's value and returns the previous one.
    pub fn replace(&self, value: T) -> T {
        let old = self.get();
        self.set(value);
        old
    }
}
