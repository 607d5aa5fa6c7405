//! racebench 2.1 svp_simple_011: main stores `var1` through two aliases; isr_1 reads it
//! through a third between the stores (bug 1, W-R-W). The false alarm: main's two stores
//! through `u` go to different variables (`u` is re-pointed between them).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr};

static VAR1: Shared<i32> = Shared::new(0);
static VAR2: Shared<i32> = Shared::new(0);
static VAR3: Shared<i32> = Shared::new(0);
/// `volatile int *u`, null until main sets it in the C: it starts at `var2` here, so that
/// an early isr_1 reads a valid target.
static U: Shared<&'static Shared<i32>> = Shared::new(&VAR2);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    ISRS.init();
    let p: &Shared<i32> = &VAR1;
    let q: &Shared<i32> = &VAR1;
    p.write(1); // @L30
    q.write(2); // @L31
    U.write(&VAR2);
    U.read().write(1); // @L34
    U.write(&VAR3);
    U.read().write(2); // @L36
}

fn isr_1() {
    let m: &Shared<i32> = &VAR1;
    let _a = m.read(); // @L42
    let _b = U.read().read(); // @L43
}

firmware!(main_task, interrupts: [ISR_1]);
