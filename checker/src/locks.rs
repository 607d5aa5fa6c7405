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
//!
//! With [`LockState::with_masks`] (the lockset analyses), interrupt masks are locks too, with
//! the reserved identities of [`crate::irq`]: `IrqMask`/`PrioMask` acquire and release them
//! (a mask bit is not a counter: masking twice and unmasking once unmasks), `IrqEnter` gives
//! the handler context the member `HANDLER_LOCK(i, p)` for its implicit locks, `IrqExit`
//! releases everything the handler context holds. A set with any reserved member has mask
//! bit 63 and is never `exact`, so [`LockState::disjoint`] decides it on the slow path, where
//! masks are one-sided ([`IrqInfo::excluded`]); real locks use bits 0–62 (`index % 63`).

use jostle_kernel::event::Event;

use crate::hash::FxHashMap;
use crate::irq::{
    ALL_IRQS, IRQ_ALL_LOCK, IrqInfo, LockKind, MASK_CLASS, handler_lock, irq_lock, level_lock,
    prio_lock,
};
use crate::vc::{CS_CLASS, CS_LOCK};

/// Interrupt sources the kernel supports at most (`sched::irq::MAX_IRQS` with `irqs-32`):
/// enabling one source while all are masked leaves these others masked.
const MAX_IRQS: u8 = 32;

/// An interned lockset id (0 is the empty set).
pub type SetId = u32;

/// A lockset and its mask.
#[derive(Clone, Debug)]
pub(crate) struct SetInfo {
    /// Lock indices, sorted.
    pub locks: Box<[u32]>,
    /// Bit `i % 63` per real lock index `i`; bit 63 when the set has a reserved member
    /// (critical section, mask, handler).
    pub mask: u64,
    /// Every index is a real lock's, below 63, so the mask is the set.
    pub exact: bool,
}

/// Mask bit of the sets with a reserved member.
const IRQ_BIT: u64 = 1 << 63;

impl SetInfo {
    /// The set of lock indices `locks`, whose (identity, class) are in `ids`, and what it
    /// says about interrupts.
    fn new(locks: Box<[u32]>, ids: &[(u32, u32)]) -> (Self, IrqInfo) {
        let mut mask = 0u64;
        let mut exact = true;
        let mut irq = IrqInfo::default();
        for &i in locks.iter() {
            let l = ids[i as usize].0;
            if LockKind::of(l) == LockKind::Real {
                mask |= 1 << (i % 63);
                exact &= i < 63;
            } else {
                mask |= IRQ_BIT;
                exact = false;
                irq.add(l);
            }
        }
        (Self { locks, mask, exact }, irq)
    }
}

/// A held lock: index, re-entry count, acquire site, and the acquisition's sequence number
/// ([`LockState::seq`]).
pub(crate) type Held = (u32, u32, u32, u64);

/// A task's lock state: held locks with re-entry counts, and the interned current set.
#[derive(Clone, Debug, Default)]
pub(crate) struct TaskLocks {
    /// (lock index, count, acquire site, sequence number), in acquisition order.
    pub held: Vec<Held>,
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
    /// What each set says about interrupts (parallel to `sets`, which stays small for the
    /// hot paths).
    irqs: Vec<IrqInfo>,
    set_index: FxHashMap<Box<[u32]>, SetId>,
    trans: FxHashMap<(SetId, u32, bool), SetId>,
    tasks: Vec<TaskLocks>,
    /// Interrupt events change locksets ([`LockState::with_masks`]).
    masks: bool,
    /// Acquisitions so far (a lock entering a set gets the next number).
    seq: u64,
    /// Priority-mask levels seen (bit per level), for Eraser's view of handlers.
    levels: [u64; 4],
    /// Eraser's view of handler sets ([`LockState::eraser_set`]), until a new level shows.
    eraser_views: FxHashMap<SetId, SetId>,
}

impl Default for LockState {
    fn default() -> Self {
        Self::new()
    }
}

