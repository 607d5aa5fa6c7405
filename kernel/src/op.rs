//! Operations: what a task stopped at a scheduling point will do next (the papers'
//! `NextStmt`), the statements of racefuzzer-pldi08 §2.1. Shared by the scheduler, the
//! strategies and the targets; depends only on the event model.

use crate::event::{Event, TraceLevel};
use crate::task::{TaskId, TaskSet};

/// A pending operation: what a stopped task will do when it is next chosen. Field names
/// follow [`Event`]: `s` site, `a` location, `l` lock, `c` class, `g` signal.
// `repr(u32)`: a word-sized tag keeps the operands word-aligned inside `Slot`, so copying a
// pending operation is a few loads and stores rather than a call to `memcpy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
#[repr(u32)]
pub enum Op {
    /// A new task's first step: it begins running.
    Start,
    /// Make the reserved task `child` runnable.
    Spawn { s: u32, child: TaskId },
    /// Wait for `child` to end.
    Join { s: u32, child: TaskId },
    /// Read location `a`.
    Read { s: u32, a: u32 },
    /// Write location `a`.
    Write { s: u32, a: u32 },
    /// Read-modify-write location `a`.
    Update { s: u32, a: u32 },
    /// Acquire lock `l` of class `c` (disabled while another task holds it).
    Acquire { s: u32, l: u32, c: u32 },
    /// Release lock `l`.
    Release { s: u32, l: u32 },
    /// Enter an atomic block.
    AtomicEnter { s: u32 },
    /// Leave the atomic block entered at `s`.
    AtomicExit { s: u32 },
    /// Send signal `g`.
    Signal { s: u32, g: u32 },
    /// Receive signal `g` (disabled while none is pending).
    Wait { s: u32, g: u32 },
    /// Enter the critical section.
    CsEnter,
    /// Leave the critical section.
    CsExit,
    /// Let the scheduler choose again.
    Yield { s: u32 },
    /// Enter an instrumented frame.
    FrameEnter { s: u32 },
    /// Leave an instrumented frame.
    FrameExit { s: u32 },
    /// Pend interrupt source `i` (requested firing): its handler runs later, at a point the
    /// scheduler chooses.
    IrqRequest { s: u32, i: u8 },
    /// Mask (`on`) or unmask interrupt source `i` (NVIC enable bit; [`ALL_IRQS`]: every
    /// source).
    IrqMask { s: u32, i: u8, on: bool },
    /// Mask every interrupt of priority value `level` or more (BASEPRI; 0: none), for the
    /// lock of resource `r` (its address; 0: a mask that names no resource).
    PrioMask { s: u32, level: u8, r: u32 },
    /// An atomic operation of `kind` on location `a`, with memory ordering `ord`
    /// ([`ordering_code`]): a scheduling point like a plain access, never a data race with
    /// another atomic access.
    AtomicAccess {
        s: u32,
        a: u32,
        kind: AtomicKind,
        ord: u8,
    },
    /// Wait for an interrupt (the idle loop of a framework's main, `wfi`): disabled until a
    /// handler has run since the wait began (`since`: the run's handler entries then).
    Idle { s: u32, since: u32 },
}

/// The `i` of [`Op::IrqMask`] that names every interrupt source.
pub const ALL_IRQS: u8 = 0xFF;

/// What an atomic operation does to its location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum AtomicKind {
    /// `load`.
    Load = 0,
    /// `store`.
    Store = 1,
    /// `swap`, `fetch_*`: reads and writes.
    Rmw = 2,
    /// `compare_exchange(_weak)`: reads, and writes if it succeeds (its event follows the
    /// outcome: [`Event::AtomicRmw`] or [`Event::CasFailed`]).
    Cas = 3,
}

/// The code of a memory ordering in events: 0 relaxed, 1 release, 2 acquire, 3 acq-rel,
/// 4 seq-cst.
pub fn ordering_code(ord: core::sync::atomic::Ordering) -> u8 {
    use core::sync::atomic::Ordering::*;
    match ord {
        Relaxed => 0,
        Release => 1,
        Acquire => 2,
        AcqRel => 3,
        _ => 4,
    }
}

/// The [`Op::lean_bit`]s of the plain accesses (read, write, update).
pub const LEAN_ACCESSES: u32 = Op::Read { s: 0, a: 0 }.lean_bit()
    | Op::Write { s: 0, a: 0 }.lean_bit()
    | Op::Update { s: 0, a: 0 }.lean_bit();
/// [`Op::lean_bit`] of a yield.
pub const LEAN_YIELD: u32 = Op::Yield { s: 0 }.lean_bit();

impl Op {
    /// Is it the start of an Embassy task's poll (the acquire of its executor's lock,
    /// [`crate::event::EXECUTOR_CLASS`])?
    #[inline(always)]
    pub fn starts_poll(&self) -> bool {
        matches!(
            self,
            Op::Acquire {
                c: crate::event::EXECUTOR_CLASS,
                ..
            }
        )
    }

