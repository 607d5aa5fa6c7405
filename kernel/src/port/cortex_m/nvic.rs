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
/// declared order: the rank of each distinct declared priority, in the top bits of the
/// priority byte, which are group (preempting) priority bits whatever PRIGROUP says about
/// the low ones. Returns `false` when the NVIC implements fewer levels than there are
/// distinct priorities.
pub fn init(irqs: &[&Interrupt]) -> bool {
    // SAFETY: the NVIC's priority bytes; an unimplemented low bit reads back as zero.
    let implemented = unsafe {
        let probe = IPR.add(irqs.first().map_or(0, |q| q.irq as usize));
        probe.write_volatile(0xFF);
        let v = probe.read_volatile();
        probe.write_volatile(0);
        v
    };
    let mut distinct = crate::fixed::Vec::<u8, 32>::new();
    for q in irqs {
        if !distinct.contains(&q.source.priority) {
            let _ = distinct.push(q.source.priority);
        }
    }
    // Bits for the ranks: at most what the NVIC implements, and at most 7 (with PRIGROUP 0,
    // bit 0 is a subpriority).
    let needed = u32::BITS - (distinct.len().max(1) as u32 - 1).leading_zeros();
    if needed > implemented.count_ones().min(7) {
        return false;
    }
    let shift = 8 - needed.max(1);
    for q in irqs {
        let rank = irqs
            .iter()
            .filter(|o| o.source.priority < q.source.priority)
            .map(|o| o.source.priority)
            .fold(crate::fixed::Vec::<u8, 32>::new(), |mut seen, p| {
                if !seen.contains(&p) {
                    let _ = seen.push(p);
                }
                seen
            })
            .len() as u32;
        let (word, mask) = bit(q.irq);
        // SAFETY: the NVIC's registers for a line the firmware declared.
        unsafe {
            ICER.add(word).write_volatile(mask);
            ICPR.add(word).write_volatile(mask);
            IPR.add(q.irq as usize)
                .write_volatile((rank << shift) as u8);
        }
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
