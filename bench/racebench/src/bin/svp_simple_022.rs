//! racebench 2.1 svp_simple_022: main clears `var1`, clamps it in a callee, clears an array,
//! copies `var1` in another callee and once more in main; isr_1 clears `var1` at any point.
//! Each pair of consecutive main accesses with the handler's store between is a bug (1-4);
//! the false alarms pair non-consecutive accesses or use the dead clamp store (HEAD labels).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr, rand};

static VAR1: Shared<i32> = Shared::new(0);
static VAR2: Shared<i32> = Shared::new(0);
static VAR3: Shared<i32> = Shared::new(0);
static GLOBAL_ARRAY: [Shared<i32>; 256] = [const { Shared::new(0) }; 256];

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    // case_init: three random values, then init().
    VAR1.write(rand(32) as i32);
    VAR2.write(rand(32) as i32);
    VAR3.write(rand(32) as i32);
    ISRS.init();
    VAR1.write(0); // @L32
    func_1();
    for element in &GLOBAL_ARRAY {
        element.write(0);
    }
    func_2();
    let v = VAR1.read(); // @L39
    VAR3.write(v);
}

fn func_1() {
    func_3();
}

fn func_2() {
    func_4();
}

fn func_3() {
    let v = VAR1.read(); // @L55
    if v >= 12 {
        VAR1.write(12); // @L56
    } else {
        VAR1.write(0); // @L58
    }
}

fn func_4() {
    let v = VAR1.read(); // @L63
    VAR3.write(v);
}

fn isr_1() {
    VAR1.write(0); // @L66
}

firmware!(main_task, interrupts: [ISR_1]);
