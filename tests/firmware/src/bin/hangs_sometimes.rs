//! Two tasks race to set a flag; when the second one wins, the main task then spins without
//! a scheduling point. Which seeds hang is the scheduler's choice, so a boot of several runs
//! meets both: a run that never ends among runs that do.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static STACK1: Stack<2048> = Stack::new();
static STACK2: Stack<2048> = Stack::new();
static WINNER: Shared<u32> = Shared::new(0);

fn first() {
    if WINNER.read() == 0 {
        WINNER.write(1);
    }
}

fn second() {
    if WINNER.read() == 0 {
        WINNER.write(2);
    }
}

fn main_task() {
    let a = spawn(&STACK1, first);
    let b = spawn(&STACK2, second);
    a.join();
    b.join();
    if WINNER.read() == 2 {
        let mut x = 0u32;
        loop {
            x = core::hint::black_box(x.wrapping_add(1));
        }
    }
}

firmware!(main_task);
