//! RADBench/bug5 (NSPR-2, Mozilla bug 165586): NSPR's condition-variable test `cvar.c`
//! ("user/user" context-switch case); PERIOD `evaluation/RADBench/bug5/src/cvar.c`. 3 tasks:
//! main (holds the test's monitor, creates a reader then a writer, waits until `alive == 0`),
//! the reader (gets 5 items) and the writer (puts 5 items) on a 1-slot circular buffer with one
//! lock and the condition variables `notFull`/`notEmpty`.
//! Bug: none reachable (published 0/20 for every strategy). The intended deadlock is a lost
//! `PR_Interrupt` between `PR_WaitCondVar`'s interrupt check and its wait, but this harness
//! never interrupts a thread, so the producer/consumer is correct and every run should pass.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_cct::CondVar;

const DEFAULT_COUNT: i32 = 10;
const K_QSIZE: i32 = 1;

// The circular buffer (`NewCB`): its lock, condition variables and fields.
static BUF_LOCK: Mutex<()> = Mutex::new(());
static NOT_FULL: CondVar = CondVar::new();
static NOT_EMPTY: CondVar = CondVar::new();
static START_IDX: Shared<i32> = Shared::new(0);
static NUM_FULL: Shared<i32> = Shared::new(0);
static DATA: [Shared<i32>; K_QSIZE as usize] = [const { Shared::new(0) }; K_QSIZE as usize];

// The test's monitor `mon`, `count` and `alive`.
static MON: Mutex<()> = Mutex::new(());
static MON_CV: CondVar = CondVar::new();
static COUNT: Shared<i32> = Shared::new(0);
static ALIVE: Shared<i32> = Shared::new(0);
static READER_STACK: Stack<2048> = Stack::new();
static WRITER_STACK: Stack<2048> = Stack::new();

fn new_cb() {
    START_IDX.write(0);
    NUM_FULL.write(0);
}

#[allow(clippy::modulo_one)] // kQSIZE is 1, as in the C
fn put_cb_data(data: i32) {
    let mut g = BUF_LOCK.lock();
    // wait while the buffer is full
    while NUM_FULL.read() == K_QSIZE {
        g = NOT_FULL.wait(&BUF_LOCK, g);
    }
    let slot = (START_IDX.read() + NUM_FULL.read()) % K_QSIZE;
    DATA[slot as usize].write(data);
    let n = NUM_FULL.read();
    NUM_FULL.write(n + 1);
    // let a waiting reader know that there is data
    NOT_EMPTY.signal();
    g.unlock();
}

#[allow(clippy::modulo_one)] // kQSIZE is 1, as in the C
fn get_cb_data() -> i32 {
    let mut g = BUF_LOCK.lock();
    // wait while the buffer is empty
    while NUM_FULL.read() == 0 {
        g = NOT_EMPTY.wait(&BUF_LOCK, g);
    }
    let data = DATA[START_IDX.read() as usize].read();
    let start = (START_IDX.read() + 1) % K_QSIZE;
    START_IDX.write(start);
    let n = NUM_FULL.read();
    NUM_FULL.write(n - 1);
    // let a waiting writer know that there is room
    NOT_FULL.signal();
    g.unlock();
    data
}

fn cx_reader() {
    let n = COUNT.read() / 2;
    for i in 0..n {
        let data = get_cb_data();
        // (a mismatch is only printed in debug mode)
        let _mismatch = data != i;
    }
    let g = MON.lock();
    let a = ALIVE.read();
    ALIVE.write(a - 1);
    MON_CV.signal();
    g.unlock();
}

fn cx_writer() {
    let n = COUNT.read() / 2;
    for i in 0..n {
        put_cb_data(i);
    }
    let g = MON.lock();
    let a = ALIVE.read();
    ALIVE.write(a - 1);
    MON_CV.signal();
    g.unlock();
}

fn main_task() {
    // RealMain: no `-c` option.
    COUNT.write(DEFAULT_COUNT);

    // CondWaitContextSwitch(PR_LOCAL_THREAD, PR_LOCAL_THREAD)
    let mut g = MON.lock();
    ALIVE.write(2);
    new_cb();
    let t1 = spawn(&READER_STACK, cx_reader);
    let t2 = spawn(&WRITER_STACK, cx_writer);
    // Wait for both of the threads to exit.
    while ALIVE.read() != 0 {
        g = MON_CV.wait(&MON, g);
    }
    // DeleteCB
    g.unlock();

    // PR_Initialize's PR_Cleanup waits for the (unjoinable) user threads to end.
    t1.join();
    t2.join();
}

firmware!(main_task);
