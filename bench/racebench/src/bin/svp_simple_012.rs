//! racebench 2.1 svp_simple_012: main stores to `var` directly, then again through a pointer
//! to it; isr_1 reads `var` between the two stores (bug 1, W-R-W).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr};

static GLOBAL_VAR: Shared<i32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    ISRS.init();
    // `p = &var`: a local pointer (not shared), so only its target is a location.
    let p: &Shared<i32> = &GLOBAL_VAR;
    GLOBAL_VAR.write(1); // @L27
    p.write(2); // @L29
}

fn isr_1() {
    let _reader = GLOBAL_VAR.read(); // @L34
}

firmware!(main_task, interrupts: [ISR_1]);
