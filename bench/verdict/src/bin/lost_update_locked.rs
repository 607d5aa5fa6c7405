//! `lost_update_spin` fixed: the workers' increment is under a lock, so main's spin ends.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static DONE: Shared<u32> = Shared::new(0);
static DONE_LOCK: Mutex<()> = Mutex::new(());
static WORKER_STACKS: [Stack<2048>; 2] = [const { Stack::new() }; 2];

fn worker() {
    let g = DONE_LOCK.lock();
    let done = DONE.read();
    DONE.write(done + 1);
    g.unlock();
}

fn main_task() {
    let a = spawn(&WORKER_STACKS[0], worker);
    let b = spawn(&WORKER_STACKS[1], worker);
    while DONE.read() != 2 {
        jostle::hint::spin_loop();
    }
    a.join();
    b.join();
}

firmware!(main_task);
