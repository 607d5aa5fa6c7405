//! A check-then-act split across two critical sections of
//! `critical_section::Mutex<RefCell<T>>`, the pattern firmware uses for state shared with
//! interrupt handlers: two tasks each withdraw from one balance. Each checks the balance in
//! one section and debits it in a second one; between the two, the other task can withdraw
//! too, and the balance is overdrawn. Each section is exclusive; the withdrawal is not. The
//! fix is to check and debit in one section. Nothing here is Jostle's but the tasks:
//! `critical_section::with` is a scheduling point because the kernel is the firmware's
//! critical-section implementation.
//! `--arg 0`: the amount each task withdraws (default 60, from a balance of 100).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use core::cell::RefCell;
use critical_section::Mutex;
use jostle::*;

static BALANCE: Mutex<RefCell<u32>> = Mutex::new(RefCell::new(100));
static STACK1: Stack<TASK_STACK_BYTES> = Stack::new();
static STACK2: Stack<TASK_STACK_BYTES> = Stack::new();

fn withdraw() {
    let amount = arg_or(0, 60);
    let enough = critical_section::with(|cs| *BALANCE.borrow_ref(cs) >= amount);
    if enough {
        // Should be in the same section as the check.
        critical_section::with(|cs| {
            let mut balance = BALANCE.borrow_ref_mut(cs);
            assert!(
                *balance >= amount,
                "overdrawn: {} left, {} withdrawn",
                *balance,
                amount
            );
            *balance -= amount;
        });
    }
}

fn main_task() {
    let a = spawn(&STACK1, withdraw);
    let b = spawn(&STACK2, withdraw);
    a.join();
    b.join();
}

firmware!(main_task);
