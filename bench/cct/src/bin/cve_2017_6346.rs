//! ConVul CVE-2017-6346 (Linux AF_PACKET `fanout_add` rollover race); PERIOD
//! `evaluation/ConVul-CVE-Benchmarks/CVE-2017-6346/2017-6346.cpp`. 3 tasks: main (owns the
//! packet socket) and two workers running `fanout_add` (the first yields first: `usleep(500)`),
//! one mutex. Each allocates a rollover object into the shared `po->rollover`, re-reads the
//! pointer to set its `num` (an atomic store), takes and releases the mutex (`err = -EINVAL`),
//! then frees `po->rollover` (re-read again) and sets it to NULL. Bug: NULL dereference or
//! double free (a panic; SIGSEGV / glibc abort in SURW): the other worker's `po->rollover =
//! NULL` lands between this worker's allocation and its `num` store, or both read the same
//! pointer for `kfree`. (Use-after-free writes are silent unless `--arg 0` is non-zero.)
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_cct::{NULL, Pool, Ptr};

const PACKET_FANOUT_ROLLOVER: u16 = 3;
const PACKET_FANOUT_FLAG_ROLLOVER: u16 = 0x1000;
const EINVAL: i32 = 22;
const ENOMEM: i32 = 12;

/// The heap: one `packet_rollover` per worker.
static ROLLOVERS: Pool<2> = Pool::new();
/// `packet_rollover::num` (a `std::atomic_int`, only stored to: one plain store each).
static ROLLOVER_NUM: [Shared<i32>; 2] = [const { Shared::new(0) }; 2];
/// `pktsk.rollover` (the packet socket is on main's stack).
static PO_ROLLOVER: Shared<Ptr> = Shared::new(NULL);
static FANOUT_MUTEX: Mutex<()> = Mutex::new(());
static STACK1: Stack<2048> = Stack::new();
static STACK2: Stack<2048> = Stack::new();

/// `kfree`: NULL is skipped.
fn kfree(p: Ptr) {
    if p != NULL {
        ROLLOVERS.free(p);
    }
}

fn fanout_add(type_flags: u16) -> i32 {
    let ty = type_flags & 0xff;
    if ty == PACKET_FANOUT_ROLLOVER || type_flags & PACKET_FANOUT_FLAG_ROLLOVER != 0 {
        PO_ROLLOVER.write(ROLLOVERS.alloc()); // kzalloc
        if PO_ROLLOVER.read() == NULL {
            return -ENOMEM;
        }
        let _shown = PO_ROLLOVER.read(); // printf("... po->rollover = %p", po->rollover)
        // atomic_long_set(&po->rollover->num, 0)
        let r = ROLLOVERS.index(PO_ROLLOVER.read());
        ROLLOVER_NUM[r].write(0);
    }

    let g = FANOUT_MUTEX.lock();
    let err = -EINVAL;
    g.unlock();

    if err != 0 {
        kfree(PO_ROLLOVER.read());
        PO_ROLLOVER.write(NULL);
    }
    err
}

fn thread1() {
    yield_now(); // usleep(500)
    fanout_add(3);
}

fn thread2() {
    fanout_add(3);
}

fn main_task() {
    let t1 = spawn(&STACK1, thread1);
    let t2 = spawn(&STACK2, thread2);
    t1.join();
    t2.join();
}

firmware!(main_task);
