//! Interrupt masks as locks: the reserved lock identities, and which accesses a mask keeps
//! apart.
//!
//! The kernel's handlers (`IrqEnter { t, i, p, by }` … `IrqExit { t }`, context
//! `t = IRQ_CONTEXT + i`) preempt tasks and less urgent handlers (NVIC numbering: a lower
//! `p` is more urgent; equal priorities never preempt each other). A context keeps a handler
//! out by masking it: the critical section masks every source, `IrqMask { i, on: 1 }` source
//! `i` (`ALL_IRQS`: every source) until `on: 0`, `PrioMask { level }` (BASEPRI) every source
//! whose priority value is `level` or more. The lockset analyses see these as locks with the
//! identities below, all in the reserved range [`RESERVED_LOCKS`] (`0xFFFE_0000..=u32::MAX`):
//! real lock identities are RAM addresses on the device (Cortex-M SRAM starts at
//! `0x2000_0000`; `0xFFFE_0000` and up is the vendor system area) and small interned ids on
//! the host port, so they never collide.
//!
//! | identity | value | held by |
//! |---|---|---|
//! | [`CS_LOCK`] | `0xFFFF_FFFF` | a context inside the critical section |
//! | [`IRQ_ALL_LOCK`] | `0xFFFF_FFFE` | a context that masked every source (`IrqMask { i: 0xFF, on: 1 }`) |
//! | [`irq_lock`]`(i)` | `0xFFFF_FE00 + i` | a context that masked source `i` |
//! | [`prio_lock`]`(m)` | `0xFFFF_FD00 + m` | a context whose priority mask is `m > 0` |
//! | [`level_lock`]`(p)` | `0xFFFF_FC00 + p` | implicitly, a handler of priority `p` |
//! | [`handler_lock`]`(i, p)` | `0xFFFE_0000 + 256·i + p` | a running handler of source `i`, priority `p` (stands for its implicit locks) |
//!
//! All have class [`MASK_CLASS`] (= `CS_CLASS`). A handler instance of source `i`, priority
//! `p`, implicitly holds for its whole duration the CS lock, `IRQ_ALL`, `IRQ_LOCK(i)`,
//! `PRIO_LOCK(m)` for every level `m ≤ p` and `LEVEL_LOCK(p)`. In locksets it carries one
//! member for all of them, `HANDLER_LOCK(i, p)`, because masks are one-sided: a mask keeps the
//! handlers it masks away from the masking context, but two contexts masking the same source
//! do not exclude each other (the scheduler still switches tasks), and two handlers do not
//! exclude each other through the critical section they both "hold" (the more urgent one
//! preempts the other anywhere). So two locksets exclude each other when (see
//! [`IrqInfo::excluded`]):
//!
//! - they share a *symmetric* lock: a real lock, the CS lock (both explicitly inside the
//!   critical section) or a `LEVEL_LOCK` (handlers of equal priority); or
//! - one is a handler of source `i`, priority `p`, that could preempt the other's context (a
//!   task, or a handler with a priority value above `p`), and the other masks it: it holds
//!   the CS lock, `IRQ_ALL`, `IRQ_LOCK(i)` or `PRIO_LOCK(m)` with `m ≤ p`.
//!
//! Eraser intersects locksets literally, so it sees a handler's implicit locks expanded
//! (`CS`, `IRQ_ALL`, `IRQ_LOCK(i)`, `PRIO_LOCK(m)` for the levels `m ≤ p` of the trace,
//! `LEVEL_LOCK(p)`), see `LockState::eraser_set`.

use core::ops::RangeInclusive;

use jostle_kernel::event::IRQ_CONTEXT;

pub use crate::vc::{CS_CLASS, CS_LOCK};

/// Every lock identity the checker reserves for the critical section and interrupt masks.
pub const RESERVED_LOCKS: RangeInclusive<u32> = 0xFFFE_0000..=u32::MAX;
/// Class of every mask lock (the critical section's class).
pub const MASK_CLASS: u32 = CS_CLASS;
/// Held by a context that masked every interrupt source.
pub const IRQ_ALL_LOCK: u32 = 0xFFFF_FFFE;
const IRQ_BASE: u32 = 0xFFFF_FE00;
const PRIO_BASE: u32 = 0xFFFF_FD00;
const LEVEL_BASE: u32 = 0xFFFF_FC00;
const HANDLER_BASE: u32 = 0xFFFE_0000;
/// The `i` of `IrqMask` that names every source (`jostle_kernel::op::ALL_IRQS`).
pub const ALL_IRQS: u8 = 0xFF;

