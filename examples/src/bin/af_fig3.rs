//! atomfuzzer-fse08 Figure 3: an outer lock makes each atomic block really atomic. A lock
//! pattern checker warns (the inner lock is re-acquired inside the block), but no
//! interleaving can violate atomicity: no bug.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static OUTER: Mutex<()> = Mutex::new(());
static ACCT: Mutex<()> = Mutex::new(());
static BALANCE: Shared<i32> = Shared::new(100);
static STACK1: Stack<TASK_STACK_BYTES> = Stack::new();
static STACK2: Stack<TASK_STACK_BYTES> = Stack::new();

fn get_balance() -> i32 {
    let _g = ACCT.lock();
    BALANCE.read()
}

fn withdraw(amount: i32) {
    let _g = ACCT.lock();
    let b = BALANCE.update(|b| b - amount);
    assert!(b >= 0, "balance went negative");
}

fn account_task() {
    atomic(|| {
        let _outer = OUTER.lock(); // 14 / 22: synchronized (lock)
        if get_balance() >= 70 {
            withdraw(70);
        }
    });
}

fn main_task() {
    let a = spawn(&STACK1, account_task);
    let b = spawn(&STACK2, account_task);
    a.join();
    b.join();
}

firmware!(main_task);
