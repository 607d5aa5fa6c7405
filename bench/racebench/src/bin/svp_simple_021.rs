//! racebench 2.1 svp_simple_021: main resets the channel-1 byte counter once it reaches 16
//! (check, then store 0) and later copies it; isr_1 stores a new count from the CNT register
//! between check and reset (bug 1), reset and copy (bug 2) or a failed check and the copy
//! (bug 3). No false alarm is planted.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, isr, rand};

static RCVD_BYTES_CH1: Shared<u16> = Shared::new(0);
static RCVD_BYTES_CH2: Shared<u16> = Shared::new(0);
static RCVD_BYTES: Shared<u16> = Shared::new(0);
/// The two 256-byte channel buffers, full size (a clear is 256 stores, no 10,000 loop).
static CHAN1_BUFF: [Shared<u8>; 256] = [const { Shared::new(0) }; 256];
static CHAN2_BUFF: [Shared<u8>; 256] = [const { Shared::new(0) }; 256];
/// `volatile u8 *buff_p`, the start of the channel buffer main reads: null until main sets
/// it in the C, channel 1 here.
static BUFF_P: Shared<&'static [Shared<u8>; 256]> = Shared::new(&CHAN1_BUFF);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    // case_init: both counters `rand()`, then init(). The check at 44 passes for bugs 1-2
    // and fails for bug 3, so 0..32 (both sides of 16).
    RCVD_BYTES_CH1.write(rand(32) as u16);
    RCVD_BYTES_CH2.write(rand(32) as u16);
    ISRS.init();
    recv_tc_block();
    for ichan in 0..2 {
        if ichan == 0 {
            BUFF_P.write(&CHAN1_BUFF);
            let bytes = RCVD_BYTES_CH1.read(); // @L65
            RCVD_BYTES.write(bytes);
        } else {
            BUFF_P.write(&CHAN2_BUFF);
            let bytes = RCVD_BYTES_CH2.read();
            RCVD_BYTES.write(bytes);
        }
        // The block header (type, id, valid length), a local record in the C.
        let _type = BUFF_P.read()[2].read();
        let _id = BUFF_P.read()[4].read();
        let _valid_len = BUFF_P.read()[5].read();
    }
}

fn recv_tc_block() {
    let mut _flag_chan1 = 0u32;
    let bytes = RCVD_BYTES_CH1.read(); // @L44
    if bytes >= 16 {
        RCVD_BYTES_CH1.write(0); // @L45
        for element in &CHAN1_BUFF {
            element.write(0);
        }
        _flag_chan1 = 0xFF;
    }
}

fn isr_1() {
    // CNT, the hardware counter at 0x10000000: a seeded value, 0..256 so that the count
    // (bits 3..15) falls on both sides of 16.
    let cnt = input(256);
    RCVD_BYTES_CH1.write(((cnt >> 3) & 0x1FFF) as u16); // @L79
}

firmware!(main_task, interrupts: [ISR_1]);
