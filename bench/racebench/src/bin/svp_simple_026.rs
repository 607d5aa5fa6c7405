//! racebench 2.1 svp_simple_026: main masks isr_1 around a check-then-reset of `var`, but
//! isr_2 (not masked) decrements it between the check and the reset (bug 1, R-W-W; needs
//! `var > 12`). isr_1's increment in the same window is the false alarm: it is masked.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr, rand};

static GLOABLE_VAR: Shared<i32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISR_2: Interrupt = isr(2, isr_2);
static ISRS: Isrs = Isrs(&[&ISR_1, &ISR_2]);

fn main_task() {
    // case_init: `var = rand()`; the bug needs a value above 12, so 0..32.
    GLOABLE_VAR.write(rand(32) as i32);
    ISRS.init();
    ISRS.disable_isr(1);
    let var = GLOABLE_VAR.read(); // @L26
    if var > 12 {
        GLOABLE_VAR.write(0); // @L27
    }
    ISRS.enable_isr(1);
}

fn isr_1() {
    GLOABLE_VAR.update(|v| v + 1); // @L40
}

fn isr_2() {
    GLOABLE_VAR.update(|v| v - 1); // @L43
}

firmware!(main_task, interrupts: [ISR_1, ISR_2]);
