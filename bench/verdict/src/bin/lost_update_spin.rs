//! A real starvation: two workers count themselves done with an unprotected
//! read-modify-write, and the main task spins until the count is two. When an increment is
//! lost, main spins alone: both workers have ended and nothing can change the count.
//! (`lost_update_locked` is the same program with the increment under a lock.)
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static DONE: Shared<u32> = Shared::new(0);
static WORKER_STACKS: [Stack<2048>; 2] = [const { Stack::new() }; 2];

fn worker() {
    let done = DONE.read();
    DONE.write(done + 1);
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
