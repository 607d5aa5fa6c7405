//! Measures the kernel's cost in instructions with SysTick under QEMU `-icount`
//! (which makes SysTick count instructions deterministically). Prints log frames:
//! `calibration`, `point` (a scheduling point that does not switch) and `pingpong` (two
//! tasks, Random strategy: some points switch). Run at trace level `results`.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static STACK1: Stack<4096> = Stack::new();
#[cfg_attr(not(target_os = "none"), allow(dead_code))]
static VALUE: Shared<u32> = Shared::new(0);
const N: u32 = 2000;

#[cfg(target_os = "none")]
mod clock {
    use cortex_m::peripheral::{SYST, syst::SystClkSource};

    pub fn start() {
        // SAFETY: nothing else uses SysTick in this firmware.
        let mut syst = unsafe { cortex_m::Peripherals::steal() }.SYST;
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(0x00FF_FFFF);
        syst.clear_current();
        syst.enable_counter();
    }

    /// The 24-bit down-counter.
    pub fn now() -> u32 {
        SYST::get_current()
    }

    /// Runs `n` iterations of a two-instruction loop.
    pub fn spin(n: u32) {
        // SAFETY: pure register arithmetic.
        unsafe {
            core::arch::asm!("1:", "subs {0}, #1", "bne 1b", inout(reg) n => _);
        }
    }
}

#[cfg(target_os = "none")]
fn measure(f: impl FnOnce()) -> u32 {
    clock::start();
    let t0 = clock::now();
    f();
    // Down-counter, modulo 2^24 (the first reload happens on the first tick).
    t0.wrapping_sub(clock::now()) & 0x00FF_FFFF
}

static LAST: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

fn count_switch() {
    use core::sync::atomic::Ordering::Relaxed;
    let me = current_task();
    if LAST.swap(me, Relaxed) != me {
        // Plain counter (not instrumented): only bookkeeping for the benchmark.
        SWITCH_COUNT.fetch_add(1, Relaxed);
    }
}

static SWITCH_COUNT: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

fn pinger() {
    for _ in 0..N {
        yield_now();
        count_switch();
    }
}

fn main_task() {
    #[cfg(target_os = "none")]
    {
        let spin = 100_000u32;
        let ticks = measure(|| clock::spin(spin));
        defmt::println!(
            "cost calibration instructions={=u32} ticks={=u32}",
            2 * spin,
            ticks
        );
        let ticks = measure(|| {
            for _ in 0..N {
                yield_now();
            }
        });
        defmt::println!("cost point points={=u32} ticks={=u32}", N, ticks);
        // An access at a site that is not a breakpoint: the path every instrumented
        // shared variable takes under an active strategy.
        let ticks = measure(|| {
            for _ in 0..N {
                VALUE.read();
            }
        });
        defmt::println!("cost access points={=u32} ticks={=u32}", N, ticks);
        let ticks = measure(|| {
            let h = spawn(&STACK1, pinger);
            pinger();
            h.join();
        });
        let switches = SWITCH_COUNT.load(core::sync::atomic::Ordering::Relaxed);
        defmt::println!(
            "cost pingpong points={=u32} switches={=u32} ticks={=u32}",
            2 * N,
            switches,
            ticks
        );
    }
    #[cfg(not(target_os = "none"))]
    {
        let h = spawn(&STACK1, pinger);
        pinger();
        h.join();
    }
}

firmware!(main_task);
