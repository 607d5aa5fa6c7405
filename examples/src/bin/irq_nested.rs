//! Two interrupt priorities: a low-priority handler increments a shared total with a read and
//! a write, a high-priority handler increments it too. Only when the high one preempts the
//! low one between its read and its write is an increment lost; the main loop never touches
//! the total until both are disabled. (Fix: mask the high priority in the low handler.)
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static TOTAL: Shared<u32> = Shared::new(0);
static FIRED: Shared<u32> = Shared::new(0);

/// A low-priority source (priority 2) and a high-priority one (priority 1: preempts it).
static LOW: Interrupt = Interrupt::spontaneous(13, 2, 2, low);
static HIGH: Interrupt = Interrupt::spontaneous(14, 1, 2, high);

fn low() {
    let t = TOTAL.read();
    TOTAL.write(t + 1);
    FIRED.update(|f| f + 1);
}

fn high() {
    TOTAL.update(|t| t + 1);
    FIRED.update(|f| f + 1);
}

fn main_task() {
    LOW.enable();
    HIGH.enable();
    for _ in 0..10 {
        yield_now();
    }
    disable_interrupts();
    assert_eq!(
        TOTAL.read(),
        FIRED.read(),
        "a preempted handler lost an increment"
    );
}

firmware!(main_task, interrupts: [LOW, HIGH]);
