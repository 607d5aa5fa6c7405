//! racebench 2.1 svp_simple_017: main's loop counter is a global, and isr_1 resets it to
//! `TRIGGER`. Its store between two of main's consecutive accesses to the counter (bound
//! check and index, bug 2; index and increment, bug 3; increment and the next bound check,
//! bug 4) is a planted bug; bug 1 (two bound checks) is a pair at line granularity only.
//! The false alarm: main only stores to the array, so isr_1's store to element `TRIGGER`
//! has no read pair around it.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, MAX_LENGTH, idlerun, isr};

/// `TRIGGER` (50 of `MAX_LENGTH` 100 in the C already).
const TRIGGER: i32 = (MAX_LENGTH / 2) as i32;

static GLOBAL_VAR: Shared<i32> = Shared::new(0);
static LOCAL_ARRAY: [Shared<i32>; MAX_LENGTH] = [const { Shared::new(0) }; MAX_LENGTH];

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    ISRS.init();
    let mut i = 0;
    // The C's `for` over the global counter: init and bound check on one line, the
    // increment (one read-modify-write) on the next.
    GLOBAL_VAR.write(0); // @L29
    loop {
        let var = GLOBAL_VAR.read(); // @L29
        if var >= MAX_LENGTH as i32 {
            break;
        }
        let index = GLOBAL_VAR.read() as usize; // @L32
        LOCAL_ARRAY[index].write(i); // @L32
        i += 1;
        GLOBAL_VAR.update(|v| v + 1); // @L30
    }
}

fn isr_1() {
    idlerun();
    GLOBAL_VAR.write(TRIGGER); // @L39
    // 2.1/ indexes with the counter (a read of it), 2.1_remarks/ with `TRIGGER`.
    let index = GLOBAL_VAR.read() as usize; // @L41
    LOCAL_ARRAY[index].write(0); // @L41
}

firmware!(main_task, interrupts: [ISR_1]);
