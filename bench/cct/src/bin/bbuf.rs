//! Inspect_benchmarks/bbuf: the Inspect bounded-buffer example via SCTBench; PERIOD
//! `evaluation/Inspect_benchmarks/bbuf/bbuf.c`. 3 tasks: main, one producer, one consumer
//! (`PRODUCER_SUM = CONSUMER_SUM = 1`); one mutex and the condition variables `not_full` and
//! `not_empty`. The producer puts 10 letters, the consumer gets 10, into a buffer of
//! `max_size = 3` (2 usable slots); main joins both and destroys the buffer.
//! Bug: none reachable (a negative control, 0/20 for SURW): both waits re-check their
//! condition in a loop, every buffer update is under the mutex, and the buffer is empty when
//! destroyed. Every run should pass.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_cct::CondVar;

const BOUNDED_BUF_VALID: u32 = 0xACDEFA;
const EINVAL: i32 = 22;
const MAX_SIZE: usize = 3;
const ITEMS: u32 = 10;

// The buffer (`bounded_buf_t buffer`, a global).
static VALID: Shared<u32> = Shared::new(0);
static MUTEX: Mutex<()> = Mutex::new(());
static NOT_FULL: CondVar = CondVar::new();
static NOT_EMPTY: CondVar = CondVar::new();
static ITEM_NUM: Shared<usize> = Shared::new(0);
static MAX: Shared<usize> = Shared::new(0);
static HEAD: Shared<usize> = Shared::new(0);
static REAR: Shared<usize> = Shared::new(0);
static BUF: [Shared<u8>; MAX_SIZE] = [const { Shared::new(0) }; MAX_SIZE];
static PRODUCER_STACK: Stack<2048> = Stack::new();
static CONSUMER_STACK: Stack<2048> = Stack::new();

fn bounded_buf_init(sz: usize) {
    VALID.write(BOUNDED_BUF_VALID);
    ITEM_NUM.write(0);
    MAX.write(sz);
    HEAD.write(0);
    REAR.write(0);
    // malloc + memset of the slots
    for slot in &BUF {
        slot.write(0);
    }
    HEAD.write(0);
    REAR.write(0);
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
    while (REAR.read() + 1) % MAX.read() == HEAD.read() {
        g = NOT_FULL.wait(&MUTEX, g);
    }
    BUF[REAR.read()].write(item);
    let rear = (REAR.read() + 1) % MAX.read();
    REAR.write(rear);
    NOT_EMPTY.signal();
    g.unlock();
    0
}

fn bounded_buf_get() -> Result<u8, i32> {
    if VALID.read() != BOUNDED_BUF_VALID {
        return Err(EINVAL);
    }
    let mut g = MUTEX.lock();
    while HEAD.read() == REAR.read() {
        g = NOT_EMPTY.wait(&MUTEX, g);
    }
    let item = BUF[HEAD.read()].read();
    let head = (HEAD.read() + 1) % MAX.read();
    HEAD.write(head);
    NOT_FULL.signal();
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
    let producer = spawn(&PRODUCER_STACK, producer_routine);
    let consumer = spawn(&CONSUMER_STACK, consumer_routine);
    producer.join();
    consumer.join();
    bounded_buf_destroy();
}

firmware!(main_task);
