//! An RTIC app with a bug for Jostle to find. A sensor's interrupt (`GPIOA`, priority 2)
//! adds readings to a running total and counts them; the reporter (priority 1) takes the
//! total and the count to compute an average, but in two lock sections. A reading that
//! lands between the two makes the average wrong: each section is exclusive, the pair is
//! not. `cargo run --release` runs the campaign that finds it (exit 40, with the shrunk
//! interleaving and the `jostle replay` command).

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965, dispatchers = [SSI0])]
mod app {
    use cortex_m_semihosting::hprintln;
    use lm3s6965::Interrupt;

    #[shared]
    struct Shared {
        total: u32,
        count: u32,
    }

    #[local]
    struct Local {}

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        reporter::spawn().unwrap();
        rtic::pend(Interrupt::GPIOA);
        (Shared { total: 0, count: 0 }, Local {})
    }

    #[task(binds = GPIOA, priority = 2, shared = [total, count], local = [reading: u32 = 10])]
    fn sensor(mut cx: sensor::Context) {
        let reading = *cx.local.reading;
        *cx.local.reading += 10;
        (cx.shared.total, cx.shared.count).lock(|total, count| {
            *total += reading;
            *count += 1;
        });
    }

    #[task(priority = 1, shared = [total, count])]
    async fn reporter(mut cx: reporter::Context) {
        let total = cx.shared.total.lock(|t| *t);
        let count = cx.shared.count.lock(|c| *c);
        if count > 0 {
            let average = total / count;
            hprintln!("average of {} readings: {}", count, average);
            // Readings are 10, 20, 30, ...: the average of the first n is 5 * (n + 1).
            assert_eq!(average, 5 * (count + 1), "total and count from different moments");
        }
    }
}
