//! ConVul CVE-2016-9806 (Linux netlink `netlink_dump` double free); PERIOD
//! `evaluation/ConVul-CVE-Benchmarks/CVE-2016-9806/2016-9806.cpp`. 3 tasks: main (owns the
//! netlink socket) and two workers running `netlink_dump`, one global mutex. Each worker, under
//! the mutex, allocates an `sk_buff` (`cnt * 16` bytes, then `cnt *= 4`), sets its `sk` and
//! publishes it in `nlk->cb.skb`; after unlocking it frees `cb.skb`, re-read outside the lock.
//! Bug: double free (a panic; glibc's abort in SURW). t1 publishes A and unlocks, t2 publishes
//! B, and both free `cb.skb == B` (A leaks).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_cct::{NULL, Pool, Ptr};

/// The heap: one `sk_buff` per worker.
static SKBS: Pool<2> = Pool::new();
/// `sk_buff::sk`, per heap slot.
static SKB_SK: [Shared<Ptr>; 2] = [const { Shared::new(NULL) }; 2];
/// The netlink socket's `cb.skb` (the socket is on the heap, owned by main).
static CB_SKB: Shared<Ptr> = Shared::new(NULL);
/// The address of the socket's `sk` (a non-NULL pointer to main's object).
const SK: Ptr = 1;
static MUTEX: Mutex<()> = Mutex::new(());
static CNT: Shared<i32> = Shared::new(1);
static STACK1: Stack<2048> = Stack::new();
static STACK2: Stack<2048> = Stack::new();

fn netlink_dump() {
    let mut skb = NULL;
    let g = MUTEX.lock();
    if skb == NULL {
        // malloc(cnt * sizeof(struct sk_buff))
        let _bytes = CNT.read() * 16;
        skb = SKBS.alloc();
        let c = CNT.read();
        CNT.write(c * 4);
    }
    SKB_SK[SKBS.index(skb)].write(SK);
    CB_SKB.write(skb);
    g.unlock();

    SKBS.free(CB_SKB.read());
}

fn main_task() {
    let t1 = spawn(&STACK1, netlink_dump);
    let t2 = spawn(&STACK2, netlink_dump);
    t1.join();
    t2.join();
}

firmware!(main_task);
