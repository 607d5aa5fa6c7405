//! BUG: a priority assumption that holds only until a more urgent task touches the state.
//! The event counter was written for two tasks of priority 1, which never preempt each
//! other: so `count_event` reads and writes it with a plain load and store instead of a
//! read-modify-write. Then a watchdog interrupt (`GPIOE`, priority 2) started counting its
//! events too: when it fires between a task's load and store, that task's store writes
//! back an old value and the watchdog's event is lost. Fix: `fetch_add`.

#![no_std]
#![no_main]

use panic_semihosting as _;

use portable_atomic::{AtomicU32, Ordering};

/// Every event counted (by `count_event`).
static EVENTS: AtomicU32 = AtomicU32::new(0);
/// The watchdog's events, counted apart (to check the total).
static WATCHDOG: AtomicU32 = AtomicU32::new(0);
/// Tasks of priority 1 that are done.
static DONE: AtomicU32 = AtomicU32::new(0);

/// "Only priority-1 tasks count: they cannot preempt each other."
fn count_event() {
    let n = EVENTS.load(Ordering::Relaxed);
    EVENTS.store(n + 1, Ordering::Relaxed);
}

#[rtic::app(device = lm3s6965, dispatchers = [SSI0])]
mod app {
    use super::{count_event, Ordering, DONE, EVENTS, WATCHDOG};
    use cortex_m_semihosting::hprintln;

    #[shared]
    struct Shared {}

    #[local]
    struct Local {}

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        rx::spawn().unwrap();
        tx::spawn().unwrap();
        (Shared {}, Local {})
    }

    #[task(priority = 1)]
    async fn rx(_: rx::Context) {
        for _ in 0..3 {
            count_event();
        }
        finish();
    }

    #[task(priority = 1)]
    async fn tx(_: tx::Context) {
        for _ in 0..3 {
            count_event();
        }
        finish();
    }

    fn finish() {
        if DONE.fetch_add(1, Ordering::Relaxed) + 1 == 2 {
            let (events, watchdog) = (
                EVENTS.load(Ordering::Relaxed),
                WATCHDOG.load(Ordering::Relaxed),
            );
            hprintln!("{} events, {} from the watchdog", events, watchdog);
            assert_eq!(events, 6 + watchdog, "an event was lost");
        }
    }

    #[task(binds = GPIOE, priority = 2)]
    fn watchdog(_: watchdog::Context) {
        WATCHDOG.fetch_add(1, Ordering::Relaxed);
        count_event();
    }
}
