//! CS/account: ESBMC's `account_bad.c` via SCTBench; PERIOD `evaluation/CS/account/account_bad.c`.
//! 4 tasks: main, `check_result`, `deposit`, `withdraw` (created in that order, joined in
//! reverse), one mutex. Bug: assertion. `deposit` adds `y = 2` to `balance = x = 1`, `withdraw`
//! subtracts `z = 4`, each setting its done flag in one critical section; `check_result`
//! asserts `balance == (x - y) - z` once both flags are set. The expected value is wrong
//! (-5 instead of -1), so it fails whenever the check's section runs after both others.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static M: Mutex<()> = Mutex::new(());
static X: Shared<i32> = Shared::new(0);
static Y: Shared<i32> = Shared::new(0);
static Z: Shared<i32> = Shared::new(0);
static BALANCE: Shared<i32> = Shared::new(0);
static DEPOSIT_DONE: Shared<bool> = Shared::new(false);
static WITHDRAW_DONE: Shared<bool> = Shared::new(false);
static STACKS: [Stack<2048>; 3] = [const { Stack::new() }; 3];

fn deposit() {
    let g = M.lock();
    let b = BALANCE.read();
    let y = Y.read();
    BALANCE.write(b + y);
    DEPOSIT_DONE.write(true);
    g.unlock();
}

fn withdraw() {
    let g = M.lock();
    let b = BALANCE.read();
    let z = Z.read();
    BALANCE.write(b - z);
    WITHDRAW_DONE.write(true);
    g.unlock();
}

fn check_result() {
    let g = M.lock();
    if DEPOSIT_DONE.read() && WITHDRAW_DONE.read() {
        let balance = BALANCE.read();
        let expected = (X.read() - Y.read()) - Z.read();
        assert!(balance == expected, "balance == (x - y) - z");
    }
    g.unlock();
}

fn main_task() {
    X.write(1);
    Y.write(2);
    Z.write(4);
    let x = X.read();
    BALANCE.write(x);

    let t3 = spawn(&STACKS[0], check_result);
    let t1 = spawn(&STACKS[1], deposit);
    let t2 = spawn(&STACKS[2], withdraw);
    t2.join();
    t1.join();
    t3.join();
}

firmware!(main_task);
