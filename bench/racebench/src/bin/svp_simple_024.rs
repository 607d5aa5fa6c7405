//! racebench 2.1 svp_simple_024: main assembles a word from array elements through a helper
//! called twice (for index 0 it reads element 1 then 0, for index 1 element 2 then 1); isr_1
//! zero-fills the array. Its store to element 1 between the first call's read of it and the
//! second call's is bug 1 (R-W-R).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr, rand};

static GLOBAL_VAR: Shared<i32> = Shared::new(0);
static GLOBAL_ARRAY: [Shared<i32>; 100] = [const { Shared::new(0) }; 100];
static RESET_RT: Shared<u8> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    // case_init: `var = rand(); init()`.
    GLOBAL_VAR.write(rand(32) as i32);
    ISRS.init();
    let a = rt_data(0);
    let b = rt_data(1);
    let casereg = a | (b & 0x02f0);
    match casereg {
        0x02f0 => RESET_RT.write(1),
        0x0390 => RESET_RT.write(0),
        _ => {}
    }
}

/// The C's `RTData`: two bytes of a local union from elements `idx + 1` and `idx`.
fn rt_data(idx: usize) -> u32 {
    let hi = GLOBAL_ARRAY[idx + 1].read(); // @L56
    let lo = GLOBAL_ARRAY[idx].read(); // @L57
    u32::from_le_bytes([hi as u8, lo as u8, 0, 0])
}

fn isr_1() {
    for element in &GLOBAL_ARRAY {
        element.write(0); // @L63
    }
}

firmware!(main_task, interrupts: [ISR_1]);
