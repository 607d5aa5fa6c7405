//! A first Embassy app under Jostle, with a real bug: two sensors report through one
//! `Signal`, and the reporter waits for a report with a timeout equal to a sensor's
//! sampling period. When the timeout and a report come at the same tick, the reporter may
//! take the timeout, then read that late report as the next sensor's: the assertion fails.
//! `cargo run --release` runs the campaign that finds it (exit 40) and prints the
//! `jostle replay` command that shows it again.
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::signal::Signal;
use embassy_time::{Duration, Timer, with_timeout};

/// (sensor, reading)
static REPORT: Signal<CriticalSectionRawMutex, (u32, u32)> = Signal::new();
static ASK: Signal<CriticalSectionRawMutex, u32> = Signal::new();

#[embassy_executor::task]
async fn sensors() {
    for _ in 0..2 {
        let sensor = ASK.wait().await;
        // Sampling takes 20 ms.
        Timer::after_millis(20).await;
        REPORT.signal((sensor, sensor * 100));
    }
}

#[embassy_executor::task]
async fn reporter() {
    for sensor in 1..=2 {
        ASK.signal(sensor);
        if let Ok((from, reading)) = with_timeout(Duration::from_millis(20), REPORT.wait()).await {
            assert_eq!(from, sensor, "sensor {sensor} got sensor {from}'s reading {reading}");
        }
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(sensors().unwrap());
    spawner.spawn(reporter().unwrap());
}
