//! An interrupt handler that takes a lock the interrupted task holds: a handler cannot wait
//! (it would hang the system), so the run ends with the `handler_blocked` verdict (exit 10).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static LOCK: Mutex<u32> = Mutex::new(0);

/// A timer that may fire once wherever it is enabled.
static TIMER: Interrupt = Interrupt::spontaneous(3, 1, 1, tick);

fn tick() {
    *LOCK.lock() += 1;
}

fn main_task() {
    let mut held = LOCK.lock();
    TIMER.enable();
    for _ in 0..16 {
        *held += 1;
        yield_now();
    }
    drop(held);
    TIMER.disable();
}

firmware!(main_task, interrupts: [TIMER]);