    /// The site of the operation, if it has one.
    #[inline(always)]
    pub fn site(&self) -> Option<u32> {
        match *self {
            Op::Start | Op::CsEnter | Op::CsExit => None,
            Op::Spawn { s, .. }
            | Op::Join { s, .. }
            | Op::Read { s, .. }
            | Op::Write { s, .. }
            | Op::Update { s, .. }
            | Op::Acquire { s, .. }
            | Op::Release { s, .. }
            | Op::AtomicEnter { s }
            | Op::AtomicExit { s }
            | Op::Signal { s, .. }
            | Op::Wait { s, .. }
            | Op::Yield { s }
            | Op::FrameEnter { s }
            | Op::FrameExit { s }
            | Op::IrqRequest { s, .. }
            | Op::IrqMask { s, .. }
            | Op::PrioMask { s, .. }
            | Op::AtomicAccess { s, .. }
            | Op::Idle { s, .. } => Some(s),
        }
    }

    /// The site of a plain access or yield, the operations the kernel's lean path may
    /// decide on its own; `None` for every other operation.
    #[inline(always)]
    pub fn lean_site(&self) -> Option<u32> {
        match *self {
            Op::Read { s, .. } | Op::Write { s, .. } | Op::Update { s, .. } | Op::Yield { s } => {
                Some(s)
            }
            _ => None,
        }
    }

    /// This operation's bit among [`LEAN_ACCESSES`] and [`LEAN_YIELD`] (other operations'
    /// bits are outside both): the lean path tests the kind against a mask with one shift
    /// and one `and`.
    #[inline(always)]
    pub const fn lean_bit(&self) -> u32 {
        1 << self.tag()
    }

    /// The `repr(u32)` tag: the variant's index in declaration order.
    #[inline(always)]
    const fn tag(&self) -> u32 {
        // In declaration order, so the compiler reads the tag rather than branching.
        match self {
            Op::Start => 0,
            Op::Spawn { .. } => 1,
            Op::Join { .. } => 2,
            Op::Read { .. } => 3,
            Op::Write { .. } => 4,
            Op::Update { .. } => 5,
            Op::Acquire { .. } => 6,
            Op::Release { .. } => 7,
            Op::AtomicEnter { .. } => 8,
            Op::AtomicExit { .. } => 9,
            Op::Signal { .. } => 10,
            Op::Wait { .. } => 11,
            Op::CsEnter => 12,
            Op::CsExit => 13,
            Op::Yield { .. } => 14,
            Op::FrameEnter { .. } => 15,
            Op::FrameExit { .. } => 16,
            Op::IrqRequest { .. } => 17,
            Op::IrqMask { .. } => 18,
            Op::PrioMask { .. } => 19,
            Op::AtomicAccess { .. } => 20,
            Op::Idle { .. } => 21,
        }
    }

    /// What a spinning task's operation looks at, when executing it changes nothing another
    /// context could see: `Some((site, location))` for a read, an atomic load, a yield
    /// (location 0), and the markers that only delimit (frames, atomic blocks); `None` for
    /// every operation that may change something: a write or read-modify-write, a lock
    /// operation (the data a lock or the critical section protects is not instrumented, so
    /// taking one may hide a write), a signal, a wait, a spawn or join, an interrupt request
    /// or mask. A compare-and-swap is `None` too: whether it only read is known from its
    /// outcome ([`crate::sched`]'s `cas_outcome`).
    #[inline(always)]
    pub fn observes(&self) -> Option<(u32, u32)> {
        match *self {
            Op::Read { s, a }
            | Op::AtomicAccess {
                s,
                a,
                kind: AtomicKind::Load,
                ..
            } => Some((s, a)),
            Op::Yield { s }
            | Op::FrameEnter { s }
            | Op::FrameExit { s }
            | Op::AtomicEnter { s }
            | Op::AtomicExit { s } => Some((s, 0)),
            _ => None,
        }
    }

    /// Does executing this operation change data, as opposed to synchronising: a write or
    /// read-modify-write (plain or atomic; a compare-and-swap is judged by its outcome) or a
    /// spawn. Locks, the critical section, signals and waits, interrupt requests and masks
    /// only order or wake: a task whose poll does nothing else makes no progress of its own
    /// ([`crate::sched`]'s polling spins).
    #[inline(always)]
    pub fn changes_data(&self) -> bool {
        matches!(
            self,
            Op::Write { .. }
                | Op::Update { .. }
                | Op::Spawn { .. }
                | Op::AtomicAccess {
                    kind: AtomicKind::Store | AtomicKind::Rmw,
                    ..
                }
        )
    }

    /// The trace level of [`Op::event`]'s event, known without building it: memory
    /// accesses and yields are `Full`, everything else `Sync`.
    #[inline(always)]
    pub fn level(&self) -> TraceLevel {
        match self {
            Op::Read { .. } | Op::Write { .. } | Op::Update { .. } | Op::Yield { .. } => {
                TraceLevel::Full
            }
            _ => TraceLevel::Sync,
        }
    }

