//! CS/bluetooth_driver: ESBMC's KISS Bluetooth driver model (`bluetooth_driver_bad.c`) via
//! SCTBench; PERIOD `evaluation/CS/bluetooth_driver/bluetooth_driver_bad.c` (main spawns both
//! roles). 3 tasks: main, the stopper (`BCSP_PnpStop`, created first) and the adder
//! (`BCSP_PnpAdd`); main joins the adder, then the stopper. ESBMC's atomic blocks are one global
//! mutex around the `pendingIo` updates. Bug: assertion. The adder checks `stoppingFlag`,
//! increments `pendingIo` and asserts `!stopped`; it fails when the adder reads the flag as
//! false, then the stopper sets it, decrements `pendingIo` to 0, sets `stoppingEvent` and
//! `stopped`, and only then the adder increments and asserts.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

// The device extension (on main's stack in the C) and the global `stopped`.
static PENDING_IO: Shared<i32> = Shared::new(0);
static STOPPING_FLAG: Shared<bool> = Shared::new(false);
static STOPPING_EVENT: Shared<bool> = Shared::new(false);
static STOPPED: Shared<bool> = Shared::new(false);
/// `esbmc_mutex`: `__ESBMC_atomic_begin/end` in `common.inc`.
static ESBMC_MUTEX: Mutex<()> = Mutex::new(());
static STOP_STACK: Stack<2048> = Stack::new();
static ADD_STACK: Stack<2048> = Stack::new();

fn io_increment() -> i32 {
    if STOPPING_FLAG.read() {
        return -1;
    }
    let g = ESBMC_MUTEX.lock();
    let p = PENDING_IO.read();
    PENDING_IO.write(p + 1);
    g.unlock();
    0
}

fn io_decrement() {
    let g = ESBMC_MUTEX.lock();
    let p = PENDING_IO.read();
    PENDING_IO.write(p - 1);
    let pending_io = PENDING_IO.read();
    g.unlock();
    if pending_io == 0 {
        STOPPING_EVENT.write(true);
    }
}

fn pnp_add() {
    let status = io_increment();
    if status == 0 {
        // do work here
        assert!(!STOPPED.read(), "!stopped");
    }
    io_decrement();
}

fn pnp_stop() {
    STOPPING_FLAG.write(true);
    io_decrement();
    if STOPPING_EVENT.read() {
        // release allocated resource
        STOPPED.write(true);
    }
}

fn main_task() {
    PENDING_IO.write(1);
    STOPPING_FLAG.write(false);
    STOPPING_EVENT.write(false);
    STOPPED.write(false);

    let stopper = spawn(&STOP_STACK, pnp_stop);
    let adder = spawn(&ADD_STACK, pnp_add);
    adder.join();
    stopper.join();
}

firmware!(main_task);
