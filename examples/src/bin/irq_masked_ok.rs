//! The structures of `irq_counter`, `irq_flag` and `irq_nested`, correctly masked: the main
//! loop's increment in a critical section, the button's events counted (a flag would merge
//! two presses) and consumed with its interrupt disabled, the low handler's increment with
//! higher priorities masked. No schedule breaks it.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static COUNT: Shared<u32> = Shared::new(0);
static TICKS: Shared<u32> = Shared::new(0);
static PENDING: Shared<u32> = Shared::new(0);
static EVENTS: Shared<u32> = Shared::new(0);
static TOTAL: Shared<u32> = Shared::new(0);
static NESTED: Shared<u32> = Shared::new(0);

static TICK: Interrupt = Interrupt::spontaneous(10, 3, 2, tick);
static BUTTON: Interrupt = Interrupt::spontaneous(12, 3, 2, button);
static LOW: Interrupt = Interrupt::spontaneous(13, 2, 2, low);
static HIGH: Interrupt = Interrupt::spontaneous(14, 1, 2, high);

fn tick() {
    COUNT.update(|c| c + 1);
    TICKS.update(|t| t + 1);
}

fn button() {
    EVENTS.update(|e| e + 1);
    PENDING.update(|p| p + 1);
}

fn low() {
    with_priority_mask(1, || {
        let t = TOTAL.read();
        TOTAL.write(t + 1);
        NESTED.update(|n| n + 1);
    });
}

fn high() {
    with_priority_mask(1, || {
        TOTAL.update(|t| t + 1);
        NESTED.update(|n| n + 1);
    });
}

fn main_task() {
    enable_interrupts();
    let mut handled = 0;
    for _ in 0..4 {
        critical_section::with(|_| {
            let c = COUNT.read();
            COUNT.write(c + 1);
        });
        BUTTON.disable();
        handled += PENDING.read();
        PENDING.write(0);
        BUTTON.enable();
    }
    disable_interrupts();
    handled += PENDING.read();
    assert_eq!(COUNT.read(), 4 + TICKS.read(), "lost an increment");
    assert_eq!(handled, EVENTS.read(), "an event was lost");
    assert_eq!(
        TOTAL.read(),
        NESTED.read(),
        "a preempted handler lost an increment"
    );
}

firmware!(main_task, interrupts: [TICK, BUTTON, LOW, HIGH]);
