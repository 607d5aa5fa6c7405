//! BUG (historical, embassy-sync 0.7.2): `Signal::reset` dropped the waker of a task
//! waiting on the signal, so the next `signal` found nobody to wake and the waiter hung
//! ("Fix wakers getting dropped by `Signal::reset`", embassy-sync 0.8.0, embassy-rs/embassy
//! PR #4598). A command processor waits for commands; a supervisor discards a stale command
//! with `reset` before it sends a fresh one. When the processor is already waiting, the
//! reset drops its waker and the fresh command never wakes it: a lost wake-up. This
//! project pins embassy-sync 0.7.2; with 0.8.0 the same source passes.
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::signal::Signal;
use embassy_time::Timer;

static COMMAND: Signal<CriticalSectionRawMutex, u32> = Signal::new();

#[embassy_executor::task]
async fn processor() {
    for expected in 1..=2 {
        let command = COMMAND.wait().await;
        assert_eq!(command, expected);
    }
}

#[embassy_executor::task]
async fn supervisor() {
    for command in 1..=2 {
        // Discard whatever was not taken yet, then send the fresh command.
        COMMAND.reset();
        COMMAND.signal(command);
        Timer::after_millis(5).await;
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(processor().unwrap());
    spawner.spawn(supervisor().unwrap());
}
