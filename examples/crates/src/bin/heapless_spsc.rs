//! heapless's `spsc::Queue` (from crates.io, built with its `portable-atomic` feature and
//! Jostle's portable-atomic shim patched in) between a producer task and a consumer task.
//! The queue is correct: every item arrives once, in order, whatever the interleaving. The
//! queue's index loads and stores are the shim's atomics, so each is a scheduling point and
//! an event: the scheduler interleaves the two tasks inside `enqueue` and `dequeue`.
//! `--arg 0`: items passed through the queue (default 8).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use core::ptr::addr_of_mut;
use heapless::spsc::{Producer, Queue};
use jostle::*;

/// Three usable slots (heapless 0.8 keeps one slot free).
static mut QUEUE: Queue<u32, 4> = Queue::new();
/// The producer's end, handed from the main task to the producer task (tasks are `fn()`).
static mut TX: Option<Producer<'static, u32, 4>> = None;
static PRODUCER: Stack<4096> = Stack::new();

fn items() -> u32 {
    arg_or(0, 8)
}

fn producer() {
    // SAFETY: the main task stored the end before spawning this task and does not touch it
    // again in this run.
    let tx = unsafe { (*addr_of_mut!(TX)).as_mut().expect("the producer's end") };
    for item in 1..=items() {
        let mut item = item;
        while let Err(back) = tx.enqueue(item) {
            item = back;
            hint::spin_loop();
        }
    }
}

fn main_task() {
    // SAFETY: the queue is split once per run, before either task uses it; each end has
    // one user.
    let mut rx = unsafe {
        let (tx, rx) = (*addr_of_mut!(QUEUE)).split();
        *addr_of_mut!(TX) = Some(tx);
        rx
    };
    let producer = spawn(&PRODUCER, producer);
    for expected in 1..=items() {
        let item = loop {
            match rx.dequeue() {
                Some(item) => break item,
                None => hint::spin_loop(),
            }
        };
        assert_eq!(
            item, expected,
            "the queue lost, repeated or reordered an item"
        );
    }
    producer.join();
}

firmware!(main_task);
