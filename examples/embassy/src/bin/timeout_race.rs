//! BUG: a timeout that races its event. The controller asks the sensor for a reading and
//! waits at most 10 ms; a conversion takes exactly 10 ms. When the timeout is served first,
//! the controller moves on, and the late answer stays in the reply `Signal`: the next
//! request reads it as its own (a stale reading). The fix: tag replies and drop stale ones,
//! or reset the reply before each request, and give the timeout a margin.
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::signal::Signal;
use embassy_time::{Duration, Timer, with_timeout};

const REQUESTS: u32 = 2;

static REQUEST: Signal<CriticalSectionRawMutex, u32> = Signal::new();
static REPLY: Signal<CriticalSectionRawMutex, u32> = Signal::new();

#[embassy_executor::task]
async fn sensor() {
    for _ in 0..REQUESTS {
        let id = REQUEST.wait().await;
        // The conversion.
        Timer::after_millis(10).await;
        REPLY.signal(id * 10);
    }
}

#[embassy_executor::task]
async fn controller() {
    for id in 1..=REQUESTS {
        REQUEST.signal(id);
        match with_timeout(Duration::from_millis(10), REPLY.wait()).await {
            Ok(reading) => assert_eq!(reading, id * 10, "request {id} got a stale reading"),
            // Too slow: this reading is skipped.
            Err(_) => Timer::after_millis(1).await,
        }
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(sensor().unwrap());
    spawner.spawn(controller().unwrap());
}
