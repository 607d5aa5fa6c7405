//! Locks held by each task, as interned locksets.
//!
//! Lock identities are interned to dense indices in order of first appearance; a lockset is a
//! sorted set of indices interned to a dense id (id 0 is the empty set), so an access can be
//! stored with a 4-byte lockset id. Each set also carries a 64-bit mask (bit `i % 64` for
//! each lock index `i`): disjoint masks prove disjoint sets, and when every index is below 64
//! (`exact`) intersecting masks prove a common lock, so the common case needs no set walk.
//! Acquire and release go through a transition cache `(set, lock, add?) → set`.
//!
//! The critical section (`CsEnter`/`CsExit`) is the lock [`CS_LOCK`] of class [`CS_CLASS`].
//! A task's locks are released when it ends. Re-acquiring a lock the task holds (re-entrant
//! locks) only counts; the lock leaves the set when the count returns to zero.

use jostle_kernel::event::Event;

use crate::hash::FxHashMap;
use crate::vc::{CS_CLASS, CS_LOCK};

/// An interned lockset id (0 is the empty set).
pub type SetId = u32;

/// A lockset and its mask.
#[derive(Clone, Debug)]
pub(crate) struct SetInfo {
    /// Lock indices, sorted.
    pub locks: Box<[u32]>,
    /// Bit `i % 64` per lock index `i`.
    pub mask: u64,
    /// Every index is below 64, so the mask is the set.
    pub exact: bool,
}

impl SetInfo {
    fn new(locks: Box<[u32]>) -> Self {
        let mask = locks.iter().fold(0u64, |m, &i| m | 1 << (i % 64));
        let exact = locks.iter().all(|&i| i < 64);
        Self { locks, mask, exact }
    }
}

/// A task's lock state: held locks with re-entry counts, and the interned current set.
#[derive(Clone, Debug, Default)]
pub(crate) struct TaskLocks {
    /// (lock index, count, acquire site), in acquisition order.
    pub held: Vec<(u32, u32, u32)>,
    /// The current lockset.
    pub set: SetId,
    /// The current lockset's mask.
    pub mask: u64,
    /// The current lockset's `exact` flag.
    pub exact: bool,
}

/// What a lock event did to a task's lockset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LockChange {
    /// The event is not a lock event, or changed nothing (re-entry, release of a lock not held).
    None,
    /// The lock (index) entered the task's set.
    Acquired(u32),
    /// The lock (index) left the task's set.
    Released(u32),
}

/// Interned locks and locksets, and every task's held locks.
#[derive(Clone, Debug)]
pub(crate) struct LockState {
    lock_index: FxHashMap<u32, u32>,
    /// (identity, class) per lock index.
    locks: Vec<(u32, u32)>,
    sets: Vec<SetInfo>,
    set_index: FxHashMap<Box<[u32]>, SetId>,
    trans: FxHashMap<(SetId, u32, bool), SetId>,
    tasks: Vec<TaskLocks>,
}

impl Default for LockState {
    fn default() -> Self {
        Self::new()
    }
}

impl LockState {
    pub fn new() -> Self {
        let empty = SetInfo::new(Box::new([]));
        let mut set_index = FxHashMap::default();
        set_index.insert(empty.locks.clone(), 0);
        Self {
            lock_index: FxHashMap::default(),
            locks: Vec::new(),
            sets: vec![empty],
            set_index,
            trans: FxHashMap::default(),
            tasks: vec![
                TaskLocks {
                    exact: true,
                    ..TaskLocks::default()
                };
                256
            ],
        }
    }

    /// Applies a lock event (acquire, release, critical section, task exit).
    #[inline]
    pub fn on_event(&mut self, ev: &Event) -> LockChange {
        match *ev {
            Event::Acquire { t, s, l, c } => self.acquire(t, l, c, s),
            Event::Release { t, l, .. } => self.release(t, l),
            Event::CsEnter { t } => self.acquire(t, CS_LOCK, CS_CLASS, 0),
            Event::CsExit { t } => self.release(t, CS_LOCK),
            Event::TaskExit { t } => {
                self.release_all(t);
                LockChange::None
            }
            _ => LockChange::None,
        }
    }

