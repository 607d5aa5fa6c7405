//! A wake-up sent only to a task already waiting, checked before the task waits: the
//! notifier (main) finds nobody waiting and sends nothing, then the worker declares itself
//! a sleeper and waits for ever. Nothing else can run and no timer is pending: the run
//! ends with the `lost_wake` verdict (exit 44), naming the worker.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static WAITING: Shared<bool> = Shared::new(false);
static WAKE: Signal = Signal::new();
static STACK: Stack<4096> = Stack::new();

fn worker() {
    WAITING.write(true);
    let here = port::site(core::panic::Location::caller());
    clock::sleep(
        port::addr(&WAKE as *const Signal as *const ()),
        here,
        [0; 4],
    );
    WAKE.wait();
}

fn main_task() {
    if WAITING.read() {
        WAKE.signal();
    }
    spawn(&STACK, worker).join();
}

firmware!(main_task);
