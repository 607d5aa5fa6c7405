//! A task that runs for ever, counting at every step: only the step limit (or a limit of the
//! host's) ends the run. (A task that changed nothing while it looped would starve: the
//! kernel ends such a run at once, `sched::spin`.)
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static COUNT: Shared<u32> = Shared::new(0);

fn main_task() {
    loop {
        COUNT.update(|c| c.wrapping_add(1));
        yield_now();
    }
}

firmware!(main_task);
