//! A correct single-producer single-consumer ring with spin-waits: the producer spins while
//! the ring is full, the consumer while it is empty, and each publishes its index only after
//! its slot access. No bug: the plain slot accesses race only in the analyses' eyes (the
//! atomics order them), so RaceFuzzer holds one side at its slot while the other spins for it.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::sync::atomic::{AtomicU32, Ordering};
use jostle::*;

const SLOTS: u32 = 2;
const ITEMS: u32 = 6;

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
        RING[(head % SLOTS) as usize].write(item);
        HEAD.store(head.wrapping_add(1), Ordering::Release);
    }
}

fn main_task() {
    let p = spawn(&PRODUCER_STACK, producer);
    for expected in 1..=ITEMS {
        let tail = TAIL.load(Ordering::Relaxed);
        while HEAD.load(Ordering::Acquire) == tail {
            jostle::hint::spin_loop();
        }
        assert_eq!(RING[(tail % SLOTS) as usize].read(), expected);
        TAIL.store(tail.wrapping_add(1), Ordering::Release);
    }
    p.join();
}

firmware!(main_task);
