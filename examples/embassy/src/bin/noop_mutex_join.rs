//! A `NoopRawMutex` channel between two futures of one task (no lock: it never leaves the
//! task). A sensor task sends raw samples over a `CriticalSectionRawMutex` channel; the
//! pipeline task joins a scaler (raw samples in, scaled ones into its local stage) and an
//! accumulator (scaled samples out of the stage), and checks the sum.
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_futures::join::join;
use embassy_sync::blocking_mutex::raw::{CriticalSectionRawMutex, NoopRawMutex};
use embassy_sync::channel::Channel;
use embassy_time::Timer;
use panic_semihosting as _;

const SAMPLES: u32 = 4;

static RAW: Channel<CriticalSectionRawMutex, u32, 2> = Channel::new();

#[embassy_executor::task]
async fn sensor() {
    for n in 1..=SAMPLES {
        Timer::after_millis(2).await;
        RAW.send(n).await;
    }
}

#[embassy_executor::task]
async fn pipeline() {
    let stage: Channel<NoopRawMutex, u32, 1> = Channel::new();
    let scaler = async {
        for _ in 0..SAMPLES {
            let raw = RAW.receive().await;
            stage.send(raw * 10).await;
        }
    };
    let accumulator = async {
        let mut sum = 0;
        for _ in 0..SAMPLES {
            sum += stage.receive().await;
        }
        sum
    };
    let ((), sum) = join(scaler, accumulator).await;
    assert_eq!(sum, 10 * SAMPLES * (SAMPLES + 1) / 2, "a sample was lost");
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(pipeline().unwrap());
    spawner.spawn(sensor().unwrap());
}