/// Held by a context that masked source `i` (`i < 0xFF`).
pub const fn irq_lock(i: u8) -> u32 {
    IRQ_BASE + i as u32
}

/// Held by a context whose priority mask (BASEPRI) is `m` (`m > 0`).
pub const fn prio_lock(m: u8) -> u32 {
    PRIO_BASE + m as u32
}

/// Implicitly held by every handler of priority `p`.
pub const fn level_lock(p: u8) -> u32 {
    LEVEL_BASE + p as u32
}

/// The lockset member of a running handler of source `i`, priority `p`: it stands for the
/// handler's implicit locks (module doc).
pub const fn handler_lock(i: u8, p: u8) -> u32 {
    HANDLER_BASE + ((i as u32) << 8) + p as u32
}

/// Is context `t` an interrupt handler's (`IRQ_CONTEXT + i`)?
pub const fn is_handler(t: u8) -> bool {
    t >= IRQ_CONTEXT && t != jostle_kernel::event::NO_TASK
}

/// What a lock identity stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    /// A lock of the firmware (`Acquire`/`Release`).
    Real,
    /// The critical section.
    Cs,
    /// Every source masked.
    IrqAll,
    /// Source `i` masked.
    Irq(u8),
    /// Priority mask at level `m`.
    Prio(u8),
    /// A handler's priority level (implicit).
    Level(u8),
    /// A running handler (source, priority).
    Handler(u8, u8),
}

impl LockKind {
    /// Classifies identity `l`.
    pub fn of(l: u32) -> LockKind {
        let in_block = |base: u32, len: u32| l >= base && l - base < len;
        if l == CS_LOCK {
            LockKind::Cs
        } else if l == IRQ_ALL_LOCK {
            LockKind::IrqAll
        } else if in_block(IRQ_BASE, 0x100) {
            LockKind::Irq((l - IRQ_BASE) as u8)
        } else if in_block(PRIO_BASE, 0x100) {
            LockKind::Prio((l - PRIO_BASE) as u8)
        } else if in_block(LEVEL_BASE, 0x100) {
            LockKind::Level((l - LEVEL_BASE) as u8)
        } else if in_block(HANDLER_BASE, 0x1_0000) {
            LockKind::Handler(((l - HANDLER_BASE) >> 8) as u8, (l - HANDLER_BASE) as u8)
        } else {
            // Below the reserved range, or a reserved identity the checker never uses.
            LockKind::Real
        }
    }

    /// Do two holders of this lock exclude each other (a real lock, the critical section, a
    /// priority level)? Masks and handler markers are one-sided (module doc).
    pub fn symmetric(self) -> bool {
        matches!(self, LockKind::Real | LockKind::Cs | LockKind::Level(_))
    }
}

/// What a lockset says about interrupts: whose handler it is, and what it masks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IrqInfo {
    /// The set is a running handler's: (source, priority).
    pub handler: Option<(u8, u8)>,
    /// Inside the critical section (masks every source).
    pub cs: bool,
    /// Every source masked.
    pub all: bool,
    /// Sources masked one by one (bit `i`).
    pub sources: [u64; 4],
    /// Priority mask (0: none; the lowest level when a set has several).
    pub basepri: u8,
}

impl IrqInfo {
    /// Accumulates identity `l` of a set.
    pub fn add(&mut self, l: u32) {
        match LockKind::of(l) {
            LockKind::Cs => self.cs = true,
            LockKind::IrqAll => self.all = true,
            LockKind::Irq(i) => self.sources[i as usize / 64] |= 1 << (i % 64),
            LockKind::Prio(m) if m > 0 => {
                self.basepri = if self.basepri == 0 {
                    m
                } else {
                    self.basepri.min(m)
                };
            }
            LockKind::Handler(i, p) => self.handler = Some((i, p)),
            _ => {}
        }
    }

