//! racebench 2.1 svp_simple_023: main passes `var` by value to a callee that increments it
//! when 0 < v < 12; isr_1 resets it between the read for the argument and the callee's read
//! (bug 1, R-W-R) or between the callee's read and write (bug 2, a lost update).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr, rand};

static GLOBAL_VAR: Shared<i32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    // case_init: `var = rand()`; the increment needs 0 < var < 12, so 0..16.
    GLOBAL_VAR.write(rand(16) as i32);
    ISRS.init();
    let v = GLOBAL_VAR.read(); // @L25
    func_1(v);
}

fn func_1(v: i32) {
    if 0 < v && v < 12 {
        let var = GLOBAL_VAR.read(); // @L35
        GLOBAL_VAR.write(var + 1); // @L35
    }
}

fn isr_1() {
    GLOBAL_VAR.write(0); // @L39
}

firmware!(main_task, interrupts: [ISR_1]);
