//! racebench 2.1 svp_simple_014: all the racing is between handlers. isr_1 masks isr_3 and
//! reads `var1` twice; isr_2 preempts it and unmasks isr_3, which preempts isr_1 in turn
//! (nested two deep) and stores to `var1` between its reads (bug 1, R-W-R). isr_3's store to
//! `var2` is the false alarm: it comes back only after isr_2 cleared `flag2`.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, idlerun, isr};

const MAX_LENGTH: usize = 100;
const TRIGGER: usize = 99;

static GLOBAL_VAR1: Shared<i32> = Shared::new(1);
static GLOBAL_VAR2: Shared<i32> = Shared::new(2);
static FLAG1: Shared<i32> = Shared::new(0);
static FLAG2: Shared<i32> = Shared::new(1);

static ISR_1: Interrupt = isr(1, isr_1);
static ISR_2: Interrupt = isr(2, isr_2);
static ISR_3: Interrupt = isr(3, isr_3);
static ISRS: Isrs = Isrs(&[&ISR_1, &ISR_2, &ISR_3]);

fn main_task() {
    ISRS.init();
    idlerun();
}

fn isr_1() {
    ISRS.disable_isr(3);
    let mut _reader = 0;
    for i in 0..MAX_LENGTH {
        if i == TRIGGER {
            _reader = GLOBAL_VAR1.read(); // @L39
        }
    }
    _reader = GLOBAL_VAR1.read(); // @L41
    _reader = GLOBAL_VAR2.read(); // @L43
    _reader = GLOBAL_VAR2.read(); // @L45
}

fn isr_2() {
    FLAG1.write(1); // @L49
    FLAG2.write(0); // @L50
    ISRS.enable_isr(3);
    idlerun();
}

fn isr_3() {
    if FLAG1.read() == 1 {
        GLOBAL_VAR1.write(9); // @L58
    }
    if FLAG2.read() == 1 {
        GLOBAL_VAR2.write(9); // @L59
    }
}

firmware!(main_task, interrupts: [ISR_1, ISR_2, ISR_3]);
