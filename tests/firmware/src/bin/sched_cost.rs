//! Measures the kernel's cost in instructions with SysTick under QEMU `-icount`
//! (which makes SysTick count instructions deterministically). Prints log frames:
//! `calibration`, `solo` (a lone task's yield, watched for starvation), `point` (a scheduling
//! point that does not switch) and `pingpong` (two tasks, Random strategy: some points
//! switch). Run at trace level `results`.
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

/// Was the last task to come here another (a switch)? Loads and stores only: ARMv6-M has
/// no atomic read-modify-write, and nothing else touches these (no handler).
fn switched_here() -> bool {
    use core::sync::atomic::Ordering::Relaxed;
    let me = current_task();
    let last = LAST.load(Relaxed);
    LAST.store(me, Relaxed);
    last != me
}

fn count_switch() {
    use core::sync::atomic::Ordering::Relaxed;
    if switched_here() {
        // Plain counter (not instrumented): only bookkeeping for the benchmark.
        SWITCH_COUNT.store(SWITCH_COUNT.load(Relaxed) + 1, Relaxed);
    }
}

static SWITCH_COUNT: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

fn pinger() {
    for _ in 0..N {
        yield_now();
        count_switch();
    }
}

/// The ping-pong again, each point timed on its own from the yield's call to the return
/// in whichever task goes on: points that switched and points that did not, summed apart,
/// so that a switch's figure is its own point's (the draw included), not the average's
/// remainder. The timing's own cost is measured around an empty call and taken off.
#[cfg(target_os = "none")]
mod split {
    use super::*;
    use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
    use jostle_test_firmware::clock;

    /// The clock when the last point was entered (by whichever task).
    static ENTERED: AtomicU32 = AtomicU32::new(0);
    /// Ticks and points: [stayed, switched].
    static TICKS: [AtomicU32; 2] = [AtomicU32::new(0), AtomicU32::new(0)];
    static POINTS: [AtomicU32; 2] = [AtomicU32::new(0), AtomicU32::new(0)];

    /// One timed call of `f`, filed by whether the task that returns is the one that called.
    #[inline(always)]
    fn timed(f: impl FnOnce()) {
        ENTERED.store(clock::now(), Relaxed);
        f();
        let ticks = ENTERED.load(Relaxed).wrapping_sub(clock::now()) & 0x00FF_FFFF;
        let switched = usize::from(switched_here());
        TICKS[switched].store(TICKS[switched].load(Relaxed) + ticks, Relaxed);
        POINTS[switched].store(POINTS[switched].load(Relaxed) + 1, Relaxed);
    }

    #[inline(never)]
    fn nothing() {
        core::hint::black_box(());
    }

    fn timed_pinger() {
        for _ in 0..N {
            timed(yield_now);
        }
    }

    fn reset() {
        for i in 0..2 {
            TICKS[i].store(0, Relaxed);
            POINTS[i].store(0, Relaxed);
        }
    }

    pub fn measure_points() {
        clock::start();
        reset();
        LAST.store(current_task(), Relaxed);
        for _ in 0..N {
            timed(nothing);
        }
        let overhead = TICKS[0].load(Relaxed);
        reset();
        let h = spawn(&STACK1, timed_pinger);
        timed_pinger();
        h.join();
        defmt::println!(
            "cost split stayed={=u32} stayed_ticks={=u32} switched={=u32} switched_ticks={=u32} overhead_points={=u32} overhead_ticks={=u32}",
            POINTS[0].load(Relaxed),
            TICKS[0].load(Relaxed),
            POINTS[1].load(Relaxed),
            TICKS[1].load(Relaxed),
            N,
            overhead
        );
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
        // A lone task with nothing else able to act is watched (every point through the
        // general loop: does it starve?): its yields, timed first. Then a timer far away
        // keeps it from being alone in that sense (a firmware's periodic timer does as
        // much), and its points take the lean path, as every task's do beside others.
        let ticks = measure(|| {
            for _ in 0..N {
                yield_now();
            }
        });
        defmt::println!("cost solo points={=u32} ticks={=u32}", N, ticks);
        jostle::clock::set_timer(0x7E57, u64::MAX, jostle::clock::TimerAction::Wake(0x7E57));
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
        jostle::clock::cancel_timer(0x7E57);
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
        split::measure_points();
    }
    #[cfg(not(target_os = "none"))]
    {
        let h = spawn(&STACK1, pinger);
        pinger();
        h.join();
    }
}

firmware!(main_task);