impl LockState {
    /// Lock state that ignores interrupt events (lock-order analyses: masks never block).
    pub fn new() -> Self {
        let (empty, no_irq) = SetInfo::new(Box::new([]), &[]);
        let mut set_index = FxHashMap::default();
        set_index.insert(empty.locks.clone(), 0);
        Self {
            lock_index: FxHashMap::default(),
            locks: Vec::new(),
            sets: vec![empty],
            irqs: vec![no_irq],
            set_index,
            trans: FxHashMap::default(),
            tasks: vec![
                TaskLocks {
                    exact: true,
                    ..TaskLocks::default()
                };
                256
            ],
            masks: false,
            seq: 0,
            levels: [0; 4],
            eraser_views: FxHashMap::default(),
        }
    }

    /// Lock state in which interrupt masks and handlers are locks (module doc): for the
    /// lockset analyses.
    pub fn with_masks() -> Self {
        Self {
            masks: true,
            ..Self::new()
        }
    }

    /// Records the priority-mask levels of `trace` in advance, so that Eraser's view of a
    /// handler has every level from its first access on.
    pub fn prescan_levels(&mut self, trace: &[Event]) {
        for ev in trace {
            if let Event::PrioMask { level, .. } = *ev {
                self.add_level(level);
            }
        }
    }

    fn add_level(&mut self, m: u8) {
        let (w, b) = (m as usize / 64, 1u64 << (m % 64));
        if m > 0 && self.levels[w] & b == 0 {
            self.levels[w] |= b;
            self.eraser_views.clear();
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
            Event::IrqMask { .. }
            | Event::PrioMask { .. }
            | Event::IrqEnter { .. }
            | Event::IrqExit { .. }
                if self.masks =>
            {
                self.on_mask(ev);
                LockChange::None
            }
            _ => LockChange::None,
        }
    }

    /// An interrupt event's effect on the context's locks (module doc).
    #[cold]
    fn on_mask(&mut self, ev: &Event) {
        match *ev {
            // An enable bit is global (NVIC ISER/ICER): enabling a source unmasks it for
            // every context that masked it, not only for the one that enables it (a handler
            // that enables a source the main loop disabled lets it preempt the main loop).
            Event::IrqMask { t, s, i, on } => match (i == ALL_IRQS, on != 0) {
                (true, true) => self.acquire_once(t, IRQ_ALL_LOCK, s),
                // Enabling every source unmasks each one.
                (true, false) => {
                    let any_mask = |k| matches!(k, LockKind::IrqAll | LockKind::Irq(_));
                    for u in self.masking(any_mask) {
                        self.release_kind(u, any_mask);
                    }
                }
                (false, true) => self.acquire_once(t, irq_lock(i), s),
                (false, false) => {
                    for u in self.masking(|k| k == LockKind::Irq(i) || k == LockKind::IrqAll) {
                        self.release_kind(u, |k| k == LockKind::Irq(i));
                        // Enabling one source while all are masked leaves the others masked.
                        if self.holds_kind(u, |k| k == LockKind::IrqAll) {
                            self.release_kind(u, |k| k == LockKind::IrqAll);
                            let site = self.site_of(u, IRQ_ALL_LOCK).unwrap_or(s);
                            for j in (0..MAX_IRQS).filter(|&j| j != i) {
                                self.acquire_once(u, irq_lock(j), site);
                            }
                        }
                    }
                }
            },
            Event::PrioMask { t, s, level, .. } => {
                self.add_level(level);
                if self.holds_kind(t, |k| k == LockKind::Prio(level)) {
                    return;
                }
                self.release_kind(t, |k| matches!(k, LockKind::Prio(_)));
                if level > 0 {
                    self.acquire_once(t, prio_lock(level), s);
                }
            }
            Event::IrqEnter { t, i, p, .. } => {
                self.release_all(t);
                self.acquire_once(t, handler_lock(i, p), 0);
            }
            Event::IrqExit { t } => self.release_all(t),
            _ => {}
        }
    }

    /// Acquires mask lock `l` unless `t` holds it (a mask bit is not a counter).
    fn acquire_once(&mut self, t: u8, l: u32, site: u32) {
        let held = self
            .lock_index
            .get(&l)
            .is_some_and(|&idx| self.tasks[t as usize].held.iter().any(|h| h.0 == idx));
        if !held {
            self.acquire(t, l, MASK_CLASS, site);
        }
    }

