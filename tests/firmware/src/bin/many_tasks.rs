//! Twenty-one tasks (main and twenty workers, each on its own 1 KiB stack) increment a
//! locked counter: the task table holds more than the default eight when the firmware
//! enables `jostle-kernel/tasks-32` (this crate does). Never fails.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

const WORKERS: usize = 20;
static STACKS: [Stack<1024>; WORKERS] = [const { Stack::new() }; WORKERS];
static COUNT: Mutex<u32> = Mutex::new(0);

fn worker() {
    for _ in 0..2 {
        *COUNT.lock() += 1;
    }
}

fn main_task() {
    let mut handles: [Option<JoinHandle>; WORKERS] = [const { None }; WORKERS];
    for (stack, handle) in STACKS.iter().zip(handles.iter_mut()) {
        *handle = Some(spawn(stack, worker));
    }
    for h in handles.into_iter().flatten() {
        h.join();
    }
    assert_eq!(*COUNT.lock(), 2 * WORKERS as u32, "lost an increment");
}

firmware!(main_task);
