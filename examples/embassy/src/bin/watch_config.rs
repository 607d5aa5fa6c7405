//! Configuration broadcast over a `Watch`: a configurator publishes three versions; two
//! consumers follow the latest one (they may skip versions, never see one go back).
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::watch::Watch;
use embassy_time::Timer;

#[derive(Clone, Copy)]
struct Config {
    version: u32,
    rate_hz: u32,
}

const LAST: u32 = 3;

static CONFIG: Watch<CriticalSectionRawMutex, Config, 2> = Watch::new();

#[embassy_executor::task]
async fn configurator() {
    let sender = CONFIG.sender();
    for version in 1..=LAST {
        sender.send(Config {
            version,
            rate_hz: 100 * version,
        });
        Timer::after_millis(4).await;
    }
}

#[embassy_executor::task(pool_size = 2)]
async fn consumer() {
    let mut rx = CONFIG.receiver().unwrap();
    let mut seen = 0;
    while seen < LAST {
        let config = rx.changed().await;
        assert!(
            config.version > seen,
            "version {} after {seen}",
            config.version
        );
        assert_eq!(config.rate_hz, 100 * config.version);
        seen = config.version;
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(consumer().unwrap());
    spawner.spawn(consumer().unwrap());
    spawner.spawn(configurator().unwrap());
}
