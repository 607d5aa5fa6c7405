//! racebench 2.1 svp_simple_008: main stores elements 3 and 40 and reads 40 and 4 in a
//! callee; isr_1 overwrites the whole array. Its store to element 40 between main's store and
//! read is bug 1 (W-W-R); elements 3 and 4 are different locations (the false alarm).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr};

static GLOBAL_ARRAY: [Shared<i32>; 100] = [const { Shared::new(0) }; 100];

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    ISRS.init();
    GLOBAL_ARRAY[1 + 2].write(9); // @L33
    GLOBAL_ARRAY[40].write(1); // @L35
    func_1();
}

fn func_1() {
    let _a = GLOBAL_ARRAY[20 + 2 * 10].read(); // @L46
    let _b = GLOBAL_ARRAY[1 + 3].read(); // @L48
}

fn isr_1() {
    for element in &GLOBAL_ARRAY {
        element.write(5); // @L52
    }
}

firmware!(main_task, interrupts: [ISR_1]);
