//! A main loop and an interrupt handler both increment a counter; the main loop's increment
//! is a read and a write with the interrupt unmasked, so a handler firing in between loses
//! an update. (Fix: `critical_section::with` around the increment; see `irq_masked_ok`.)
//! `--arg 0`: main-loop increments (default 5).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static COUNT: Shared<u32> = Shared::new(0);
static FIRED: Shared<u32> = Shared::new(0);

/// A timer tick, at most twice per run.
static TICK: Interrupt = Interrupt::spontaneous(10, 1, 2, tick);

fn tick() {
    COUNT.update(|c| c + 1);
    FIRED.update(|f| f + 1);
}

fn main_task() {
    TICK.enable();
    let n = arg_or(0, 5);
    for _ in 0..n {
        let c = COUNT.read();
        COUNT.write(c + 1);
    }
    TICK.disable();
    assert_eq!(COUNT.read(), n + FIRED.read(), "lost an increment");
}

firmware!(main_task, interrupts: [TICK]);
