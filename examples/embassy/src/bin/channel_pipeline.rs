//! Producer/consumer over a bounded `Channel`: a sampler sends eight readings into a queue
//! of two, a filter receives them, checks they come in order and none is lost, and keeps a
//! running sum. Either side may be ahead: the queue makes the sampler wait when full.
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::channel::Channel;
use embassy_time::Timer;

const READINGS: u32 = 8;

static SAMPLES: Channel<CriticalSectionRawMutex, u32, 2> = Channel::new();

#[embassy_executor::task]
async fn sampler() {
    for n in 1..=READINGS {
        SAMPLES.send(n).await;
        if n % 3 == 0 {
            Timer::after_millis(1).await;
        }
    }
}

#[embassy_executor::task]
async fn filter() {
    let mut sum = 0;
    for expected in 1..=READINGS {
        let n = SAMPLES.receive().await;
        assert_eq!(n, expected, "readings out of order");
        sum += n;
    }
    assert_eq!(sum, READINGS * (READINGS + 1) / 2);
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(sampler().unwrap());
    spawner.spawn(filter().unwrap());
}
