//! racebench 2.1 svp_simple_001: isr_1 unmasks isr_2, which main masked; isr_2 then reads
//! the array element main zero-fills and sets (bug 1, W-R-W). isr_2's reads of `var` and of
//! element 1000 are the false alarms (masked; another element).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, MAX_LENGTH, idlerun, isr};

/// `TRIGGER` (9999 of 10,000 in the C).
const TRIGGER: usize = MAX_LENGTH - 1;
/// The element the C reads at index 1000: neither 0 nor `TRIGGER`.
const OTHER: usize = MAX_LENGTH / 10;

static GLOBAL_VAR: Shared<i32> = Shared::new(0);
static GLOBAL_ARRAY: [Shared<i32>; MAX_LENGTH] = [const { Shared::new(0) }; MAX_LENGTH];
static GLOBAL_FLAG: Shared<i32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISR_2: Interrupt = isr(2, isr_2);
static ISRS: Isrs = Isrs(&[&ISR_1, &ISR_2]);

fn main_task() {
    ISRS.init();
    ISRS.disable_isr(2);
    idlerun();
    for element in &GLOBAL_ARRAY {
        element.write(0); // @L32
    }
    for (i, element) in GLOBAL_ARRAY.iter().enumerate() {
        if i == TRIGGER {
            element.write(1); // @L35
        }
    }
}

fn isr_1() {
    idlerun();
    GLOBAL_FLAG.write(1); // @L41
    GLOBAL_VAR.write(0); // @L43
    GLOBAL_VAR.write(1); // @L44
    ISRS.enable_isr(2);
    idlerun();
}

fn isr_2() {
    let flag = GLOBAL_FLAG.read(); // @L53
    let _reader1 = if flag == 1 {
        GLOBAL_ARRAY[TRIGGER].read() // @L55
    } else {
        GLOBAL_ARRAY[0].read() // @L57
    };
    let _reader3 = GLOBAL_ARRAY[OTHER].read(); // @L60
    let _reader2 = GLOBAL_VAR.read(); // @L64
}

firmware!(main_task, interrupts: [ISR_1, ISR_2]);
