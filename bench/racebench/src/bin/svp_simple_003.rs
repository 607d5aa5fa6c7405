//! racebench 2.1 svp_simple_003: main masks both handlers, reads `var2` twice, unmasks only
//! isr_1 and reads `var1` twice. isr_1 unmasks isr_2, which may preempt it at once and set
//! `flag`, so that isr_1's guarded store to `var1` lands between main's reads (bug 1, R-W-R).
//! The `var2` reads are masked and the `flag1 == 2` store is dead (the false alarms).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, MAX_LENGTH, idlerun, isr};

const TRIGGER: usize = MAX_LENGTH - 1;

static GLOBAL_VAR1: Shared<i32> = Shared::new(0);
static GLOBAL_VAR2: Shared<i32> = Shared::new(0);
/// 0 in the program (2.1/), 1 in the labelled copy: the program's value.
static GLOBAL_FLAG: Shared<i32> = Shared::new(0);
static GLOBAL_FLAG1: Shared<i32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISR_2: Interrupt = isr(2, isr_2);
static ISRS: Isrs = Isrs(&[&ISR_1, &ISR_2]);

fn main_task() {
    ISRS.init();
    idlerun();
    ISRS.disable_isr(1);
    ISRS.disable_isr(2);
    let mut _reader = 0;
    for i in 0..MAX_LENGTH {
        if i == TRIGGER {
            _reader = GLOBAL_VAR2.read(); // @L38
        }
    }
    for j in (0..MAX_LENGTH).rev() {
        if j == TRIGGER {
            _reader = GLOBAL_VAR2.read(); // @L43
        }
    }
    ISRS.enable_isr(1);
    for i in 0..MAX_LENGTH {
        if i == TRIGGER {
            _reader = GLOBAL_VAR1.read(); // @L50
        }
    }
    for j in (0..MAX_LENGTH).rev() {
        if j == TRIGGER {
            _reader = GLOBAL_VAR1.read(); // @L55
        }
    }
}

fn isr_1() {
    ISRS.enable_isr(2);
    GLOBAL_VAR2.write(999); // @L62
    if GLOBAL_FLAG.read() == 1 {
        GLOBAL_VAR1.write(999); // @L65
    } else if GLOBAL_FLAG1.read() == 2 {
        GLOBAL_VAR1.write(888); // @L67
    }
}

fn isr_2() {
    idlerun();
    GLOBAL_FLAG.write(1); // @L73
}

firmware!(main_task, interrupts: [ISR_1, ISR_2]);
