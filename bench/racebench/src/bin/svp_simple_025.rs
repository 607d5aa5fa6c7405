//! racebench 2.1 svp_simple_025: main increments `var` through a pointer parameter (a read,
//! then a write); isr_1 resets it in between and its store is lost (bug 1, R-W-W).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr, rand};

static GLOBAL_VAR: Shared<i32> = Shared::new(0);
/// Declared and never used, as in the C.
static GLOBAL_ARRAY: [Shared<i32>; 100] = [const { Shared::new(0) }; 100];

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    let _ = &GLOBAL_ARRAY;
    // case_init: `var = rand()`; any value will do.
    GLOBAL_VAR.write(rand(32) as i32);
    ISRS.init();
    func_1(&GLOBAL_VAR);
}

/// `*ptr = *ptr + 1`: the load and the store of one C line.
fn func_1(ptr: &Shared<i32>) {
    let v = ptr.read(); // @L35
    ptr.write(v + 1); // @L35
}

fn isr_1() {
    GLOBAL_VAR.write(0); // @L38
}

firmware!(main_task, interrupts: [ISR_1]);