    /// The contexts holding a lock whose identity is of a kind `pred` accepts.
    fn masking(&self, pred: impl Fn(LockKind) -> bool) -> Vec<u8> {
        (0..self.tasks.len())
            .map(|u| u as u8)
            .filter(|&u| self.holds_kind(u, &pred))
            .collect()
    }

    /// Where `t` acquired lock identity `l`, if it holds it.
    fn site_of(&self, t: u8, l: u32) -> Option<u32> {
        let idx = *self.lock_index.get(&l)?;
        self.tasks[t as usize]
            .held
            .iter()
            .find(|h| h.0 == idx)
            .map(|h| h.2)
    }

    /// Does `t` hold a lock whose identity is of a kind `pred` accepts?
    fn holds_kind(&self, t: u8, pred: impl Fn(LockKind) -> bool) -> bool {
        self.tasks[t as usize]
            .held
            .iter()
            .any(|h| pred(LockKind::of(self.locks[h.0 as usize].0)))
    }

    /// Releases entirely every lock of `t` whose identity is of a kind `pred` accepts.
    fn release_kind(&mut self, t: u8, pred: impl Fn(LockKind) -> bool) {
        while let Some(pos) = self.tasks[t as usize]
            .held
            .iter()
            .position(|h| pred(LockKind::of(self.locks[h.0 as usize].0)))
        {
            let idx = self.tasks[t as usize].held.remove(pos).0;
            self.step(t, idx, false);
        }
    }

    /// The index of lock `l`, interning it (with class `c`) on first sight.
    #[inline]
    pub fn intern(&mut self, l: u32, c: u32) -> u32 {
        let next = self.locks.len() as u32;
        let idx = *self.lock_index.entry(l).or_insert(next);
        if idx == next {
            self.locks.push((l, c));
        }
        idx
    }

