//! A task that yields forever: the step limit must end the run.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

fn main_task() {
    loop {
        yield_now();
    }
}

firmware!(main_task);
