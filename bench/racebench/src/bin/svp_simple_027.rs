//! racebench 2.1 svp_simple_027: main masks every handler, unmasks isr_1, then checks and
//! resets `var`. isr_1 increments it in between (bug 1, R-W-W), and isr_1 unmasks isr_2,
//! whose add lands there too (bug 2). isr_3 stays masked for good (the false alarm).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr, rand};

static GLOABLE_VAR: Shared<i32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISR_2: Interrupt = isr(2, isr_2);
static ISR_3: Interrupt = isr(3, isr_3);
static ISRS: Isrs = Isrs(&[&ISR_1, &ISR_2, &ISR_3]);

fn main_task() {
    // case_init: `var = rand()`; the reset needs a value above 12, so 0..32.
    GLOABLE_VAR.write(rand(32) as i32);
    ISRS.init();
    ISRS.disable_isr(-1);
    ISRS.enable_isr(1);
    let var = GLOABLE_VAR.read(); // @L27
    if var > 12 {
        GLOABLE_VAR.write(0); // @L28
    }
}

fn isr_1() {
    GLOABLE_VAR.update(|v| v + 1); // @L41
    ISRS.enable_isr(2);
}

fn isr_2() {
    GLOABLE_VAR.update(|v| v + 2); // @L45
}

fn isr_3() {
    GLOABLE_VAR.update(|v| v + 3); // @L48
}

firmware!(main_task, interrupts: [ISR_1, ISR_2, ISR_3]);
