//! A task that yields while holding a lock the other task waits for: at that yield nobody
//! else can run, yet under PCT (which learns from every yield) it lowers the yielder, which
//! decides who takes the lock next once it is released. The events at trace `sync` show it.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static LOCK: Mutex<u32> = Mutex::new(0);
static STACK1: Stack<4096> = Stack::new();
static STACK2: Stack<4096> = Stack::new();

fn holder() {
    let mut held = LOCK.lock();
    yield_now();
    *held += 1;
    drop(held);
    *LOCK.lock() += 1;
}

fn waiter() {
    yield_now();
    *LOCK.lock() += 10;
}

fn main_task() {
    let a = spawn(&STACK1, holder);
    let b = spawn(&STACK2, waiter);
    a.join();
    b.join();
}

firmware!(main_task);
