//! A correct single-producer single-consumer ring with spin-waits, as firmware writes one on a
//! single core: plain (volatile-like) head and tail indices, the producer spinning while the
//! ring is full, the consumer while it is empty, each publishing its index after its slot
//! access. No bug; but the analyses, seeing no synchronisation, predict races on the slots,
//! and RaceFuzzer holds one side at its slot access while the other spins waiting for it.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

const SLOTS: u32 = 2;
const ITEMS: u32 = 6;

static RING: [Shared<u32>; SLOTS as usize] = [const { Shared::new(0) }; SLOTS as usize];
static HEAD: Shared<u32> = Shared::new(0);
static TAIL: Shared<u32> = Shared::new(0);
static PRODUCER_STACK: Stack<4096> = Stack::new();

fn producer() {
    for item in 1..=ITEMS {
        let head = HEAD.read();
        while head.wrapping_sub(TAIL.read()) == SLOTS {
            jostle::hint::spin_loop();
        }
        RING[(head % SLOTS) as usize].write(item);
        HEAD.write(head.wrapping_add(1));
    }
}

fn main_task() {
    let p = spawn(&PRODUCER_STACK, producer);
    for expected in 1..=ITEMS {
        let tail = TAIL.read();
        while HEAD.read() == tail {
            jostle::hint::spin_loop();
        }
        assert_eq!(RING[(tail % SLOTS) as usize].read(), expected);
        TAIL.write(tail.wrapping_add(1));
    }
    p.join();
}

firmware!(main_task);
