//! An order violation between correctly locked sections: three tasks each take the one
//! mutex once; `start` assumes `configure` and `calibrate` ran before it. No access races
//! (every access holds the lock) and no atomic block is broken, so no analysis predicts
//! it; the assertion fails whenever `start` is not last (4 of the 6 orders).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

/// Bit 0: configured; bit 1: calibrated.
static DEVICE: Mutex<u32> = Mutex::new(0);
static STACK1: Stack<2048> = Stack::new();
static STACK2: Stack<2048> = Stack::new();
static STACK3: Stack<2048> = Stack::new();

fn configure() {
    let mut d = DEVICE.lock();
    *d |= 1;
    d.unlock();
}

fn calibrate() {
    let mut d = DEVICE.lock();
    *d |= 2;
    d.unlock();
}

fn start() {
    let d = DEVICE.lock();
    assert_eq!(*d, 3, "started before configuration and calibration");
    d.unlock();
}

fn main_task() {
    let a = spawn(&STACK1, configure);
    let b = spawn(&STACK2, calibrate);
    let c = spawn(&STACK3, start);
    a.join();
    b.join();
    c.join();
}

firmware!(main_task);
