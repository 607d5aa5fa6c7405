//! BUG: a lost wake-up that Embassy's own poll order hides. Two radio tasks (a pool of
//! two) each receive two frames, 5 ms apart, count them and notify the protocol task
//! through an `AtomicWaker`. The protocol task waits for "the next notification", takes the
//! frames counted so far, and yields while it processes them. The notification carries no
//! state: one sent while the protocol task is not registered (between taking the count and
//! waiting again) is lost, and the last frame is never processed.
//!
//! Under Embassy, the radios' deadlines fall on one tick of the 32,768 Hz clock, the timer
//! queue wakes both, and the executor polls both radios in one batch before the protocol
//! task the first one woke (its run queue takes the whole batch, and a task woken during a
//! batch waits for the next): the protocol task always sees both frames. Jostle's scheduler
//! may poll the protocol task between the two radios. The fix: wait on the state itself (a
//! `Signal`, or a check of the count after registering).
#![no_std]
#![no_main]

use core::future::poll_fn;
use core::sync::atomic::{AtomicU32, Ordering};
use core::task::Poll;
use embassy_executor::Spawner;
use embassy_futures::yield_now;
use embassy_sync::waitqueue::AtomicWaker;
use embassy_time::Timer;

const FRAMES: u32 = 4;

static RECEIVED: AtomicU32 = AtomicU32::new(0);
static FRAME_READY: AtomicWaker = AtomicWaker::new();

/// Waits for the next "frame ready" notification.
async fn next_notification() {
    let mut registered = false;
    poll_fn(|cx| {
        if registered {
            Poll::Ready(())
        } else {
            FRAME_READY.register(cx.waker());
            registered = true;
            Poll::Pending
        }
    })
    .await
}

#[embassy_executor::task(pool_size = 2)]
async fn radio() {
    for _ in 0..FRAMES / 2 {
        Timer::after_millis(5).await;
        RECEIVED.fetch_add(1, Ordering::Release);
        FRAME_READY.wake();
    }
}

#[embassy_executor::task]
async fn protocol() {
    let mut processed = 0;
    while processed < FRAMES {
        next_notification().await;
        processed += RECEIVED.swap(0, Ordering::Acquire);
        // Processing the frames: let the other tasks run meanwhile.
        yield_now().await;
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(protocol().unwrap());
    spawner.spawn(radio().unwrap());
    spawner.spawn(radio().unwrap());
}