    /// The index of lock `l`, interning it (with class `c`) on first sight.
    pub fn intern(&mut self, l: u32, c: u32) -> u32 {
        let next = self.locks.len() as u32;
        let idx = *self.lock_index.entry(l).or_insert(next);
        if idx == next {
            self.locks.push((l, c));
        }
        idx
    }

    /// (identity, class) of lock index `i`.
    pub fn lock(&self, i: u32) -> (u32, u32) {
        self.locks[i as usize]
    }

    /// Task `t`'s state.
    #[inline]
    pub fn task(&self, t: u8) -> &TaskLocks {
        &self.tasks[t as usize]
    }

    /// The set with id `id`.
    #[inline]
    pub fn set(&self, id: SetId) -> &SetInfo {
        &self.sets[id as usize]
    }

    fn acquire(&mut self, t: u8, l: u32, c: u32, site: u32) -> LockChange {
        let idx = self.intern(l, c);
        let task = &mut self.tasks[t as usize];
        if let Some(h) = task.held.iter_mut().find(|h| h.0 == idx) {
            h.1 += 1;
            return LockChange::None;
        }
        task.held.push((idx, 1, site));
        self.step(t, idx, true);
        LockChange::Acquired(idx)
    }

    fn release(&mut self, t: u8, l: u32) -> LockChange {
        let Some(&idx) = self.lock_index.get(&l) else {
            return LockChange::None;
        };
        let task = &mut self.tasks[t as usize];
        let Some(pos) = task.held.iter().rposition(|h| h.0 == idx) else {
            return LockChange::None;
        };
        task.held[pos].1 -= 1;
        if task.held[pos].1 > 0 {
            return LockChange::None;
        }
        task.held.remove(pos);
        self.step(t, idx, false);
        LockChange::Released(idx)
    }

    /// Releases every lock task `t` holds (the task ended).
    pub fn release_all(&mut self, t: u8) {
        let task = &mut self.tasks[t as usize];
        task.held.clear();
        task.set = 0;
        task.mask = 0;
        task.exact = true;
    }

    /// Moves task `t` from its set to the set with/without lock `idx`.
    fn step(&mut self, t: u8, idx: u32, add: bool) {
        let from = self.tasks[t as usize].set;
        let to = match self.trans.get(&(from, idx, add)) {
            Some(&to) => to,
            None => {
                let mut locks: Vec<u32> = self.sets[from as usize].locks.to_vec();
                match (locks.binary_search(&idx), add) {
                    (Err(p), true) => locks.insert(p, idx),
                    (Ok(p), false) => {
                        locks.remove(p);
                    }
                    _ => {}
                }
                let to = self.intern_set(locks.into_boxed_slice());
                self.trans.insert((from, idx, add), to);
                to
            }
        };
        let info = &self.sets[to as usize];
        let task = &mut self.tasks[t as usize];
        task.set = to;
        task.mask = info.mask;
        task.exact = info.exact;
    }

    /// Interns a sorted set of lock indices.
    pub fn intern_set(&mut self, locks: Box<[u32]>) -> SetId {
        if let Some(&id) = self.set_index.get(&locks) {
            return id;
        }
        let id = self.sets.len() as SetId;
        self.sets.push(SetInfo::new(locks.clone()));
        self.set_index.insert(locks, id);
        id
    }

    /// Are sets `a` and `b` (with their masks and exact flags) disjoint?
    #[inline]
    pub fn disjoint(&self, a: (SetId, u64, bool), b: (SetId, u64, bool)) -> bool {
        if a.1 & b.1 == 0 {
            return true;
        }
        if a.2 && b.2 {
            return false;
        }
        self.disjoint_slow(a.0, b.0)
    }