    /// Does this state keep the handler of source `i`, priority `p`, from firing?
    pub fn masks(&self, i: u8, p: u8) -> bool {
        self.cs
            || self.all
            || self.sources[i as usize / 64] & (1 << (i % 64)) != 0
            || (self.basepri != 0 && p >= self.basepri)
    }

    /// Could a handler of priority `p` preempt a context in this state, masks aside? Any
    /// handler preempts a task; a handler preempts a handler of a higher priority value.
    pub fn preemptible_by(&self, p: u8) -> bool {
        self.handler.is_none_or(|(_, q)| p < q)
    }

    /// Do interrupts keep accesses under these two states apart (module doc)? Equal-priority
    /// handlers never preempt each other; a handler that could preempt the other context is
    /// kept out when that context masks it. Real locks are not considered here.
    pub fn excluded(&self, other: &IrqInfo) -> bool {
        if let (Some((_, p)), Some((_, q))) = (self.handler, other.handler)
            && p == q
        {
            return true;
        }
        let keeps_out = |masker: &IrqInfo, h: Option<(u8, u8)>| {
            h.is_some_and(|(i, p)| masker.preemptible_by(p) && masker.masks(i, p))
        };
        keeps_out(self, other.handler) || keeps_out(other, self.handler)
    }
}

/// The handlers seen enabling a source (`IrqMask { on: 0 }` in a handler context): a mask of
/// that source is one a more urgent handler can undo. racebench 014: isr_1 masks isr_3 around
/// two reads; isr_2, more urgent, enables isr_3, so isr_3 can land between them all the same.
#[derive(Clone, Debug, Default)]
pub struct Unmaskers {
    /// (source enabled, or [`ALL_IRQS`]; the enabling handler's source and priority).
    seen: Vec<(u8, u8, u8)>,
}

impl Unmaskers {
    /// Every handler of `trace` that enables a source, wherever it does it.
    pub fn of(trace: &[jostle_kernel::event::Event]) -> Self {
        use jostle_kernel::event::Event;
        let mut running: crate::hash::FxHashMap<u8, (u8, u8)> = Default::default();
        let mut seen = Vec::new();
        for ev in trace {
            match *ev {
                Event::IrqEnter { t, i, p, .. } => {
                    running.insert(t, (i, p));
                }
                Event::IrqExit { t } => {
                    running.remove(&t);
                }
                Event::IrqMask { t, i, on: 0, .. } => {
                    if let Some(&(j, q)) = running.get(&t)
                        && !seen.contains(&(i, j, q))
                    {
                        seen.push((i, j, q));
                    }
                }
                _ => {}
            }
        }
        Self { seen }
    }

