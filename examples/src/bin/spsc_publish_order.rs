//! A hand-written single-producer single-consumer ring whose producer publishes the new head
//! index before it writes the slot: the consumer, seeing the index, reads a slot that still
//! holds an old value. The fix is to write the slot first, then store the head (Release).
//! `--arg 0`: items passed through the ring (default 6).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::sync::atomic::{AtomicUsize, Ordering};
use jostle::*;

const CAPACITY: usize = 4;
static SLOTS: [Shared<u32>; CAPACITY] = [const { Shared::new(0) }; CAPACITY];
/// Next slot the producer fills, and next slot the consumer empties (both free-running).
static HEAD: AtomicUsize = AtomicUsize::new(0);
static TAIL: AtomicUsize = AtomicUsize::new(0);
static PRODUCER: Stack<TASK_STACK_BYTES> = Stack::new();

fn items() -> u32 {
    arg_or(0, 6)
}

fn producer() {
    for item in 1..=items() {
        let head = HEAD.load(Ordering::Relaxed);
        while head - TAIL.load(Ordering::Acquire) == CAPACITY {
            hint::spin_loop();
        }
        // The bug: the index is published before the slot is written.
        HEAD.store(head + 1, Ordering::Release);
        SLOTS[head % CAPACITY].write(item);
    }
}

fn consumer() {
    for expected in 1..=items() {
        let tail = TAIL.load(Ordering::Relaxed);
        while HEAD.load(Ordering::Acquire) == tail {
            hint::spin_loop();
        }
        let item = SLOTS[tail % CAPACITY].read();
        assert_eq!(item, expected, "consumed a slot before it was written");
        TAIL.store(tail + 1, Ordering::Release);
    }
}

fn main_task() {
    let p = spawn(&PRODUCER, producer);
    consumer();
    p.join();
}

firmware!(main_task);
