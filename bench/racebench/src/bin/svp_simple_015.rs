//! racebench 2.1 svp_simple_015: main tests `var1` against two random bounds with a
//! short-circuit `and` (two reads); isr_1's store between them is bug 1 (R-W-R; needs the
//! first test true). The conditional expression reads `var2` once: the false alarm.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, idlerun, isr, rand};

static GLOBAL_VAR1: Shared<i32> = Shared::new(0);
static GLOBAL_VAR2: Shared<i32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    ISRS.init();
    // `x = rand(); y = rand(); p = rand()`, non-negative as the C's: the first test
    // (var1 < y) needs y > 0, the second (var1 > x) then holds only after isr_1's store.
    let x = rand(4) as i32;
    let y = rand(4) as i32;
    let p = rand(2) as i32;
    let mut _z = 0;
    // `var1 < y && var1 > x`: two reads, the second only when the first test holds.
    let first = GLOBAL_VAR1.read(); // @L30
    if first < y {
        let v = GLOBAL_VAR1.read(); // @L31
        if v > x {
            _z = x + y;
        }
    }
    // `p == 1 ? var2 : var2`: whichever arm, one read of `var2`.
    let _ = p;
    let _w = GLOBAL_VAR2.read(); // @L34
}

fn isr_1() {
    idlerun();
    GLOBAL_VAR1.write(5); // @L39
    GLOBAL_VAR2.write(5); // @L40
}

firmware!(main_task, interrupts: [ISR_1]);
