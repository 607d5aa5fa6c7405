//! The vector table in RAM, for a framework's firmware whose table is the application's
//! (cortex-m-rt's, with the PAC's lines): the kernel takes over SysTick (an application's
//! monotonic on the virtual clock, the idle watchdog) and PendSV (the idle watchdog's
//! scheduling point) without touching the application's other handlers. Copied once per
//! run, at the first [`redirect`].

use core::mem::MaybeUninit;

/// 128 entries (16 exceptions and up to 112 interrupt lines), aligned as VTOR requires a
/// table of that size. In `.uninit`: a warm restart reads its reset entries from it before
/// the next run copies it again.
#[repr(C, align(512))]
struct Vectors([u32; 128]);

#[unsafe(link_section = ".uninit.JOSTLE_VECTORS")]
static mut VECTORS: MaybeUninit<Vectors> = MaybeUninit::uninit();

/// SysTick's and PendSV's entries.
const SYSTICK: usize = 15;
const PENDSV: usize = 14;

unsafe extern "C" {
    static __vector_table: u32;
    fn DefaultHandler();
}

/// Points VTOR at a RAM copy of the vector table whose SysTick entry is the kernel's and,
/// when the application left PendSV to `DefaultHandler`, PendSV's too (the watchdog's).
pub(super) fn redirect() {
    // SAFETY: the System Control Block's VTOR and ICTR; the copy is written whole before
    // VTOR names it (a barrier between), and only handlers the table already had stay.
    unsafe {
        let scb = &*cortex_m::peripheral::SCB::PTR;
        let table = &raw mut VECTORS as *mut u32;
        let from = scb.vtor.read() as *const u32;
        if core::ptr::eq(from, table) {
            return;
        }
        // ICTR.INTLINESNUM: the NVIC implements 32 * (n + 1) lines.
        let ictr = (0xE000_E004 as *const u32).read_volatile() & 0xF;
        let n = (16 + 32 * (ictr as usize + 1)).min(128);
        for i in 0..n {
            table.add(i).write_volatile(from.add(i).read_volatile());
        }
        let entry = |f: extern "C" fn()| f as usize as u32 | 1;
        table
            .add(SYSTICK)
            .write_volatile(entry(super::systick::systick_exception));
        if pendsv_free() {
            table
                .add(PENDSV)
                .write_volatile(entry(super::watchdog::pendsv));
        }
        core::arch::asm!("dsb");
        scb.vtor.write(table as u32);
        core::arch::asm!("dsb", "isb");
    }
}

/// Is the application's PendSV the default handler (no task bound to it)?
pub(super) fn pendsv_free() -> bool {
    // SAFETY: cortex-m-rt's vector table in flash; `DefaultHandler`'s address only.
    unsafe {
        let flash = &raw const __vector_table;
        flash.add(PENDSV).read_volatile() & !1 == DefaultHandler as *const () as usize as u32 & !1
    }
}

/// The application's SysTick handler (the flash table's entry).
pub(super) fn application_systick() -> extern "C" fn() {
    // SAFETY: cortex-m-rt's vector table symbol; its 16th word is SysTick's handler.
    unsafe {
        let flash = &raw const __vector_table;
        core::mem::transmute::<u32, extern "C" fn()>(flash.add(SYSTICK).read_volatile())
    }
}
