//! A task that spins without ever reaching a scheduling point: only the host's wall-clock
//! limit can end it.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static SPIN: Shared<u32> = Shared::new(0);

fn main_task() {
    SPIN.write(1);
    let mut x = 0u32;
    loop {
        x = core::hint::black_box(x.wrapping_add(1));
    }
}

firmware!(main_task);
