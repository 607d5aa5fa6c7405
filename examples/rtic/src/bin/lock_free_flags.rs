//! `#[lock_free]`: a resource shared only by hardware tasks of one priority needs no lock,
//! since such tasks never preempt each other (RTIC checks the priorities at compile time).
//! `producer` (`GPIOA`) and `consumer` (`GPIOB`), both at priority 2, hand values over
//! through a lock-free mailbox: the producer fills it and pends the consumer, which runs
//! once the producer has returned, empties it and pends the producer again, three times.
//! `monitor` (priority 1) locks the shared `rounds` counter, which both also update.

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965, dispatchers = [SSI0])]
mod app {
    use cortex_m_semihosting::hprintln;
    use lm3s6965::Interrupt;

    #[shared]
    struct Shared {
        #[lock_free]
        mailbox: Option<u32>,
        rounds: u32,
    }

    #[local]
    struct Local {}

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        monitor::spawn().unwrap();
        rtic::pend(Interrupt::GPIOA);
        (
            Shared {
                mailbox: None,
                rounds: 0,
            },
            Local {},
        )
    }

    #[task(binds = GPIOA, priority = 2, shared = [mailbox, rounds], local = [next: u32 = 1])]
    fn producer(mut cx: producer::Context) {
        if cx.shared.rounds.lock(|r| *r) >= 3 || cx.shared.mailbox.is_some() {
            return;
        }
        *cx.shared.mailbox = Some(*cx.local.next);
        *cx.local.next += 1;
        rtic::pend(Interrupt::GPIOB);
    }

    #[task(binds = GPIOB, priority = 2, shared = [mailbox, rounds])]
    fn consumer(mut cx: consumer::Context) {
        if let Some(value) = cx.shared.mailbox.take() {
            let round = cx.shared.rounds.lock(|r| {
                *r += 1;
                *r
            });
            assert_eq!(value, round, "values arrive once and in order");
            rtic::pend(Interrupt::GPIOA);
        }
    }

    #[task(priority = 1, shared = [rounds])]
    async fn monitor(mut cx: monitor::Context) {
        let rounds = cx.shared.rounds.lock(|r| *r);
        hprintln!("monitor: {} rounds so far", rounds);
        assert!(rounds <= 3);
    }
}
