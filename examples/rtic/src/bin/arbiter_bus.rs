//! An rtic-sync `Arbiter`: two tasks of different priorities share one bus (a stand-in
//! for an SPI or I2C peripheral) through it. Each transaction holds the arbiter's guard
//! across an `.await` (a delay while the "transfer" completes): the arbiter, not a
//! priority ceiling, keeps the other task out, so the bus's `busy` flag is never seen set
//! by a task that just got the bus.

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965, dispatchers = [SSI0, QEI0])]
mod app {
    use cortex_m_semihosting::hprintln;
    use rtic_monotonics::systick::prelude::*;
    use rtic_sync::arbiter::Arbiter;

    systick_monotonic!(Mono, 1_000);

    pub struct Bus {
        busy: bool,
        transfers: u32,
    }

    static BUS: Arbiter<Bus> = Arbiter::new(Bus {
        busy: false,
        transfers: 0,
    });

    #[shared]
    struct Shared {}

    #[local]
    struct Local {}

    #[init]
    fn init(cx: init::Context) -> (Shared, Local) {
        Mono::start(cx.core.SYST, 12_000_000);
        sensor::spawn().unwrap();
        display::spawn().unwrap();
        (Shared {}, Local {})
    }

    async fn transaction(who: &str) {
        let mut bus = BUS.access().await;
        assert!(!bus.busy, "{} found the bus busy", who);
        bus.busy = true;
        Mono::delay(2.millis()).await;
        bus.transfers += 1;
        bus.busy = false;
    }

    #[task(priority = 1)]
    async fn sensor(_: sensor::Context) {
        for _ in 0..3 {
            transaction("sensor").await;
        }
    }

    #[task(priority = 2)]
    async fn display(_: display::Context) {
        for _ in 0..3 {
            transaction("display").await;
            Mono::delay(1.millis()).await;
        }
        let transfers = BUS.access().await.transfers;
        hprintln!("display: {} transfers so far", transfers);
    }
}
