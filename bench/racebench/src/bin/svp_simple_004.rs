//! racebench 2.1 svp_simple_004: main reads `var1`, `var3` twice each and `var2` twice, with
//! isr_2 masked. isr_1's store to `var1` between the first pair is bug 1 (R-W-R); its store to
//! `var3` is dead (`cond3` is always 1), and isr_2's guarded store to `var2` never runs in the
//! window (isr_1 clears `cond6` before unmasking it): the false alarms.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr};

static CONDITION1: Shared<i32> = Shared::new(1);
static CONDITION2: Shared<i32> = Shared::new(1);
static CONDITION3: Shared<i32> = Shared::new(1);
static CONDITION4: Shared<i32> = Shared::new(1);
static CONDITION5: Shared<i32> = Shared::new(1);
static CONDITION6: Shared<i32> = Shared::new(1);
static GLOBAL_VAR1: Shared<i32> = Shared::new(0x11);
static GLOBAL_VAR2: Shared<i32> = Shared::new(0x22);
static GLOBAL_VAR3: Shared<i32> = Shared::new(0x33);

static ISR_1: Interrupt = isr(1, isr_1);
static ISR_2: Interrupt = isr(2, isr_2);
static ISRS: Isrs = Isrs(&[&ISR_1, &ISR_2]);

fn main_task() {
    ISRS.init();
    ISRS.disable_isr(2);
    let mut _reader = 0;
    if CONDITION1.read() != 0 {
        _reader = GLOBAL_VAR1.read(); // @L41
        _reader = GLOBAL_VAR3.read(); // @L42
    }
    if CONDITION2.read() != 0 {
        _reader = GLOBAL_VAR1.read(); // @L46
        _reader = GLOBAL_VAR3.read(); // @L47
    }
    if CONDITION4.read() != 0 {
        _reader = GLOBAL_VAR2.read(); // @L50
    }
    if CONDITION5.read() != 0 {
        _reader = GLOBAL_VAR2.read(); // @L52
    }
}

fn isr_1() {
    CONDITION6.write(0); // @L56
    if CONDITION3.read() == 1 {
        GLOBAL_VAR1.write(0xaa); // @L59
    } else {
        GLOBAL_VAR3.write(0xcc); // @L61
    }
    ISRS.enable_isr(2);
}

fn isr_2() {
    if CONDITION6.read() == 1 {
        GLOBAL_VAR2.write(0x22); // @L68
    }
}

firmware!(main_task, interrupts: [ISR_1, ISR_2]);
