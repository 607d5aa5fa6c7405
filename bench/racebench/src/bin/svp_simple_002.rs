//! racebench 2.1 svp_simple_002: isr_1 stores 1 to the last array element and reads it back;
//! isr_2 preempts it in between and stores 999 (bug 1, W-W-R). The false alarms: a store
//! on a dead branch (`i` never reaches `MAX_LENGTH + 1`) and a read of element 0.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, MAX_LENGTH, idlerun, isr};

/// `TRIGGER` (9999 of 10,000 in the C).
const TRIGGER: usize = MAX_LENGTH - 1;

static GLOBAL_ARRAY: [Shared<i32>; MAX_LENGTH] = [const { Shared::new(0) }; MAX_LENGTH];

static ISR_1: Interrupt = isr(1, isr_1);
static ISR_2: Interrupt = isr(2, isr_2);
static ISRS: Isrs = Isrs(&[&ISR_1, &ISR_2]);

fn main_task() {
    ISRS.init();
    idlerun();
}

fn isr_1() {
    for i in 0..MAX_LENGTH {
        if i == TRIGGER {
            GLOBAL_ARRAY[TRIGGER].write(1); // @L33
        }
        // Dead: the loop stops before `MAX_LENGTH + 1`.
        if i == MAX_LENGTH + 1 {
            GLOBAL_ARRAY[TRIGGER].write(1); // @L35
        }
    }
    let _mininum = GLOBAL_ARRAY[TRIGGER].read() - 10; // @L37
    let _maxnum = GLOBAL_ARRAY[0].read() + 10; // @L39
}

fn isr_2() {
    idlerun();
    GLOBAL_ARRAY[TRIGGER].write(999); // @L44
}

firmware!(main_task, interrupts: [ISR_1, ISR_2]);
