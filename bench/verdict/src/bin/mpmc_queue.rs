//! heapless's MpMcQueue (Vyukov's bounded queue) through the portable-atomic shim, the
//! situation of heapless issue 583: the queue starts full and each worker takes an item and
//! puts it back, so a put always has room. Yet a worker that has claimed its cell in
//! `dequeue` but not yet released it makes the other worker's `enqueue` find that cell
//! still taken: "full", and the item is lost.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use heapless::mpmc::Q2;
use jostle::*;

static QUEUE: Q2<u32> = Q2::new();
static WORKER_STACKS: [Stack<4096>; 2] = [const { Stack::new() }; 2];

fn worker() {
    for _ in 0..2 {
        if let Some(item) = QUEUE.dequeue() {
            assert!(
                QUEUE.enqueue(item).is_ok(),
                "the queue refused an item right after one was taken out"
            );
        }
    }
}

fn main_task() {
    for item in [1, 2] {
        assert!(QUEUE.enqueue(item).is_ok());
    }
    let a = spawn(&WORKER_STACKS[0], worker);
    let b = spawn(&WORKER_STACKS[1], worker);
    a.join();
    b.join();
}

firmware!(main_task);