    #[cold]
    fn disjoint_slow(&self, a: SetId, b: SetId) -> bool {
        let (x, y) = (&self.set(a).locks, &self.set(b).locks);
        let (mut i, mut j) = (0, 0);
        while i < x.len() && j < y.len() {
            match x[i].cmp(&y[j]) {
                core::cmp::Ordering::Less => i += 1,
                core::cmp::Ordering::Greater => j += 1,
                core::cmp::Ordering::Equal => return false,
            }
        }
        true
    }

    /// The intersection of two sets, interned.
    pub fn intersect(&mut self, a: SetId, b: SetId) -> SetId {
        if a == b {
            return a;
        }
        let y = &self.set(b).locks;
        let common: Vec<u32> = self
            .set(a)
            .locks
            .iter()
            .copied()
            .filter(|i| y.binary_search(i).is_ok())
            .collect();
        self.intern_set(common.into_boxed_slice())
    }

    /// Lock identities of a set, in index order.
    #[cfg(test)]
    pub fn identities(&self, id: SetId) -> Vec<u32> {
        self.set(id).locks.iter().map(|&i| self.lock(i).0).collect()
    }

    /// Approximate heap bytes.
    pub fn heap_bytes(&self) -> usize {
        let sets: usize = self
            .sets
            .iter()
            .map(|s| 2 * s.locks.len() * 4 + size_of::<SetInfo>() + 16 + size_of::<Box<[u32]>>())
            .sum();
        self.lock_index.capacity() * 8
            + self.locks.capacity() * 8
            + sets
            + self.trans.capacity() * 16
            + self.tasks.capacity() * size_of::<TaskLocks>()
            + self
                .tasks
                .iter()
                .map(|t| t.held.capacity() * 12)
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_follow_acquire_and_release_and_reentry() {
        let mut s = LockState::new();
        assert_eq!(
            s.on_event(&Event::Acquire {
                t: 1,
                s: 1,
                l: 10,
                c: 0
            }),
            LockChange::Acquired(0)
        );
        s.on_event(&Event::Acquire {
            t: 1,
            s: 2,
            l: 20,
            c: 0,
        });
        assert_eq!(s.identities(s.task(1).set), vec![10, 20]);
        // Re-entry only counts.
        assert_eq!(
            s.on_event(&Event::Acquire {
                t: 1,
                s: 3,
                l: 10,
                c: 0
            }),
            LockChange::None
        );
        assert_eq!(
            s.on_event(&Event::Release { t: 1, s: 4, l: 10 }),
            LockChange::None
        );
        assert_eq!(
            s.on_event(&Event::Release { t: 1, s: 5, l: 10 }),
            LockChange::Released(0)
        );
        assert_eq!(s.identities(s.task(1).set), vec![20]);
        s.on_event(&Event::CsEnter { t: 2 });
        assert_eq!(s.identities(s.task(2).set), vec![CS_LOCK]);
        s.on_event(&Event::TaskExit { t: 2 });
        assert_eq!(s.task(2).set, 0);
    }

    #[test]
    fn disjointness_beyond_64_locks() {
        let mut s = LockState::new();
        for l in 0..70 {
            s.intern(l, 0);
        }
        let a = s.intern_set(vec![3, 69].into_boxed_slice());
        let b = s.intern_set(vec![5].into_boxed_slice()); // 69 % 64 == 5: masks collide
        let c = s.intern_set(vec![69].into_boxed_slice());
        let key = |s: &LockState, id| (id, s.set(id).mask, s.set(id).exact);
        assert!(s.disjoint(key(&s, a), key(&s, b)));
        assert!(!s.disjoint(key(&s, a), key(&s, c)));
        assert_eq!(s.intersect(a, c), c);
        assert_eq!(s.intersect(b, c), 0);
    }
}
