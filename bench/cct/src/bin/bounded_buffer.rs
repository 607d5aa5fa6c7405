//! Inspect_benchmarks/boundedBuffer: the Inspect bounded buffer with an injected error, via
//! SCTBench; PERIOD `evaluation/Inspect_benchmarks/boundedBuffer/boundedBuffer.c`. 5 tasks: main,
//! 2 producers and 2 consumers (4 items each) on a buffer of `max_size = 3` (2 usable slots),
//! one mutex and the condition variables `not_full`/`not_empty` (signalled only when the
//! program's waiter counts `p_wait`/`c_wait` are positive). Bug: assertion (`reach_error`).
//! `get` waits until the buffer is non-empty, then releases and re-takes the mutex (the
//! injected gap) before taking an item; it fails when another consumer takes the last item in
//! that gap, so the first finds the buffer empty.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_cct::CondVar;

const BOUNDED_BUF_VALID: u32 = 0xACDEFA;
const EINVAL: i32 = 22;
const MAX_SIZE: usize = 3;
const PRODUCER_SUM: usize = 2;
const CONSUMER_SUM: usize = 2;
const ITEMS: u32 = 4;

// The buffer (on main's stack in the C).
static VALID: Shared<u32> = Shared::new(0);
static MUTEX: Mutex<()> = Mutex::new(());
static NOT_FULL: CondVar = CondVar::new();
static NOT_EMPTY: CondVar = CondVar::new();
static ITEM_NUM: Shared<usize> = Shared::new(0);
static MAX: Shared<usize> = Shared::new(0);
static HEAD: Shared<usize> = Shared::new(0);
static REAR: Shared<usize> = Shared::new(0);
static P_WAIT: Shared<usize> = Shared::new(0);
static C_WAIT: Shared<usize> = Shared::new(0);
static BUF: [Shared<u8>; MAX_SIZE] = [const { Shared::new(0) }; MAX_SIZE];
static PRODUCER_STACKS: [Stack<2048>; PRODUCER_SUM] = [const { Stack::new() }; PRODUCER_SUM];
static CONSUMER_STACKS: [Stack<2048>; CONSUMER_SUM] = [const { Stack::new() }; CONSUMER_SUM];

fn bounded_buf_init(sz: usize) {
    VALID.write(BOUNDED_BUF_VALID);
    ITEM_NUM.write(0);
    MAX.write(sz);
    HEAD.write(0);
    REAR.write(0);
    // calloc of the slots
    for slot in &BUF {
        slot.write(0);
    }
    HEAD.write(0);
    REAR.write(0);
    P_WAIT.write(0);
    C_WAIT.write(0);
}

fn bounded_buf_destroy() -> i32 {
    if VALID.read() != BOUNDED_BUF_VALID {
        return EINVAL;
    }
    let g = MUTEX.lock();
    VALID.write(0);
    g.unlock();
    // Free the items still in the buffer (none: there are as many gets as puts).
    if REAR.read() >= HEAD.read() {
        let mut i = HEAD.read();
        while i < REAR.read() {
            free_item(BUF[i].read());
            i += 1;
        }
    } else {
        let mut i = HEAD.read();
        while i < MAX.read() {
            free_item(BUF[i].read());
            i += 1;
        }
        let mut i = 0;
        while i < REAR.read() {
            free_item(BUF[i].read());
            i += 1;
        }
    }
    0
}

/// `free(bbuf->buf[i])`: the items are letters cast to pointers, which glibc refuses.
fn free_item(item: u8) {
    panic!("free(): invalid pointer {}", item);
}

fn bounded_buf_put(item: u8) -> i32 {
    if VALID.read() != BOUNDED_BUF_VALID {
        return EINVAL;
    }
    let mut g = MUTEX.lock();
    if (REAR.read() + 1) % MAX.read() == HEAD.read() {
        let p = P_WAIT.read();
        P_WAIT.write(p + 1);
        while (REAR.read() + 1) % MAX.read() == HEAD.read() {
            g = NOT_FULL.wait(&MUTEX, g);
        }
        let p = P_WAIT.read();
        P_WAIT.write(p - 1);
    }
    BUF[REAR.read()].write(item);
    let rear = (REAR.read() + 1) % MAX.read();
    REAR.write(rear);
    if C_WAIT.read() > 0 {
        NOT_EMPTY.signal();
    }
    g.unlock();
    0
}

fn bounded_buf_get() -> Result<u8, i32> {
    if VALID.read() != BOUNDED_BUF_VALID {
        return Err(EINVAL);
    }
    let mut g = MUTEX.lock();
    if HEAD.read() == REAR.read() {
        let c = C_WAIT.read();
        C_WAIT.write(c + 1);
        while HEAD.read() == REAR.read() {
            g = NOT_EMPTY.wait(&MUTEX, g);
        }
        let c = C_WAIT.read();
        C_WAIT.write(c - 1);
    }
    // The injected error: the mutex is released and taken again.
    g.unlock();
    let g = MUTEX.lock();
    if HEAD.read() == REAR.read() {
        panic!("reach_error: get from an empty buffer");
    }
    let item = BUF[HEAD.read()].read();
    let head = (HEAD.read() + 1) % MAX.read();
    HEAD.write(head);
    if P_WAIT.read() > 0 {
        NOT_FULL.signal();
    }
    g.unlock();
    Ok(item)
}

fn producer_routine() {
    for i in 0..ITEMS {
        // `'a' + abs(rand()) % 26` in the C: any letter will do.
        let ch = b'a' + (i % 26) as u8;
        let status = bounded_buf_put(ch);
        assert!(status == 0, "put failed");
    }
}

fn consumer_routine() {
    for _ in 0..ITEMS {
        let status = bounded_buf_get();
        assert!(status.is_ok(), "get failed");
    }
}

fn main_task() {
    bounded_buf_init(MAX_SIZE);
    let producers: [JoinHandle; PRODUCER_SUM] =
        core::array::from_fn(|i| spawn(&PRODUCER_STACKS[i], producer_routine));
    let consumers: [JoinHandle; CONSUMER_SUM] =
        core::array::from_fn(|i| spawn(&CONSUMER_STACKS[i], consumer_routine));
    for h in producers {
        h.join();
    }
    for h in consumers {
        h.join();
    }
    bounded_buf_destroy();
}

firmware!(main_task);
