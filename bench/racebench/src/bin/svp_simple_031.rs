//! racebench 2.1 svp_simple_031: main reads the channel-1 byte counter three times (a copy,
//! a >= 16 check in func_3, the argument to func_1) and func_2 a fourth time when that
//! argument was 0; isr_1's store from the CNT register between two consecutive reads is a
//! bug (1-3; bug 3 needs isr_1 to store 0 before the argument read). No false alarm.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr, rand};

static RCVD_BYTES_CH1: Shared<u16> = Shared::new(0);
static RCVD_BYTES_CH2: Shared<u16> = Shared::new(0);
static RCVD_BYTES: Shared<u16> = Shared::new(0);
/// The channel-1 buffer, full size (main only reads three of its bytes); the C's channel-2
/// buffer is never used.
static CHAN1_BUFF: [Shared<u8>; 256] = [const { Shared::new(0) }; 256];
/// `volatile u8 *buff_p`, the start of the channel buffer main reads: null until main sets
/// it in the C, channel 1 here.
static BUFF_P: Shared<&'static [Shared<u8>; 256]> = Shared::new(&CHAN1_BUFF);
/// Never written: 0, so func_1 takes its else branch only for a counter of 0.
static GLOABLE_VAR1: Shared<u32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    // case_init: both counters `rand()`, then init(). The check at 83 must pass for bugs 2
    // and 3, so 0..32 (both sides of 16).
    RCVD_BYTES_CH1.write(rand(32) as u16);
    RCVD_BYTES_CH2.write(rand(32) as u16);
    ISRS.init();
    let ichan = 0;
    if ichan == 0 {
        BUFF_P.write(&CHAN1_BUFF);
        let bytes = RCVD_BYTES_CH1.read(); // @L46
        RCVD_BYTES.write(bytes);
    }
    // The block header (type, id, valid length), a local record in the C.
    let _type = BUFF_P.read()[2].read();
    let _id = BUFF_P.read()[4].read();
    let _valid_len = BUFF_P.read()[5].read();
    func_3();
}

fn func_1(a: i32, b: i32) -> i32 {
    if a < b { a.wrapping_mul(b) } else { func_2(10) }
}

fn func_2(x: i32) -> i32 {
    let bytes = RCVD_BYTES_CH1.read(); // @L65
    if bytes > 0 { x } else { 0 }
}

fn func_3() {
    let _flag_chan1 = 0u32;
    let bytes = RCVD_BYTES_CH1.read(); // @L83
    if bytes >= 16 {
        let a = GLOABLE_VAR1.read() as i32;
        let b = i32::from(RCVD_BYTES_CH1.read()); // @L85
        func_1(a, b);
    }
}

fn isr_1() {
    // CNT, the hardware counter at 0x10000000: a seeded value, 0 or 128 (a count of 0 or
    // 16): bug 2 needs a count of at least 16 at the check, bug 3 a stored 0.
    let cnt = input(2) << 7;
    RCVD_BYTES_CH1.write(((cnt >> 3) & 0x1FFF) as u16); // @L90
}

firmware!(main_task, interrupts: [ISR_1]);
