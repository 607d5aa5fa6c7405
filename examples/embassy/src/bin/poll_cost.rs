//! Not an example: the measuring app of `jostle bench` (the cost of a poll step). SysTick
//! under QEMU `-icount` counts instructions; a two-instruction loop calibrates it. One task
//! yields `N` times (each poll a step of its own: the executor's lock taken and released,
//! the self-wake), then two tasks yield `N` times each, taking turns.
#![no_std]
#![no_main]

use cortex_m::peripheral::{SYST, syst::SystClkSource};
use embassy_executor::Spawner;
use embassy_futures::yield_now;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::channel::Channel;
use panic_semihosting as _;

const N: u32 = 1000;

static DONE: Channel<CriticalSectionRawMutex, (), 2> = Channel::new();

/// Starts SysTick from its top, counting the core clock down, 24 bits.
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

#[embassy_executor::task(pool_size = 2)]
async fn spinner() {
    for _ in 0..N {
        yield_now().await;
    }
    DONE.send(()).await;
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
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
    for tasks in [1u32, 2] {
        start();
        let t0 = SYST::get_current();
        for _ in 0..tasks {
            spawner.spawn(spinner().unwrap());
        }
        for _ in 0..tasks {
            DONE.receive().await;
        }
        defmt::println!(
            "cost poll tasks={=u32} polls={=u32} ticks={=u32}",
            tasks,
            tasks * N,
            since(t0)
        );
    }
}
