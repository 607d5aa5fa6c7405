//! The main task waits for a flag no one sets: it spins alone with nothing able to change
//! what it reads, a starvation in every run.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static READY: Shared<bool> = Shared::new(false);

fn main_task() {
    while !READY.read() {
        jostle::hint::spin_loop();
    }
}

firmware!(main_task);
