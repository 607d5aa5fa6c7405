//! Two locks taken in opposite orders: a deadlock when each task holds its first lock.
//! The second task does `--arg 0` filler statements (default 5) before its first acquire.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static A: Mutex<()> = Mutex::new(());
static B: Mutex<()> = Mutex::new(());
static OWN2: Shared<u32> = Shared::new(0);
static STACK1: Stack<TASK_STACK_BYTES> = Stack::new();
static STACK2: Stack<TASK_STACK_BYTES> = Stack::new();

fn t1() {
    let a = A.lock();
    let b = B.lock();
    b.unlock();
    a.unlock();
}

fn t2() {
    filler(&OWN2, arg_or(0, 5));
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
