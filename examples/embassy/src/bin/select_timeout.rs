//! A request with a deadline, through `select`: the first reply comes well before its
//! 50 ms deadline and wins; the second request gets no reply and times out exactly at its
//! deadline.
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_futures::select::{Either, select};
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::signal::Signal;
use embassy_time::{Duration, Instant, Timer};

static REQUEST: Signal<CriticalSectionRawMutex, u32> = Signal::new();
static REPLY: Signal<CriticalSectionRawMutex, u32> = Signal::new();

#[embassy_executor::task]
async fn peer() {
    // Answers the first request after 10 ms; ignores the rest.
    let id = REQUEST.wait().await;
    Timer::after_millis(10).await;
    REPLY.signal(id + 100);
}

#[embassy_executor::task]
async fn client() {
    REQUEST.signal(1);
    match select(REPLY.wait(), Timer::after_millis(50)).await {
        Either::First(reply) => assert_eq!(reply, 101),
        Either::Second(()) => panic!("the peer answers in 10 ms, before the deadline"),
    }
    let asked = Instant::now();
    REQUEST.signal(2);
    match select(REPLY.wait(), Timer::after_millis(50)).await {
        Either::First(reply) => panic!("no reply expected, got {reply}"),
        Either::Second(()) => assert_eq!(Instant::now() - asked, Duration::from_millis(50)),
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(peer().unwrap());
    spawner.spawn(client().unwrap());
}