    /// The event recording the execution of this operation by task `t` (`None` for a
    /// compare-and-swap, whose event depends on its outcome).
    pub fn event(&self, t: TaskId) -> Option<Event> {
        Some(match *self {
            Op::Start => Event::TaskStart { t },
            Op::Spawn { s, child } => Event::Spawn { t, child, s },
            Op::Join { s, child } => Event::Join { t, child, s },
            Op::Read { s, a } => Event::Read { t, s, a },
            Op::Write { s, a } => Event::Write { t, s, a },
            Op::Update { s, a } => Event::Update { t, s, a },
            Op::Acquire { s, l, c } => Event::Acquire { t, s, l, c },
            Op::Release { s, l } => Event::Release { t, s, l },
            Op::AtomicEnter { s } => Event::AtomicEnter { t, s },
            Op::AtomicExit { s } => Event::AtomicExit { t, s },
            Op::Signal { s, g } => Event::Signal { t, s, g },
            Op::Wait { s, g } => Event::Wait { t, s, g },
            Op::CsEnter => Event::CsEnter { t },
            Op::CsExit => Event::CsExit { t },
            Op::Yield { s } => Event::Yield { t, s },
            Op::FrameEnter { s } => Event::FrameEnter { t, s },
            Op::FrameExit { s } => Event::FrameExit { t, s },
            Op::IrqRequest { s, i } => Event::IrqRequest { t, s, i },
            Op::IrqMask { s, i, on } => Event::IrqMask {
                t,
                s,
                i,
                on: on as u8,
            },
            Op::PrioMask { s, level, r } => Event::PrioMask { t, s, level, r },
            Op::AtomicAccess { s, a, kind, ord } => match kind {
                AtomicKind::Load => Event::AtomicLoad { t, s, a, o: ord },
                AtomicKind::Store => Event::AtomicStore { t, s, a, o: ord },
                AtomicKind::Rmw => Event::AtomicRmw { t, s, a, o: ord },
                AtomicKind::Cas => return None,
            },
            Op::Idle { s, .. } => Event::Idle { t, s },
        })
    }
}

/// A task-table slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Unused.
    Free,
    /// Allocated by a spawn that has not executed yet.
    Reserved,
    /// Alive; `None` while it runs, `Some(op)` while stopped before `op`.
    Alive(Option<Op>),
    /// Ended.
    Done,
}

impl Slot {
    /// The pending operation of a stopped task.
    #[inline(always)]
    pub fn pending(&self) -> Option<&Op> {
        match self {
            Slot::Alive(Some(op)) => Some(op),
            _ => None,
        }
    }

    /// The tasks stopped at a scheduling point in `slots` (indexed by task id).
    pub fn stopped(slots: &[Slot]) -> TaskSet {
        let mut set = TaskSet::EMPTY;
        for (i, slot) in slots.iter().enumerate() {
            if slot.pending().is_some() {
                set.insert(i as TaskId);
            }
        }
        set
    }
}

/// One operation of each kind, in declaration order (for tests).
#[cfg(test)]
pub(crate) fn one_of_each() -> [Op; 22] {
    [
        Op::Start,
        Op::Spawn { s: 1, child: 1 },
        Op::Join { s: 1, child: 1 },
        Op::Read { s: 1, a: 2 },
        Op::Write { s: 1, a: 2 },
        Op::Update { s: 1, a: 2 },
        Op::Acquire { s: 1, l: 2, c: 3 },
        Op::Release { s: 1, l: 2 },
        Op::AtomicEnter { s: 1 },
        Op::AtomicExit { s: 1 },
        Op::Signal { s: 1, g: 2 },
        Op::Wait { s: 1, g: 2 },
        Op::CsEnter,
        Op::CsExit,
        Op::Yield { s: 1 },
        Op::FrameEnter { s: 1 },
        Op::FrameExit { s: 1 },
        Op::IrqRequest { s: 1, i: 0 },
        Op::IrqMask {
            s: 1,
            i: 0,
            on: true,
        },
        Op::PrioMask {
            s: 1,
            level: 2,
            r: 0,
        },
        Op::AtomicAccess {
            s: 1,
            a: 2,
            kind: AtomicKind::Rmw,
            ord: 4,
        },
        Op::Idle { s: 1, since: 0 },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Op::tag` is the `repr(u32)` tag, so `lean_bit` needs no branch, and only the plain
    /// accesses and yields have a lean bit.
    #[test]
    fn the_tag_is_the_discriminant_and_lean_bits_are_the_lean_sites() {
        let ops = one_of_each();
        for (i, op) in ops.iter().enumerate() {
            // SAFETY: a `repr(u32)` enum starts with its `u32` tag.
            let tag = unsafe { *(op as *const Op as *const u32) };
            assert_eq!((tag, op.tag()), (i as u32, i as u32), "{op:?}");
            let lean = op.lean_bit() & (LEAN_ACCESSES | LEAN_YIELD) != 0;
            assert_eq!(lean, op.lean_site().is_some(), "{op:?}");
        }
    }
}
