//! racebench 2.1 svp_simple_030: as 028, with isr_1's increment moved into a helper
//! (`addData`). isr_1's increment between main's check and reset is bug 1 (R-W-W); isr_2's
//! guarded one (isr_1 cleared the flag first) and isr_3's (masked for good) are the false
//! alarms.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr, rand};

static ISR_1_FLAG: Shared<i32> = Shared::new(0);
static GLOABLE_VAR: Shared<i32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISR_2: Interrupt = isr(2, isr_2);
static ISR_3: Interrupt = isr(3, isr_3);
static ISRS: Isrs = Isrs(&[&ISR_1, &ISR_2, &ISR_3]);

fn main_task() {
    // case_init: `var = rand(); isr_1_flag = rand()`; the reset needs var above 12.
    GLOABLE_VAR.write(rand(32) as i32);
    ISR_1_FLAG.write(rand(2) as i32);
    ISRS.init();
    ISRS.disable_isr(-1);
    ISRS.enable_isr(1);
    let var = GLOABLE_VAR.read(); // @L29
    if var > 12 {
        GLOABLE_VAR.write(0); // @L30
    }
}

fn add_data() {
    GLOABLE_VAR.update(|v| v + 1); // @L43
}

fn isr_1() {
    add_data();
    ISR_1_FLAG.write(0); // @L47
    ISRS.enable_isr(2);
}

fn isr_2() {
    if ISR_1_FLAG.read() != 0 {
        GLOABLE_VAR.update(|v| v + 1); // @L52
    }
}

fn isr_3() {
    GLOABLE_VAR.update(|v| v + 1); // @L56
}

firmware!(main_task, interrupts: [ISR_1, ISR_2, ISR_3]);
