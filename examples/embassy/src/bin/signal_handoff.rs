//! A sensor task samples every 10 ms and hands each reading to a logger through a
//! `Signal`; the logger checks the readings arrive in order, then exits.
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::signal::Signal;
use embassy_time::Timer;

static READING: Signal<CriticalSectionRawMutex, u32> = Signal::new();

#[embassy_executor::task]
async fn sensor() {
    for n in 1..=3 {
        Timer::after_millis(10).await;
        READING.signal(n);
    }
}

#[embassy_executor::task]
async fn logger() {
    let mut last = 0;
    while last < 3 {
        let n = READING.wait().await;
        assert!(n > last, "reading {n} after {last}");
        last = n;
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(sensor().unwrap());
    spawner.spawn(logger().unwrap());
}
