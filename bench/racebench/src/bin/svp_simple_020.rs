//! racebench 2.1 svp_simple_020: main masks isr_2 and takes one of two "exclusive" branches on
//! `a + b` against `para`. isr_1 sets a flag and unmasks isr_2, whose raise of `para` between
//! the two tests lets both branches run (bug 2 on `para`, bug 1 on `var`, R-W-R; needs
//! 0 < a + b < 11). isr_1's own store to `var` is the false alarm.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr, rand};

static GLOBAL_VAR: Shared<i32> = Shared::new(0);
static GLOBAL_PARA: Shared<i32> = Shared::new(0);
static GLOBAL_FLAG: Shared<i32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISR_2: Interrupt = isr(2, isr_2);
static ISRS: Isrs = Isrs(&[&ISR_1, &ISR_2]);

fn main_task() {
    ISRS.init();
    ISRS.disable_isr(2);
    // `a = rand(); b = rand()`: the bugs need 0 < a + b < 11, so each in 0..8.
    let a = rand(8) as i32;
    let b = rand(8) as i32;
    let mut _reader = 0;
    let para = GLOBAL_PARA.read(); // @L36
    if a + b > para {
        _reader = GLOBAL_VAR.read(); // @L37
    }
    let para = GLOBAL_PARA.read(); // @L39
    if a + b < para {
        _reader = GLOBAL_VAR.read(); // @L40
    }
}

fn isr_1() {
    GLOBAL_VAR.write(1); // @L44
    GLOBAL_FLAG.write(1); // @L46
    ISRS.enable_isr(2);
}

fn isr_2() {
    if GLOBAL_FLAG.read() == 1 {
        GLOBAL_PARA.write(11); // @L52
    }
    GLOBAL_VAR.write(5); // @L53
}

firmware!(main_task, interrupts: [ISR_1, ISR_2]);
