//! RADBench/bug6 (NSPR-3, Mozilla bug 526805): NSPR 4.8's writer-preferring `PRRWLock` with a
//! recursive read lock; PERIOD `evaluation/RADBench/bug6/src/rwlock-test.c` (+ NSPR's
//! `prrwlock.c`). 3 tasks: main, a writer (`wlock; unlock`) and a reader (`rlock; rlock; unlock;
//! unlock`), created in that order (the C's variable names are swapped) and joined in that
//! order. The RW lock is a mutex, a count (`> 0` readers, `-1` a writer), waiting-writer and
//! waiting-reader counts and two condition variables. Bug: deadlock. The reader takes its first
//! read lock; the writer arrives and waits (`writer_cnt = 1`); the reader's second `rlock`
//! waits behind the waiting writer, which waits for the reader.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_cct::CondVar;

// `thelock`: PR_NewRWLock(PR_RWLOCK_RANK_NONE, "the lock").
static RW_LOCK: Mutex<()> = Mutex::new(());
static RW_LOCK_CNT: Shared<i32> = Shared::new(0);
static RW_WRITER_CNT: Shared<i32> = Shared::new(0);
static RW_READER_CNT: Shared<i32> = Shared::new(0);
/// `rw_owner` (a debug build): the write-lock holder, 0 for none (task 0 never write-locks).
static RW_OWNER: Shared<TaskId> = Shared::new(0);
static RW_READER_WAITQ: CondVar = CondVar::new();
static RW_WRITER_WAITQ: CondVar = CondVar::new();
static WRITER_STACK: Stack<2048> = Stack::new();
static READER_STACK: Stack<2048> = Stack::new();

/// `PR_RWLock_Rlock`: waits while write-locked or while a writer waits (writers first).
fn rlock() {
    let mut g = RW_LOCK.lock();
    while RW_LOCK_CNT.read() < 0 || RW_WRITER_CNT.read() > 0 {
        let n = RW_READER_CNT.read();
        RW_READER_CNT.write(n + 1);
        g = RW_READER_WAITQ.wait(&RW_LOCK, g);
        let n = RW_READER_CNT.read();
        RW_READER_CNT.write(n - 1);
    }
    let c = RW_LOCK_CNT.read();
    RW_LOCK_CNT.write(c + 1);
    g.unlock();
}

/// `PR_RWLock_Wlock`.
fn wlock() {
    let mut g = RW_LOCK.lock();
    while RW_LOCK_CNT.read() != 0 {
        let n = RW_WRITER_CNT.read();
        RW_WRITER_CNT.write(n + 1);
        g = RW_WRITER_WAITQ.wait(&RW_LOCK, g);
        let n = RW_WRITER_CNT.read();
        RW_WRITER_CNT.write(n - 1);
    }
    let c = RW_LOCK_CNT.read();
    RW_LOCK_CNT.write(c - 1);
    assert!(
        RW_LOCK_CNT.read() == -1,
        "PR_ASSERT(rwlock->rw_lock_cnt == -1)"
    );
    RW_OWNER.write(current_task());
    g.unlock();
}

/// `PR_RWLock_Unlock`.
fn unlock() {
    let g = RW_LOCK.lock();
    assert!(
        RW_LOCK_CNT.read() != 0,
        "PR_ASSERT(rwlock->rw_lock_cnt != 0)"
    );
    if RW_LOCK_CNT.read() > 0 {
        // a reader leaves
        let c = RW_LOCK_CNT.read();
        RW_LOCK_CNT.write(c - 1);
        if RW_LOCK_CNT.read() == 0 && RW_WRITER_CNT.read() > 0 {
            RW_WRITER_WAITQ.signal();
        }
    } else {
        // the writer leaves
        assert!(
            RW_LOCK_CNT.read() == -1,
            "PR_ASSERT(rwlock->rw_lock_cnt == -1)"
        );
        RW_LOCK_CNT.write(0);
        assert!(
            RW_OWNER.read() == current_task(),
            "PR_ASSERT(rwlock->rw_owner == me)"
        );
        RW_OWNER.write(0);
        if RW_WRITER_CNT.read() > 0 {
            RW_WRITER_WAITQ.signal();
        } else if RW_READER_CNT.read() > 0 {
            RW_READER_WAITQ.broadcast();
        }
    }
    g.unlock();
}

fn writer_main() {
    wlock();
    unlock();
}

fn reader_main() {
    rlock();
    rlock();
    unlock();
    unlock();
}

fn main_task() {
    // "reader_thread" runs writer_main and "writer_thread" reader_main, as in the C.
    let reader_thread = spawn(&WRITER_STACK, writer_main);
    let writer_thread = spawn(&READER_STACK, reader_main);
    reader_thread.join();
    writer_thread.join();
}

firmware!(main_task);
