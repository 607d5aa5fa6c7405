//! atomfuzzer-fse08 Figure 2: Figure 1 with `--arg 0` filler statements (default 20) before
//! T2's atomic block, which makes the violation rare under random scheduling.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static ACCT: Mutex<()> = Mutex::new(());
static BALANCE: Shared<i32> = Shared::new(100);
static OWN2: Shared<u32> = Shared::new(0);
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

fn t1() {
    atomic(|| {
        // 12
        if get_balance() >= 70 {
            withdraw(70);
        }
    });
}

fn t2() {
    filler(&OWN2, arg_or(0, 20)); // 18-23: f1() … f6()
    atomic(|| {
        // 24
        if get_balance() >= 70 {
            withdraw(70);
        }
    });
}

fn main_task() {
    let a = spawn(&STACK1, t1);
    let b = spawn(&STACK2, t2);
    a.join();
    b.join();
}

firmware!(main_task);
