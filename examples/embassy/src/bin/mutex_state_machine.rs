//! A door controller's state machine behind an async `Mutex`: a button task and a sensor
//! task each drive it, every transition checked and made under one guard, with awaits
//! (the motor's travel time) only between transitions. The invariant — the lock is never
//! open while the door moves — holds in every interleaving.
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::raw::ThreadModeRawMutex;
use embassy_sync::mutex::Mutex;
use embassy_time::Timer;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Door {
    Closed,
    Opening,
    Open,
    Closing,
}

struct Controller {
    door: Door,
    locked: bool,
    cycles: u32,
}

static CONTROLLER: Mutex<ThreadModeRawMutex, Controller> = Mutex::new(Controller {
    door: Door::Closed,
    locked: true,
    cycles: 0,
});

/// Moves the door from `from` to `to` through `moving`, if it is at `from`; the motor takes
/// `travel` ms. Each step is checked and made under one guard.
async fn travel(from: Door, moving: Door, to: Door, travel: u64) -> bool {
    {
        let mut c = CONTROLLER.lock().await;
        if c.door != from {
            return false;
        }
        c.locked = false;
        c.door = moving;
    }
    Timer::after_millis(travel).await;
    let mut c = CONTROLLER.lock().await;
    assert_eq!(c.door, moving, "someone else moved the door");
    c.door = to;
    c.locked = to == Door::Closed;
    if to == Door::Closed {
        c.cycles += 1;
    }
    true
}

#[embassy_executor::task]
async fn button() {
    for _ in 0..3 {
        travel(Door::Closed, Door::Opening, Door::Open, 5).await;
        Timer::after_millis(2).await;
    }
}

#[embassy_executor::task]
async fn sensor() {
    for _ in 0..3 {
        travel(Door::Open, Door::Closing, Door::Closed, 5).await;
        Timer::after_millis(3).await;
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(button().unwrap());
    spawner.spawn(sensor().unwrap());
}
