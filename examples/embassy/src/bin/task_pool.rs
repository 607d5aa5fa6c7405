//! A task pool: three instances of one worker task take jobs from a shared `Channel` and
//! report to a collector, which checks that every job was done exactly once.
//!
//! No bug, but a cost a long search shows: a `Channel` keeps one receiver's waker, and a
//! receiver that registers wakes the one it replaces, so idle workers wake each other in
//! turn while the queue is empty (a busy ping-pong, on hardware too). A strategy that holds
//! the dispatcher back lets them spin to the step limit: `--budget 3000` reports it as a
//! suspected livelock (exit 0: not a failure).
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::channel::Channel;
use embassy_time::Timer;

const JOBS: u32 = 6;

static JOBS_QUEUE: Channel<CriticalSectionRawMutex, u32, 2> = Channel::new();
static DONE: Channel<CriticalSectionRawMutex, u32, 2> = Channel::new();

#[embassy_executor::task(pool_size = 3)]
async fn worker() {
    loop {
        let job = JOBS_QUEUE.receive().await;
        if job == 0 {
            break;
        }
        Timer::after_millis(u64::from(job % 3)).await;
        DONE.send(job).await;
    }
}

#[embassy_executor::task]
async fn dispatcher() {
    for job in 1..=JOBS {
        JOBS_QUEUE.send(job).await;
    }
    // One stop for each worker.
    for _ in 0..3 {
        JOBS_QUEUE.send(0).await;
    }
}

#[embassy_executor::task]
async fn collector() {
    let mut seen = 0u32;
    for _ in 0..JOBS {
        let job = DONE.receive().await;
        assert!(seen & (1 << job) == 0, "job {job} done twice");
        seen |= 1 << job;
    }
    assert_eq!(seen, ((1 << (JOBS + 1)) - 1) & !1);
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    for _ in 0..3 {
        spawner.spawn(worker().unwrap());
    }
    spawner.spawn(dispatcher().unwrap());
    spawner.spawn(collector().unwrap());
}
