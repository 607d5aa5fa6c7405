//! Not an example: the measuring app of `jostle bench` (what a lock and a dispatched poll
//! cost under Jostle). SysTick under QEMU `-icount` counts instructions; a two-instruction
//! loop calibrates it. The task locks an uncontended resource `N` times (the lock and the
//! unlock, each a scheduling point, and the section's read and write of the resource),
//! then yields `N` times (each yield a wake, a pend of the dispatcher, its firing and the
//! poll of the task).

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965, dispatchers = [SSI0])]
mod app {
    use core::future::poll_fn;
    use core::task::Poll;
    use cortex_m::peripheral::{syst::SystClkSource, SYST};

    const N: u32 = 1000;

    #[shared]
    struct Shared {
        counter: u32,
    }

    #[local]
    struct Local {}

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        measure::spawn().unwrap();
        (Shared { counter: 0 }, Local {})
    }

    /// Starts SysTick from its top, counting the core clock down, 24 bits, no interrupt.
    fn start() {
        // SAFETY: nothing else uses SysTick in this app.
        let mut syst = unsafe { cortex_m::Peripherals::steal() }.SYST;
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(0x00FF_FFFF);
        syst.clear_current();
        syst.enable_counter();
    }

    fn since(t0: u32) -> u32 {
        t0.wrapping_sub(SYST::get_current()) & 0x00FF_FFFF
    }

    /// Returns `Pending` once, waking itself: one more poll.
    async fn yield_now() {
        let mut yielded = false;
        poll_fn(|cx| {
            if yielded {
                Poll::Ready(())
            } else {
                yielded = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        })
        .await
    }

    #[task(priority = 1, shared = [counter])]
    async fn measure(mut cx: measure::Context) {
        start();
        let spin = 100_000u32;
        let t0 = SYST::get_current();
        // SAFETY: pure register arithmetic: two instructions an iteration.
        unsafe { core::arch::asm!("1:", "subs {0}, #1", "bne 1b", inout(reg) spin => _) };
        defmt::println!(
            "cost calibration instructions={=u32} ticks={=u32}",
            2 * spin,
            since(t0)
        );
        start();
        let t0 = SYST::get_current();
        for _ in 0..N {
            cx.shared.counter.lock(|c| *c += 1);
        }
        defmt::println!("cost lock locks={=u32} ticks={=u32}", N, since(t0));
        start();
        let t0 = SYST::get_current();
        for _ in 0..N {
            yield_now().await;
        }
        defmt::println!("cost poll polls={=u32} ticks={=u32}", N, since(t0));
    }
}
