//! racebench 2.1 svp_simple_029: main reads element 36 of a telemetry table (and 37) through
//! getter calls, then writes 36 through a setter; isr_1 writes 36 through the same setter in
//! between (bug 1, a lost update: R-W-W). Element 37 is another location (the false alarm).
//! The C calls through function pointers set before the call; they are never raced, so the
//! port calls the functions directly. The 4096-byte table is scaled to 64 (36 and 37 kept).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr, rand};

static TM_BLOCKS: [Shared<u8>; 64] = [const { Shared::new(0) }; 64];
static AVERAGE_ADJUST_FLAG: Shared<u8> = Shared::new(0);
static AVERAGE_ADJUST_COUNT: Shared<u8> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    let status = 1;
    // case_init: the table filled with rand(), the adjust flag set, then init().
    for element in &TM_BLOCKS {
        element.write(rand(256) as u8);
    }
    AVERAGE_ADJUST_FLAG.write(0xFF);
    ISRS.init();
    if status == 1 {
        set_self_ctrl_flag(36, 0xFF, 0);
    }
}

fn set_self_ctrl_flag(para: usize, flag: u8, pos: u8) {
    let tmp1 = u8::from(flag > 0x80) << pos;
    let mut sts = get_tm_data(para);
    sts = sts.wrapping_add(get_tm_data(para + 1));
    sts |= tmp1;
    set_tm_data(para, sts);
}

fn get_tm_data(name: usize) -> u8 {
    TM_BLOCKS[name].read() // @L80
}

fn set_tm_data(name: usize, value: u8) {
    TM_BLOCKS[name].write(value); // @L83
}

fn isr_1() {
    if AVERAGE_ADJUST_FLAG.read() == 0xFF {
        let count = AVERAGE_ADJUST_COUNT.read().wrapping_add(1);
        AVERAGE_ADJUST_COUNT.write(count);
        set_tm_data(36, count);
    } else {
        AVERAGE_ADJUST_COUNT.write(0);
        set_tm_data(36, 0);
    }
}

firmware!(main_task, interrupts: [ISR_1]);
