//! racebench 2.1 svp_simple_007: main writes and re-reads `array[var]`, then writes element
//! `i = rand()` and reads element 2; isr_1 stores element 2, increments the index and stores
//! `array[var]`. Its store to element 2 between main's store (when i == 2) and read is bug 1
//! (W-W-R). False alarms: isr_1's indexed store hits another element than main's (it moved the
//! index first), and main's else-branch store is to an element other than 2.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, idlerun, isr, rand};

static GLOBAL_VAR: Shared<usize> = Shared::new(0);
static GLOBAL_ARRAY: [Shared<i32>; 5] = [const { Shared::new(0) }; 5];

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    ISRS.init();
    GLOBAL_ARRAY[GLOBAL_VAR.read()].write(1); // @L32
    let _a = GLOBAL_ARRAY[GLOBAL_VAR.read()].read(); // @L34
    // `i = rand()`, indexing a 5-element array: constrained to 0..5 (the C's UB otherwise).
    let i = rand(5) as usize;
    if i == 2 {
        GLOBAL_ARRAY[i].write(2); // @L38
    } else {
        GLOBAL_ARRAY[i].write(9); // @L40
    }
    let _b = GLOBAL_ARRAY[2].read(); // @L42
}

fn isr_1() {
    idlerun();
    GLOBAL_ARRAY[2].write(9); // @L47
    // `var += 1`, bounded to the array (unbounded in the C).
    GLOBAL_VAR.update(|v| (v + 1) % 5); // @L49
    GLOBAL_ARRAY[GLOBAL_VAR.read()].write(9); // @L50
}

firmware!(main_task, interrupts: [ISR_1]);
