//! racebench 2.1 svp_simple_010: a union whose header byte overlaps its data word, and a
//! struct whose fields are separate. main writes the union's header then its data (which
//! overwrites the header); isr_1 reads the header in between (bug 1, W-R-W). The struct's
//! fields are two locations (the false alarm).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, idlerun, isr};

/// The union: one word, whose low byte is the header (writing the header is a
/// read-modify-write of the word, one statement).
static GLOBAL_UNION: Shared<u32> = Shared::new(0);
static STRUCT_HEADER: Shared<u8> = Shared::new(0);
static STRUCT_DATA: Shared<u32> = Shared::new(0);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    ISRS.init();
    GLOBAL_UNION.update(|w| (w & !0xff) | 1); // @L40
    GLOBAL_UNION.write(2); // @L41
    STRUCT_HEADER.write(3); // @L43
    STRUCT_DATA.write(4); // @L44
}

fn isr_1() {
    idlerun();
    let _header = GLOBAL_UNION.read() & 0xff; // @L51
    let _struct_header = STRUCT_HEADER.read(); // @L53
}

firmware!(main_task, interrupts: [ISR_1]);
