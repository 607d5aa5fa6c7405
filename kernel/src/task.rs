//! Tasks and sets of tasks: the vocabulary the scheduler, the strategies and the targets
//! share. This module depends on nothing else in the kernel.
//!
//! The task table's size is chosen by the firmware through a cargo feature of
//! `jostle-kernel`: 8 tasks by default, `tasks-16`, `tasks-32`, `tasks-64` or `tasks-128`
//! (the largest enabled feature wins). A [`TaskSet`] is one machine word up to 32 tasks, so
//! the scheduling point costs the same at 8 and at 32.

/// A task's index in the task table (task 0 is the main task).
pub type TaskId = u8;

/// Most tasks alive in one run, task 0 included (see the module doc to raise it).
#[cfg(feature = "tasks-128")]
pub const MAX_TASKS: usize = 128;
/// Most tasks alive in one run, task 0 included (see the module doc to raise it).
#[cfg(all(feature = "tasks-64", not(feature = "tasks-128")))]
pub const MAX_TASKS: usize = 64;
/// Most tasks alive in one run, task 0 included (see the module doc to raise it).
#[cfg(all(
    feature = "tasks-32",
    not(any(feature = "tasks-64", feature = "tasks-128"))
))]
pub const MAX_TASKS: usize = 32;
/// Most tasks alive in one run, task 0 included (see the module doc to raise it).
#[cfg(all(
    feature = "tasks-16",
    not(any(feature = "tasks-32", feature = "tasks-64", feature = "tasks-128"))
))]
pub const MAX_TASKS: usize = 16;
/// Most tasks alive in one run, task 0 included (see the module doc to raise it).
#[cfg(not(any(
    feature = "tasks-16",
    feature = "tasks-32",
    feature = "tasks-64",
    feature = "tasks-128"
)))]
pub const MAX_TASKS: usize = 8;

/// The word behind a [`TaskSet`]: one bit per task.
#[cfg(feature = "tasks-128")]
pub type Bits = u128;
/// The word behind a [`TaskSet`]: one bit per task.
#[cfg(all(feature = "tasks-64", not(feature = "tasks-128")))]
pub type Bits = u64;
/// The word behind a [`TaskSet`]: one bit per task.
#[cfg(not(any(feature = "tasks-64", feature = "tasks-128")))]
pub type Bits = u32;

/// The cargo feature that raises the task limit above [`MAX_TASKS`] (the message of the
/// task-limit verdict names it), or `None` at the largest limit.
pub const NEXT_TASKS_FEATURE: Option<&str> = match MAX_TASKS {
    8 => Some("tasks-16"),
    16 => Some("tasks-32"),
    32 => Some("tasks-64"),
    64 => Some("tasks-128"),
    _ => None,
};

/// A set of tasks, one bit per task id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskSet(pub Bits);

impl TaskSet {
    /// No task.
    pub const EMPTY: TaskSet = TaskSet(0);

    /// The set holding only `t`.
    #[inline(always)]
    pub fn one(t: TaskId) -> TaskSet {
        TaskSet(1 << t)
    }

    /// Adds `t`.
    #[inline(always)]
    pub fn insert(&mut self, t: TaskId) {
        self.0 |= 1 << t;
    }

    /// Removes `t`.
    #[inline(always)]
    pub fn remove(&mut self, t: TaskId) {
        self.0 &= !(1 << t);
    }

    /// Is `t` in the set?
    #[inline(always)]
    pub fn contains(self, t: TaskId) -> bool {
        self.0 & (1 << t) != 0
    }

    /// Is the set empty?
    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Number of tasks.
    #[inline(always)]
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// The `n`-th task in id order (`n < len()`).
    #[inline]
    pub fn nth(self, n: u32) -> TaskId {
        let mut bits = self.0;
        for _ in 0..n {
            bits &= bits - 1;
        }
        bits.trailing_zeros() as TaskId
    }

    /// The tasks in id order.
    pub fn iter(self) -> impl Iterator<Item = TaskId> {
        let mut bits = self.0;
        core::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let t = bits.trailing_zeros() as TaskId;
            bits &= bits - 1;
            Some(t)
        })
    }

    /// Tasks in both sets.
    #[inline(always)]
    pub fn and(self, other: TaskSet) -> TaskSet {
        TaskSet(self.0 & other.0)
    }

    /// Tasks in either set.
    #[inline(always)]
    pub fn or(self, other: TaskSet) -> TaskSet {
        TaskSet(self.0 | other.0)
    }

    /// Tasks in `self` but not in `other`.
    #[inline(always)]
    pub fn minus(self, other: TaskSet) -> TaskSet {
        TaskSet(self.0 & !other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_hold_every_task_id_up_to_the_limit() {
        let mut s = TaskSet::EMPTY;
        for t in 0..MAX_TASKS as TaskId {
            s.insert(t);
        }
        assert_eq!(s.len(), MAX_TASKS as u32);
        assert_eq!(s.nth(MAX_TASKS as u32 - 1), MAX_TASKS as TaskId - 1);
        assert_eq!(s.iter().count(), MAX_TASKS);
        s.remove(3);
        assert!(!s.contains(3) && s.contains(4));
        assert_eq!(s.nth(3), 4);
    }
}
