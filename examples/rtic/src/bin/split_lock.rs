//! BUG: an atomicity violation across two lock sections. `pulse` (the `GPIOA` interrupt,
//! priority 2) counts pulses into a shared counter. The logger (priority 1) means to take
//! the count and reset it, but does so in two lock sections: it reads the count in one and
//! writes zero in the next. A pulse that lands between the two is wiped out: each section
//! is exclusive, the pair is not. Fix: take and reset inside one `lock`.
//!
//! The check at the end compares every pulse counted with every pulse reported or still
//! pending; the campaign finds the lost pulse (and predicts the read-write-write triple on
//! `count` across the two sections).

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965, dispatchers = [SSI0])]
mod app {
    use cortex_m_semihosting::hprintln;
    use lm3s6965::Interrupt;

    #[shared]
    struct Shared {
        count: u32,
        generated: u32,
    }

    #[local]
    struct Local {}

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        logger::spawn().unwrap();
        rtic::pend(Interrupt::GPIOA);
        (
            Shared {
                count: 0,
                generated: 0,
            },
            Local {},
        )
    }

    #[task(binds = GPIOA, priority = 2, shared = [count, generated])]
    fn pulse(mut cx: pulse::Context) {
        cx.shared.count.lock(|c| *c += 1);
        cx.shared.generated.lock(|g| *g += 1);
    }

    #[task(priority = 1, shared = [count, generated])]
    async fn logger(mut cx: logger::Context) {
        let mut reported = 0;
        for round in 0..3 {
            let seen = cx.shared.count.lock(|c| *c);
            hprintln!("round {}: {} pulses", round, seen);
            cx.shared.count.lock(|c| *c = 0);
            reported += seen;
        }
        let pending = cx.shared.count.lock(|c| *c);
        let generated = cx.shared.generated.lock(|g| *g);
        assert_eq!(reported + pending, generated, "a pulse was lost");
    }
}
