//! atomfuzzer-fse08 Figure 1: two tasks each withdraw 70 from an account of 100 inside an
//! atomic block; the check and the withdrawal take the account lock separately, so an
//! interleaving violates atomicity and the balance assertion fails.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static ACCT: Mutex<()> = Mutex::new(());
static BALANCE: Shared<i32> = Shared::new(100);
static STACK1: Stack<TASK_STACK_BYTES> = Stack::new();
static STACK2: Stack<TASK_STACK_BYTES> = Stack::new();

fn get_balance() -> i32 {
    let _g = ACCT.lock(); // 3
    BALANCE.read() // 4
}

fn withdraw(amount: i32) {
    let _g = ACCT.lock(); // 6
    let b = BALANCE.update(|b| b - amount); // 7
    assert!(b >= 0, "balance went negative"); // 8
}

fn account_task() {
    atomic(|| {
        // 12 / 18
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
