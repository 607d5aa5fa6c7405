//! Two workers share state through `ThreadModeRawMutex` primitives, for code that runs
//! only in thread mode: a blocking `Mutex` of per-worker totals, an async `Mutex` over a
//! shared log, held across an `.await` (each append reads, waits, then writes), and a
//! `Channel` on which each worker reports it is done. The reporter checks every total and
//! that no append was lost.
#![no_std]
#![no_main]

use core::cell::RefCell;
use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::Mutex as BlockingMutex;
use embassy_sync::blocking_mutex::raw::ThreadModeRawMutex;
use embassy_sync::channel::Channel;
use embassy_sync::mutex::Mutex;
use embassy_time::Timer;
use panic_semihosting as _;

const WORKERS: usize = 2;
const ROUNDS: u32 = 3;

static TOTALS: BlockingMutex<ThreadModeRawMutex, RefCell<[u32; WORKERS]>> =
    BlockingMutex::new(RefCell::new([0; WORKERS]));
static APPENDS: Mutex<ThreadModeRawMutex, u32> = Mutex::new(0);
static DONE: Channel<ThreadModeRawMutex, usize, WORKERS> = Channel::new();

#[embassy_executor::task(pool_size = 2)]
async fn worker(id: usize) {
    for n in 1..=ROUNDS {
        TOTALS.lock(|totals| totals.borrow_mut()[id] += n);
        let mut appends = APPENDS.lock().await;
        let before = *appends;
        // Writing the entry takes a while; the lock is held meanwhile.
        Timer::after_millis(1).await;
        *appends = before + 1;
    }
    DONE.send(id).await;
}

#[embassy_executor::task]
async fn reporter() {
    for _ in 0..WORKERS {
        DONE.receive().await;
    }
    let sum = ROUNDS * (ROUNDS + 1) / 2;
    TOTALS.lock(|totals| {
        for (id, total) in totals.borrow().iter().enumerate() {
            assert_eq!(*total, sum, "worker {id}'s total");
        }
    });
    assert_eq!(
        *APPENDS.lock().await,
        WORKERS as u32 * ROUNDS,
        "an append was lost"
    );
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(reporter().unwrap());
    for id in 0..WORKERS {
        spawner.spawn(worker(id).unwrap());
    }
}
