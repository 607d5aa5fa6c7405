//! racebench 2.1 svp_simple_013: main masks isr_2 and isr_3; isr_1 unmasks isr_2, which
//! unmasks isr_3 (a chain of global unmasks). isr_3's store to `var1` between main's two
//! reads is bug 1 (R-W-R). Its store to `var2` is the false alarm: by the time isr_3 is live
//! again, isr_2 has cleared `flag2`.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, idlerun, isr};

/// `MAX_LENGTH` 100 and `TRIGGER` 99 in the C already.
const MAX_LENGTH: usize = 100;
const TRIGGER: usize = 99;

static GLOBAL_VAR1: Shared<i32> = Shared::new(0);
static GLOBAL_VAR2: Shared<i32> = Shared::new(0);
static FLAG1: Shared<i32> = Shared::new(0);
static FLAG2: Shared<i32> = Shared::new(1);

static ISR_1: Interrupt = isr(1, isr_1);
static ISR_2: Interrupt = isr(2, isr_2);
static ISR_3: Interrupt = isr(3, isr_3);
static ISRS: Isrs = Isrs(&[&ISR_1, &ISR_2, &ISR_3]);

fn main_task() {
    ISRS.init();
    ISRS.disable_isr(2);
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

fn isr_1() {
    idlerun();
    ISRS.enable_isr(2);
    idlerun();
}

fn isr_2() {
    idlerun();
    FLAG1.write(1); // @L56
    FLAG2.write(0); // @L58
    ISRS.enable_isr(3);
    idlerun();
}

fn isr_3() {
    if FLAG1.read() == 1 {
        GLOBAL_VAR1.write(1); // @L65
    }
    if FLAG2.read() == 1 {
        GLOBAL_VAR2.write(1); // @L66
    }
}

firmware!(main_task, interrupts: [ISR_1, ISR_2, ISR_3]);
