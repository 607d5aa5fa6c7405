//! racebench 2.1 svp_simple_016: main writes `var1`, then reads it three times in one
//! expression; isr_1 stores to it. Each pair of consecutive main accesses with the handler's
//! store between them is a planted bug (bugs 1-3: W-W-R, R-W-R, R-W-R).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, idlerun, isr};

static GLOBAL_VAR1: Shared<i32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    ISRS.init();
    GLOBAL_VAR1.write(1); // @L24
    // The C's `reader = var1 + var1 + var1`: three loads, in source order.
    let a = GLOBAL_VAR1.read(); // @L25
    let b = GLOBAL_VAR1.read(); // @L26
    let c = GLOBAL_VAR1.read(); // @L27
    let _reader = a + b + c;
}

fn isr_1() {
    idlerun();
    GLOBAL_VAR1.write(9); // @L33
}

firmware!(main_task, interrupts: [ISR_1]);