    /// [`LockState::intern`] of a mask lock, out of line.
    #[inline(never)]
    fn intern_cold(&mut self, l: u32) -> u32 {
        self.intern(l, MASK_CLASS)
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

    /// What set `id` says about interrupts.
    pub fn irq(&self, id: SetId) -> &IrqInfo {
        &self.irqs[id as usize]
    }

    fn acquire(&mut self, t: u8, l: u32, c: u32, site: u32) -> LockChange {
        let idx = self.intern(l, c);
        let task = &mut self.tasks[t as usize];
        if let Some(h) = task.held.iter_mut().find(|h| h.0 == idx) {
            h.1 += 1;
            return LockChange::None;
        }
        self.seq += 1;
        task.held.push((idx, 1, site, self.seq));
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
        let (info, irq) = SetInfo::new(locks.clone(), &self.locks);
        self.sets.push(info);
        self.irqs.push(irq);
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
        !self.shares_symmetric(a, b) && !self.irq(a).excluded(self.irq(b))
    }

    /// Do sets `a` and `b` share a lock that excludes its holders from each other (a real
    /// lock, the critical section, a handler level; not a mask)?
    pub fn shares_symmetric(&self, a: SetId, b: SetId) -> bool {
        let (x, y) = (&self.set(a).locks, &self.set(b).locks);
        let (mut i, mut j) = (0, 0);
        while i < x.len() && j < y.len() {
            match x[i].cmp(&y[j]) {
                core::cmp::Ordering::Less => i += 1,
                core::cmp::Ordering::Greater => j += 1,
                core::cmp::Ordering::Equal => {
                    if LockKind::of(self.locks[x[i] as usize].0).symmetric() {
                        return true;
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        false
    }

    /// Acquisitions so far: a lock of a task's set whose sequence number is at most the
    /// value read at some event was held at that event and ever since.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The locks `t` holds now that it has held since `seq` was [`LockState::seq`]
    /// (continuously: a lock released and acquired again has a newer number), interned.
    pub fn held_since(&mut self, t: u8, seq: u64) -> SetId {
        let task = &self.tasks[t as usize];
        if task.held.iter().all(|h| h.3 <= seq) {
            return task.set;
        }
        let mut locks: Vec<u32> = task
            .held
            .iter()
            .filter(|h| h.3 <= seq)
            .map(|h| h.0)
            .collect();
        locks.sort_unstable();
        self.intern_set(locks.into_boxed_slice())
    }

    /// Task `t`'s lockset as Eraser intersects it: a handler's member `HANDLER_LOCK(i, p)`
    /// expanded to its implicit locks (CS, `IRQ_ALL`, `IRQ_LOCK(i)`, `PRIO_LOCK(m)` for the
    /// levels `m ≤ p` seen, `LEVEL_LOCK(p)`); other sets as they are.
    pub fn eraser_set(&mut self, t: u8) -> SetId {
        let id = self.tasks[t as usize].set;
        let Some((i, p)) = self.irq(id).handler else {
            return id;
        };
        if let Some(&v) = self.eraser_views.get(&id) {
            return v;
        }
        let mut implicit = vec![CS_LOCK, IRQ_ALL_LOCK, irq_lock(i), level_lock(p)];
        implicit.extend(
            (1..=p)
                .filter(|&m| self.levels[m as usize / 64] & (1 << (m % 64)) != 0)
                .map(prio_lock),
        );
        let mut locks: Vec<u32> = self
            .set(id)
            .locks
            .iter()
            .copied()
            .filter(|&k| {
                !matches!(
                    LockKind::of(self.locks[k as usize].0),
                    LockKind::Handler(..)
                )
            })
            .collect();
        for l in implicit {
            locks.push(self.intern_cold(l));
        }
        locks.sort_unstable();
        locks.dedup();
        let v = self.intern_set(locks.into_boxed_slice());
        self.eraser_views.insert(id, v);
        v
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
            + self.irqs.capacity() * size_of::<IrqInfo>()
            + self.tasks.capacity() * size_of::<TaskLocks>()
            + self
                .tasks
                .iter()
                .map(|t| t.held.capacity() * size_of::<Held>())
                .sum::<usize>()
            + self.eraser_views.capacity() * 8
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
        let a = s.intern_set(vec![3, 68].into_boxed_slice());
        let b = s.intern_set(vec![5].into_boxed_slice()); // 68 % 63 == 5: masks collide
        let c = s.intern_set(vec![68].into_boxed_slice());
        let key = |s: &LockState, id| (id, s.set(id).mask, s.set(id).exact);
        assert!(s.disjoint(key(&s, a), key(&s, b)));
        assert!(!s.disjoint(key(&s, a), key(&s, c)));
        assert_eq!(s.intersect(a, c), c);
        assert_eq!(s.intersect(b, c), 0);
    }

    fn ids(s: &LockState, t: u8) -> Vec<u32> {
        let mut v = s.identities(s.task(t).set);
        v.sort_unstable();
        v
    }

    #[test]
    fn masks_are_locks_only_with_masks_and_a_mask_bit_is_not_a_counter() {
        use crate::irq::*;
        let mask = |i: u8, on: u8| Event::IrqMask { t: 1, s: 0, i, on };
        let mut plain = LockState::new();
        plain.on_event(&mask(0, 1));
        assert_eq!(plain.task(1).set, 0);
        let mut s = LockState::with_masks();
        s.on_event(&mask(0, 1));
        s.on_event(&mask(0, 1));
        assert_eq!(ids(&s, 1), vec![irq_lock(0)]);
        s.on_event(&mask(0, 0));
        assert!(ids(&s, 1).is_empty());
        // Enabling one source while all are masked leaves the others masked.
        s.on_event(&mask(ALL_IRQS, 1));
        s.on_event(&mask(3, 0));
        let held = ids(&s, 1);
        assert_eq!(held.len(), 31);
        assert!(!held.contains(&irq_lock(3)) && !held.contains(&IRQ_ALL_LOCK));
        s.on_event(&mask(ALL_IRQS, 0));
        assert!(ids(&s, 1).is_empty());
        // Switching the priority mask releases the previous level.
        s.on_event(&Event::PrioMask {
            t: 1,
            s: 0,
            level: 3,
            r: 0,
        });
        s.on_event(&Event::PrioMask {
            t: 1,
            s: 0,
            level: 2,
            r: 0,
        });
        assert_eq!(ids(&s, 1), vec![prio_lock(2)]);
        s.on_event(&Event::PrioMask {
            t: 1,
            s: 0,
            level: 0,
            r: 0,
        });
        assert!(ids(&s, 1).is_empty());
        // A handler firing holds its marker, and nothing from its previous firing.
        let enter = Event::IrqEnter {
            t: 0x80,
            i: 0,
            p: 2,
            by: 1,
            f: 0,
        };
        s.on_event(&enter);
        s.on_event(&Event::CsEnter { t: 0x80 });
        s.on_event(&Event::IrqExit { t: 0x80 });
        assert_eq!(s.task(0x80).set, 0);
        s.on_event(&enter);
        assert_eq!(ids(&s, 0x80), vec![handler_lock(0, 2)]);
        let info = s.set(s.task(0x80).set);
        assert_eq!(s.irq(s.task(0x80).set).handler, Some((0, 2)));
        assert!(!info.exact && info.mask & IRQ_BIT != 0);
    }

    #[test]
    fn an_enable_unmasks_the_source_for_every_context_that_masked_it() {
        use crate::irq::*;
        let mask = |t: u8, i: u8, on: u8| Event::IrqMask { t, s: 0, i, on };
        let mut s = LockState::with_masks();
        // Main masks source 2; a handler enables it: main's mask is gone too.
        s.on_event(&mask(0, 2, 1));
        s.on_event(&mask(0, 5, 1));
        s.on_event(&mask(0x80, 2, 0));
        assert_eq!(ids(&s, 0), vec![irq_lock(5)]);
        // Main masks every source; a handler enables source 3: main keeps the others.
        s.on_event(&mask(0, ALL_IRQS, 1));
        s.on_event(&mask(0x80, 3, 0));
        let held = ids(&s, 0);
        assert_eq!(held.len(), 31);
        assert!(!held.contains(&irq_lock(3)) && !held.contains(&IRQ_ALL_LOCK));
        // Enabling every source unmasks them all, everywhere.
        s.on_event(&mask(1, 7, 1));
        s.on_event(&mask(0x81, ALL_IRQS, 0));
        assert!(ids(&s, 0).is_empty() && ids(&s, 1).is_empty());
    }

    #[test]
    fn held_since_keeps_only_continuously_held_locks() {
        let mut s = LockState::with_masks();
        let acq = |l| Event::Acquire {
            t: 1,
            s: 0,
            l,
            c: 0,
        };
        s.on_event(&acq(10));
        s.on_event(&acq(20));
        let at_a1 = s.seq();
        s.on_event(&Event::Release { t: 1, s: 0, l: 20 });
        s.on_event(&acq(20));
        s.on_event(&acq(10)); // re-entry: still held since before a1
        s.on_event(&acq(30));
        let held = s.held_since(1, at_a1);
        assert_eq!(s.identities(held), vec![10]);
    }

    #[test]
    fn eraser_view_expands_a_handlers_implicit_locks() {
        use crate::irq::*;
        let mut s = LockState::with_masks();
        s.on_event(&Event::PrioMask {
            t: 1,
            s: 0,
            level: 1,
            r: 0,
        });
        s.on_event(&Event::PrioMask {
            t: 1,
            s: 0,
            level: 4,
            r: 0,
        });
        s.on_event(&Event::IrqEnter {
            t: 0x82,
            i: 2,
            p: 3,
            by: 1,
            f: 0,
        });
        let view = s.eraser_set(0x82);
        let mut got = s.identities(view);
        got.sort_unstable();
        let mut want = vec![
            CS_LOCK,
            IRQ_ALL_LOCK,
            irq_lock(2),
            level_lock(3),
            prio_lock(1),
        ];
        want.sort_unstable();
        assert_eq!(got, want);
        assert_eq!(s.eraser_set(1), s.task(1).set);
    }
}
