//! BUG: code written for one thread-mode executor, moved to two priorities. Two sensor
//! tasks take their readings on the same timer tick; the last one to publish hands the
//! batch to the uploader, a task of an `InterruptExecutor` on a more urgent line (as
//! Embassy's multi-priority examples set it up). The barometer publishes its raw reading,
//! then corrects it in place by its calibration offset, with no `.await` in between: on
//! one thread-mode executor nothing can run in between, and the uploader always saw the
//! corrected pressure. The interrupt executor preempts the barometer at the hand-off: when
//! the barometer publishes last, the uploader sends the raw pressure. Which sensor is last
//! is the order in which the thread-mode executor polls two tasks woken at one tick.
//! The fix: correct the reading before publishing it.
#![no_std]
#![no_main]

use core::sync::atomic::{AtomicU32, Ordering};
use cortex_m_rt::entry;
use embassy_executor::{Executor, InterruptExecutor};
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::signal::Signal;
use embassy_time::Timer;
use lm3s6965::{Interrupt, interrupt};
use panic_semihosting as _;

const SENSORS: u32 = 2;
const RAW_PRESSURE: u32 = 100_990;
const PRESSURE_OFFSET: u32 = 335;

static READINGS: [AtomicU32; SENSORS as usize] = [const { AtomicU32::new(0) }; SENSORS as usize];
static PUBLISHED: AtomicU32 = AtomicU32::new(0);
static BATCH_READY: Signal<CriticalSectionRawMutex, ()> = Signal::new();

static UPLOADS: InterruptExecutor = InterruptExecutor::new();

/// Stores a sensor's reading; the last of the batch wakes the uploader.
fn publish(slot: usize, value: u32) {
    READINGS[slot].store(value, Ordering::Relaxed);
    if PUBLISHED.fetch_add(1, Ordering::Relaxed) + 1 == SENSORS {
        BATCH_READY.signal(());
    }
}

#[embassy_executor::task]
async fn thermometer() {
    Timer::after_millis(10).await;
    publish(0, 215);
}

#[embassy_executor::task]
async fn barometer() {
    Timer::after_millis(10).await;
    publish(1, RAW_PRESSURE);
    // Nothing else runs before this task's next `.await`... in thread mode.
    READINGS[1].fetch_add(PRESSURE_OFFSET, Ordering::Relaxed);
}

#[embassy_executor::task]
async fn uploader() {
    BATCH_READY.wait().await;
    let pressure = READINGS[1].load(Ordering::Relaxed);
    assert_eq!(
        pressure,
        RAW_PRESSURE + PRESSURE_OFFSET,
        "uploaded an uncalibrated pressure"
    );
}

#[interrupt]
fn GPIOA() {
    // SAFETY: the handler of the line `UPLOADS` was started on.
    unsafe { UPLOADS.on_interrupt() }
}

#[entry]
fn main() -> ! {
    let mut core = cortex_m::Peripherals::take().unwrap();
    // The uploads' line: more urgent than thread mode (3 priority bits on this chip).
    // SAFETY: no priority-based critical section is in use yet.
    unsafe { core.NVIC.set_priority(Interrupt::GPIOA, 1 << 5) };
    let spawner = UPLOADS.start(Interrupt::GPIOA);
    spawner.spawn(uploader().unwrap());

    let executor = cortex_m::singleton!(: Executor = Executor::new()).unwrap();
    executor.run(|spawner| {
        spawner.spawn(thermometer().unwrap());
        spawner.spawn(barometer().unwrap());
    })
}
