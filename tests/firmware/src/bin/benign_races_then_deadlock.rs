//! Harmless races queued before a harmful deadlock: both tasks bump statistics counters
//! nobody checks (races, and atomicity candidates, that are real but harmless), then take
//! two locks in opposite orders (a lock-order cycle, a deadlock when each task holds its
//! first lock). The second task does 100 filler statements before its first acquire, so
//! Random all but never deadlocks; DeadlockFuzzer does at its first run. The campaign's
//! queue puts the races first: it must not spend each one's whole quota before trying the
//! deadlock.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static A: Mutex<()> = Mutex::new(());
static B: Mutex<()> = Mutex::new(());
/// Counters for a debug print: lost updates do no harm.
static STATS: [Shared<u32>; 3] = [const { Shared::new(0) }; 3];
static OWN2: Shared<u32> = Shared::new(0);
static STACK1: Stack<4096> = Stack::new();
static STACK2: Stack<4096> = Stack::new();

fn bump_stats() {
    for s in &STATS {
        s.write(s.read() + 1);
    }
}

fn t1() {
    bump_stats();
    let a = A.lock();
    let b = B.lock();
    b.unlock();
    a.unlock();
}

fn t2() {
    bump_stats();
    filler(&OWN2, 100);
    let b = B.lock();
    let a = A.lock();
    a.unlock();
    b.unlock();
}

fn main_task() {
    let a = spawn(&STACK1, t1);
    let b = spawn(&STACK2, t2);
    a.join();
    b.join();
}

firmware!(main_task);
