//! Events over a `PubSubChannel`: a publisher sends six events; a display and a logger
//! each subscribe and must see every event, in order (the publisher waits while a
//! subscriber's queue is full).
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::pubsub::{PubSubChannel, Subscriber};

const EVENTS: u32 = 6;

static EVENTS_BUS: PubSubChannel<CriticalSectionRawMutex, u32, 2, 2, 1> = PubSubChannel::new();

type EventSubscriber = Subscriber<'static, CriticalSectionRawMutex, u32, 2, 2, 1>;

#[embassy_executor::task]
async fn publisher() {
    let publisher = EVENTS_BUS.publisher().unwrap();
    for event in 1..=EVENTS {
        publisher.publish(event).await;
    }
}

#[embassy_executor::task]
async fn display(mut sub: EventSubscriber) {
    for expected in 1..=EVENTS {
        assert_eq!(sub.next_message_pure().await, expected);
    }
}

#[embassy_executor::task]
async fn logger(mut sub: EventSubscriber) {
    for expected in 1..=EVENTS {
        assert_eq!(sub.next_message_pure().await, expected);
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    // Subscribed before anything is published: a message published before a subscriber
    // exists is not delivered to it.
    spawner.spawn(display(EVENTS_BUS.subscriber().unwrap()).unwrap());
    spawner.spawn(logger(EVENTS_BUS.subscriber().unwrap()).unwrap());
    spawner.spawn(publisher().unwrap());
}
