//! racebench 2.1 svp_simple_005: main stores `var` deep in a nested loop, then (dead branch)
//! and again after it; isr_1 reads it in between (bug 1, W-R-W). The false alarms use the
//! dead store.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, MAX_LENGTH, idlerun, isr};

static GLOBAL_CONDITION: Shared<i32> = Shared::new(0);
static GLOBAL_VAR: Shared<i32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    ISRS.init();
    // 10,000 × 10,000 in the C (store at i = 9999, j = 1000): scaled.
    for i in 0..MAX_LENGTH {
        for j in 0..MAX_LENGTH {
            if i == MAX_LENGTH - 1 && j == MAX_LENGTH / 10 {
                GLOBAL_VAR.write(1); // @L32
            }
        }
    }
    if GLOBAL_CONDITION.read() == 1 {
        GLOBAL_VAR.write(9); // @L38
    }
    GLOBAL_VAR.write(5); // @L40
}

fn isr_1() {
    idlerun();
    let _reader = GLOBAL_VAR.read(); // @L46
}

firmware!(main_task, interrupts: [ISR_1]);
