//! A producer/consumer ring buffer with spin-waits: the producer spins while the ring is
//! full, the consumer while it is empty (`spin_loop`, as on a core). The bug: the producer
//! publishes the new head before it writes the slot, so the consumer may read a slot that is
//! not written yet.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::sync::atomic::{AtomicU32, Ordering};
use jostle::*;

const SLOTS: u32 = 4;
const ITEMS: u32 = 12;

static RING: [Shared<u32>; SLOTS as usize] = [const { Shared::new(0) }; SLOTS as usize];
static HEAD: AtomicU32 = AtomicU32::new(0);
static TAIL: AtomicU32 = AtomicU32::new(0);
static PRODUCER_STACK: Stack<4096> = Stack::new();

fn producer() {
    for item in 1..=ITEMS {
        let head = HEAD.load(Ordering::Relaxed);
        while head.wrapping_sub(TAIL.load(Ordering::Acquire)) == SLOTS {
            jostle::hint::spin_loop();
        }
        // Bug: the head is published before the slot is written.
        HEAD.store(head.wrapping_add(1), Ordering::Release);
        RING[(head % SLOTS) as usize].write(item);
    }
}

fn consumer() {
    for expected in 1..=ITEMS {
        let tail = TAIL.load(Ordering::Relaxed);
        while HEAD.load(Ordering::Acquire) == tail {
            jostle::hint::spin_loop();
        }
        let item = RING[(tail % SLOTS) as usize].read();
        assert_eq!(item, expected, "the consumer read a slot before it was written");
        TAIL.store(tail.wrapping_add(1), Ordering::Release);
    }
}

fn main_task() {
    let p = spawn(&PRODUCER_STACK, producer);
    consumer();
    p.join();
}

firmware!(main_task);
