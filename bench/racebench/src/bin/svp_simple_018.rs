//! racebench 2.1 svp_simple_018: main computes a perimeter and an area from two float
//! parameters, reading each more than once; isr_1 stores `para1`, isr_2 (through a helper)
//! `para2`, between main's reads (bugs 1-3, R-W-R). No false alarms.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, idlerun, isr};

static PARA1: Shared<f32> = Shared::new(0.0);
static PARA2: Shared<f32> = Shared::new(0.0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISR_2: Interrupt = isr(2, isr_2);
static ISRS: Isrs = Isrs(&[&ISR_1, &ISR_2]);

fn main_task() {
    ISRS.init();
    let _perimeter = func1();
    let _area = func2();
}

/// `2 * para1 * para2`.
fn func1() -> f32 {
    let p1 = PARA1.read(); // @L40
    let p2 = PARA2.read(); // @L41
    2.0 * p1 * p2
}

/// `para1 * para2 * para2`.
fn func2() -> f32 {
    let p1 = PARA1.read(); // @L47
    let p2 = PARA2.read(); // @L48
    let p3 = PARA2.read(); // @L49
    p1 * p2 * p3
}

fn isr_func1() {
    PARA2.write(1.0); // @L54
}

fn isr_1() {
    idlerun();
    PARA1.write(2.0); // @L59
}

fn isr_2() {
    idlerun();
    isr_func1();
}

firmware!(main_task, interrupts: [ISR_1, ISR_2]);
