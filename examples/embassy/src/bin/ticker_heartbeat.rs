//! A heartbeat on a `Ticker`: five beats 10 ms apart, each on time (virtual time: the
//! clock reads exactly the deadline), while a busy task keeps computing between them.
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_futures::yield_now;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::signal::Signal;
use embassy_time::{Duration, Instant, Ticker};

static BEAT: Signal<CriticalSectionRawMutex, u32> = Signal::new();

#[embassy_executor::task]
async fn heartbeat() {
    let start = Instant::now();
    let period = Duration::from_millis(10);
    let mut ticker = Ticker::every(period);
    for n in 1..=5u32 {
        ticker.next().await;
        assert_eq!(Instant::now(), start + period * n, "beat {n} late");
        BEAT.signal(n);
    }
}

#[embassy_executor::task]
async fn busy() {
    let mut beats = 0;
    while beats < 5 {
        // Work that yields but never sleeps: time stands still while it runs.
        for _ in 0..3 {
            yield_now().await;
        }
        beats = BEAT.wait().await;
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(heartbeat().unwrap());
    spawner.spawn(busy().unwrap());
}
