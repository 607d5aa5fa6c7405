//! A calibration that holds an async `Mutex` across a `Timer`: the calibrator takes the
//! sensor's settings and keeps them locked while the sensor settles (an await), so that no
//! reader sees a half-applied calibration; two readers wait for the lock meanwhile.
//! Correct code: each reader sees either the old settings or the new ones, whole.
//!
//! embassy-sync's `Mutex` keeps one waker: the second reader's registration wakes the
//! first, whose poll registers again and wakes the second, and so on while the
//! calibrator's timer runs — on a board time passes while they poll and the timer fires.
//! Under a clock that moved only when no task is ready, every run would end at the step
//! limit.
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::raw::ThreadModeRawMutex;
use embassy_sync::mutex::Mutex;
use embassy_time::Timer;
use panic_semihosting as _;

struct Settings {
    gain: u32,
    offset: u32,
}

static SETTINGS: Mutex<ThreadModeRawMutex, Settings> = Mutex::new(Settings { gain: 1, offset: 0 });

#[embassy_executor::task]
async fn calibrator() {
    let mut settings = SETTINGS.lock().await;
    settings.gain = 3;
    // The sensor settles with the new gain before the offset is measured.
    Timer::after_millis(10).await;
    settings.offset = 7;
}

#[embassy_executor::task(pool_size = 2)]
async fn reader() {
    for _ in 0..3 {
        {
            let settings = SETTINGS.lock().await;
            let whole = (settings.gain, settings.offset) == (1, 0)
                || (settings.gain, settings.offset) == (3, 7);
            assert!(
                whole,
                "half-applied calibration: gain {} offset {}",
                settings.gain, settings.offset
            );
        }
        Timer::after_millis(1).await;
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(calibrator().unwrap());
    spawner.spawn(reader().unwrap());
    spawner.spawn(reader().unwrap());
}
