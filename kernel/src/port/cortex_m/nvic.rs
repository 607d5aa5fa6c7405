//! The NVIC, as the kernel uses it to run interrupt handlers at the points the scheduler
//! chooses: every declared line stays disabled except while the kernel fires it, so a real
//! peripheral event can only ever merge into a firing the scheduler decided on.

use crate::interrupt::Interrupt;

const ISER: *mut u32 = 0xE000_E100 as *mut u32;
const ICER: *mut u32 = 0xE000_E180 as *mut u32;
const ICPR: *mut u32 = 0xE000_E280 as *mut u32;
const IPR: *mut u8 = 0xE000_E400 as *mut u8;

fn bit(irq: u16) -> (usize, u32) {
    ((irq / 32) as usize, 1 << (irq % 32))
}

/// Disables `irq`'s line.
pub fn disable(irq: u16) {
    let (word, mask) = bit(irq);
    // SAFETY: writing a one to ICER disables that line only.
    unsafe { ICER.add(word).write_volatile(mask) }
}

/// Sets up the declared lines: disabled, nothing pending, hardware priorities that keep the
/// declared order ([`rank`]). Returns `false` when the NVIC implements fewer levels than
/// there are distinct priorities.
pub fn init(irqs: &[&Interrupt]) -> bool {
    let lines: crate::fixed::Vec<(u16, u8), 32> =
        irqs.iter().map(|q| (q.irq, q.source.priority)).collect();
    for &(irq, _) in lines.iter() {
        let (word, mask) = bit(irq);
        // SAFETY: the NVIC's registers for a line the firmware declared.
        unsafe {
            ICER.add(word).write_volatile(mask);
            ICPR.add(word).write_volatile(mask);
        }
    }
    rank(&lines)
}

/// Gives each line `(irq, priority)` the hardware priority of its rank: the rank of each
/// distinct priority, in the top bits of the priority byte, which are group (preempting)
/// priority bits whatever PRIGROUP says about the low ones, so that the NVIC's order is the
/// declared one. Returns `false` when the NVIC implements fewer levels than there are
/// distinct priorities.
pub fn rank(irqs: &[(u16, u8)]) -> bool {
    // SAFETY: the NVIC's priority bytes; an unimplemented low bit reads back as zero. The
    // probed line's byte is written again below.
    let implemented = unsafe {
        let probe = IPR.add(irqs.first().map_or(0, |q| q.0 as usize));
        let was = probe.read_volatile();
        probe.write_volatile(0xFF);
        let v = probe.read_volatile();
        probe.write_volatile(was);
        v
    };
    let mut distinct = crate::fixed::Vec::<u8, 32>::new();
    for &(_, p) in irqs {
        if !distinct.contains(&p) {
            let _ = distinct.push(p);
        }
    }
    // Bits for the ranks: at most what the NVIC implements, and at most 7 (with PRIGROUP 0,
    // bit 0 is a subpriority).
    let needed = u32::BITS - (distinct.len().max(1) as u32 - 1).leading_zeros();
    if needed > implemented.count_ones().min(7) {
        return false;
    }
    let shift = 8 - needed.max(1);
    for &(irq, p) in irqs {
        let rank = distinct.iter().filter(|&&o| o < p).count() as u32;
        // SAFETY: the NVIC's priority byte of a line the firmware declared.
        unsafe { IPR.add(irq as usize).write_volatile((rank << shift) as u8) }
    }
    true
}

/// Fires `irq` now: pended and enabled, the exception is taken before this returns (the
/// kernel fires only what is more urgent than the running context and unmasked).
pub fn fire(irq: u16) {
    let (word, mask) = bit(irq);
    // SAFETY: ISPR then ISER for a declared line; the barriers make the exception happen
    // here, before the next instruction.
    unsafe {
        (0xE000_E200 as *mut u32).add(word).write_volatile(mask);
        ISER.add(word).write_volatile(mask);
        core::arch::asm!("dsb", "isb");
    }
}
