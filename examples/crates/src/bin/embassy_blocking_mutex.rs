//! The check-then-act of `cs_refcell` through embassy-sync's blocking mutex
//! (`blocking_mutex::Mutex<CriticalSectionRawMutex, _>`, from crates.io, unchanged): two tasks
//! each withdraw from one balance, checking it under one `lock` and debiting it under a
//! second; between the two, the other task can withdraw too, and the balance is overdrawn.
//! The mutex is built on `critical-section`, whose implementation is the kernel's, so each
//! `lock` is a scheduling point. The fix is to check and debit under one `lock`.
//! `--arg 0`: the amount each task withdraws (default 60, from a balance of 100).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use core::cell::Cell;
use embassy_sync::blocking_mutex::Mutex;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use jostle::*;

static BALANCE: Mutex<CriticalSectionRawMutex, Cell<u32>> = Mutex::new(Cell::new(100));
static STACK1: Stack<4096> = Stack::new();
static STACK2: Stack<4096> = Stack::new();

fn withdraw() {
    let amount = arg_or(0, 60);
    let enough = BALANCE.lock(|balance| balance.get() >= amount);
    if enough {
        // Should be under the same `lock` as the check.
        BALANCE.lock(|balance| {
            let left = balance.get();
            assert!(left >= amount, "overdrawn: {left} left, {amount} withdrawn");
            balance.set(left - amount);
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
