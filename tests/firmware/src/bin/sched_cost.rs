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
use jostle_test_firmware::clock::{self, measure};

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
