//! racebench 2.1 svp_simple_006: main reads `var1` on the diagonal of a 5 × 5 loop at i = 0
//! and i = 4 (the i = 6 branch is impossible); isr_1 stores it in between (bug 1, R-W-R).
//! As written in the C the inner loop tests `i < 5` and never ends, which leaves the labelled
//! bug unreachable: this port uses `j < 5`, as the label assumes. False alarms: the i = 6
//! read, and main's single guarded store to `var2`.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, idlerun, isr};

static GLOBAL_VAR1: Shared<i32> = Shared::new(0);
static GLOBAL_VAR2: Shared<i32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    ISRS.init();
    let mut _reader = 0;
    for i in 0..5 {
        for j in 0..5 {
            if i == j {
                if i == 0 {
                    _reader = GLOBAL_VAR1.read(); // @L33
                } else if i == 4 {
                    _reader = GLOBAL_VAR1.read(); // @L35
                } else if i == 6 {
                    _reader = GLOBAL_VAR1.read(); // @L37
                }
            }
        }
    }
    for i in 0..5 {
        for j in 0..5 {
            if i + j == 6 && i < j {
                GLOBAL_VAR2.write(2); // @L44
            }
        }
    }
}

fn isr_1() {
    idlerun();
    GLOBAL_VAR1.write(0); // @L52
    let _reader = GLOBAL_VAR2.read(); // @L53
}

firmware!(main_task, interrupts: [ISR_1]);
