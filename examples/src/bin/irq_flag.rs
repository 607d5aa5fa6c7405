//! An event flag set by an interrupt handler and cleared by the main loop after it reads
//! it: a second event arriving between the read and the clear is lost. (Fix: clear it with
//! the interrupt disabled, or count events instead.)
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static FLAG: Shared<bool> = Shared::new(false);
static EVENTS: Shared<u32> = Shared::new(0);

/// A button press, at most twice per run.
static BUTTON: Interrupt = Interrupt::spontaneous(12, 1, 2, button);

fn button() {
    EVENTS.update(|e| e + 1);
    FLAG.write(true);
}

fn main_task() {
    BUTTON.enable();
    let mut handled = 0;
    for _ in 0..8 {
        if FLAG.read() {
            handled += 1;
            FLAG.write(false);
        }
    }
    BUTTON.disable();
    if FLAG.read() {
        handled += 1;
    }
    assert_eq!(handled, EVENTS.read(), "an event was lost");
}

firmware!(main_task, interrupts: [BUTTON]);