    /// A handler that can undo `masker`'s mask of the handler of source `i`, priority `p`:
    /// the mask is a per-source or all-sources one (an enable clears the NVIC bit; the
    /// critical section and the priority mask stay), and the unmasker could preempt the
    /// masking context, which does not mask it in turn.
    pub fn breaker(&self, masker: &IrqInfo, i: u8, p: u8) -> Option<u8> {
        if masker.cs || (masker.basepri != 0 && p >= masker.basepri) {
            return None;
        }
        self.seen
            .iter()
            .find(|&&(k, j, q)| {
                (k == i || k == ALL_IRQS)
                    && j != i
                    && masker.handler.is_none_or(|(own, _)| own != j)
                    && masker.preemptible_by(q)
                    && !masker.masks(j, q)
            })
            .map(|&(_, j, _)| j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_are_reserved_distinct_and_classified() {
        let mut all = vec![CS_LOCK, IRQ_ALL_LOCK];
        for v in 0..=254u8 {
            all.extend([irq_lock(v), prio_lock(v), level_lock(v)]);
        }
        all.extend([level_lock(255), prio_lock(255)]);
        for i in [0u8, 5, 31, 200] {
            for p in [0u8, 1, 7, 255] {
                all.push(handler_lock(i, p));
                assert_eq!(LockKind::of(handler_lock(i, p)), LockKind::Handler(i, p));
            }
        }
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
        assert!(all.iter().all(|l| RESERVED_LOCKS.contains(l)));
        assert_eq!(LockKind::of(irq_lock(3)), LockKind::Irq(3));
        assert_eq!(LockKind::of(prio_lock(3)), LockKind::Prio(3));
        assert_eq!(LockKind::of(level_lock(3)), LockKind::Level(3));
        assert_eq!(LockKind::of(0x2000_1000), LockKind::Real);
        assert_eq!(LockKind::of(CS_LOCK), LockKind::Cs);
        assert_eq!(LockKind::of(IRQ_ALL_LOCK), LockKind::IrqAll);
    }

    #[test]
    fn masks_keep_out_only_the_handlers_they_mask() {
        let info = |ls: &[u32]| {
            let mut i = IrqInfo::default();
            ls.iter().for_each(|&l| i.add(l));
            i
        };
        let task = IrqInfo::default();
        let h0 = info(&[handler_lock(0, 2)]);
        let h1 = info(&[handler_lock(1, 1)]);
        let h2 = info(&[handler_lock(2, 2)]);
        assert!(!task.excluded(&h0));
        assert!(info(&[CS_LOCK]).excluded(&h0));
        assert!(info(&[IRQ_ALL_LOCK]).excluded(&h0));
        assert!(info(&[irq_lock(0)]).excluded(&h0));
        assert!(!info(&[irq_lock(0)]).excluded(&h1));
        assert!(info(&[prio_lock(2)]).excluded(&h0));
        assert!(!info(&[prio_lock(2)]).excluded(&h1));
        // Two maskers do not exclude each other.
        assert!(!info(&[irq_lock(0)]).excluded(&info(&[irq_lock(0)])));
        // Handlers: equal priorities exclude; the more urgent preempts unless masked.
        assert!(h0.excluded(&h2));
        assert!(!h0.excluded(&h1));
        assert!(info(&[handler_lock(0, 2), prio_lock(1)]).excluded(&h1));
        // A mask of a less urgent source does not help the more urgent handler.
        assert!(!info(&[handler_lock(1, 1), CS_LOCK]).excluded(&h0));
    }

    #[test]
    fn a_source_mask_is_broken_only_by_a_more_urgent_unmasked_handler_that_enables_it() {
        use jostle_kernel::event::Event;
        let info = |ls: &[u32]| {
            let mut i = IrqInfo::default();
            ls.iter().for_each(|&l| i.add(l));
            i
        };
        let h2 = IRQ_CONTEXT + 2;
        // Source 2 (priority 1) enables source 3; source 1 has priority 3.
        let trace = [
            Event::IrqEnter {
                t: h2,
                i: 2,
                p: 1,
                by: 0,
                f: 0,
            },
            Event::IrqMask {
                t: h2,
                s: 7,
                i: 3,
                on: 0,
            },
            Event::IrqExit { t: h2 },
            // A task's enable is no handler's.
            Event::IrqMask {
                t: 0,
                s: 8,
                i: 4,
                on: 0,
            },
        ];
        let u = Unmaskers::of(&trace);
        let isr_1 = info(&[handler_lock(1, 3), irq_lock(3)]);
        assert_eq!(u.breaker(&isr_1, 3, 0), Some(2));
        assert_eq!(u.breaker(&info(&[irq_lock(3)]), 3, 0), Some(2));
        assert_eq!(
            u.breaker(&info(&[IRQ_ALL_LOCK]), 3, 0),
            None,
            "source 2 masked too"
        );
        assert_eq!(
            u.breaker(&info(&[irq_lock(4)]), 4, 0),
            None,
            "enabled by a task"
        );
        // Not through the critical section or a priority mask.
        assert_eq!(u.breaker(&info(&[irq_lock(3), CS_LOCK]), 3, 0), None);
        assert_eq!(u.breaker(&info(&[irq_lock(3), prio_lock(1)]), 3, 2), None);
        // A context the unmasker cannot preempt, or one that masks it.
        assert_eq!(
            u.breaker(&info(&[handler_lock(1, 0), irq_lock(3)]), 3, 0),
            None
        );
        assert_eq!(u.breaker(&info(&[irq_lock(3), irq_lock(2)]), 3, 0), None);
    }
}
