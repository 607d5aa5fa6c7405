//! racebench 2.1 svp_simple_019: isr_1 clears `condition3` and stores `var1`; firing after
//! main's unguarded read of `var1`, it makes the second guarded read run instead of the first
//! (bug 1, R-W-R). False alarms: `var2` under contradictory `para` tests, `var1` at the skipped
//! first guarded read, and the hand-over through `condition3` (feasible, deemed benign).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, idlerun, isr, rand};

static GLOBAL_CONDITION1: Shared<i32> = Shared::new(1);
static GLOBAL_CONDIITON2: Shared<i32> = Shared::new(1);
static GLOBAL_CONDITION3: Shared<i32> = Shared::new(1);

static GLOBAL_PARA1: Shared<i32> = Shared::new(0);
static GLOBAL_PARA2: Shared<i32> = Shared::new(0);
static GLOBAL_PARA3: Shared<i32> = Shared::new(0);

static GLOBAL_VAR1: Shared<i32> = Shared::new(0);
static GLOBAL_VAR2: Shared<i32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    ISRS.init();
    // `rand() % 10` each, as in the C.
    GLOBAL_PARA1.write(rand(10) as i32); // @L33
    GLOBAL_PARA2.write(rand(10) as i32); // @L34
    GLOBAL_PARA3.write(rand(10) as i32); // @L35
    // `var1 = rand()`: any value; isr_1 stores 1.
    GLOBAL_VAR1.write(rand(4) as i32); // @L37
    let mut _reader = 0;
    if GLOBAL_PARA1.read() + GLOBAL_PARA3.read() > GLOBAL_PARA2.read() {
        _reader = GLOBAL_VAR2.read(); // @L40
    }
    _reader = GLOBAL_VAR2.read(); // @L42
    if GLOBAL_CONDITION1.read() == 1 && GLOBAL_CONDIITON2.read() == 1 {
        _reader = GLOBAL_VAR1.read(); // @L45
    }
    idlerun();
    ISRS.disable_isr(1);
    let first = GLOBAL_CONDITION1.read() == 1 && GLOBAL_CONDITION3.read() == 1; // @L48
    if first {
        _reader = GLOBAL_VAR1.read(); // @L49
    }
    ISRS.enable_isr(1);
    idlerun();
    ISRS.disable_isr(1);
    let second = GLOBAL_CONDIITON2.read() == 1 && GLOBAL_CONDITION3.read() == 0; // @L53
    if second {
        _reader = GLOBAL_VAR1.read(); // @L54
    }
    ISRS.enable_isr(1);
}

fn isr_1() {
    idlerun();
    if GLOBAL_PARA1.read() + GLOBAL_PARA3.read() < GLOBAL_PARA2.read() {
        GLOBAL_VAR2.write(0x55); // @L61
    }
    GLOBAL_CONDITION3.write(0); // @L63
    GLOBAL_VAR1.write(0x01); // @L65
}

firmware!(main_task, interrupts: [ISR_1]);
