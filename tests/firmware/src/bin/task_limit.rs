//! Spawns one task more than the task table holds (main plus `MAX_TASKS` workers): the run
//! must end with the `task_limit` verdict, naming the limit, not with a panic.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static STACKS: [Stack<2048>; MAX_TASKS] = [const { Stack::new() }; MAX_TASKS];

fn worker() {
    yield_now();
}

fn main_task() {
    // The workers never end before the last spawn: each waits at a yield.
    for stack in STACKS.iter() {
        let _ = spawn(stack, worker);
    }
}

firmware!(main_task);
