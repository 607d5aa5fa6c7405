//! Spawning from a task: a supervisor, given the spawner, starts a worker for each of three
//! jobs as it goes, and collects their results over a `Channel`.
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::channel::Channel;
use embassy_time::Timer;

static RESULTS: Channel<CriticalSectionRawMutex, (u32, u32), 3> = Channel::new();

#[embassy_executor::task(pool_size = 3)]
async fn worker(job: u32) {
    Timer::after_millis(u64::from(4 - job)).await;
    RESULTS.send((job, job * job)).await;
}

#[embassy_executor::task]
async fn supervisor(spawner: Spawner) {
    for job in 1..=3 {
        spawner.spawn(worker(job).unwrap());
    }
    let mut done = [false; 3];
    for _ in 0..3 {
        let (job, square) = RESULTS.receive().await;
        assert_eq!(square, job * job);
        assert!(!done[job as usize - 1], "job {job} twice");
        done[job as usize - 1] = true;
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(supervisor(spawner).unwrap());
}
