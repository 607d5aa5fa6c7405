//! Interrupt sources a firmware declares: which NVIC line, its priority, how it may fire,
//! and its handler. Plain data below every other layer; the scheduler's model of them is in
//! `sched::irq`, the operations on them (request, mask) in the primitives.

/// Most interrupt sources a firmware declares: 8, or 16 / 32 with the cargo feature
/// `irqs-16` / `irqs-32` (of `jostle`, or `jostle-kernel`). Each source costs some 40 bytes
/// of kernel state (its firing state and its handler's triple windows) whether declared or
/// not.
#[cfg(feature = "irqs-32")]
pub const MAX_IRQS: usize = 32;
/// Most interrupt sources a firmware declares (see the default's documentation).
#[cfg(all(feature = "irqs-16", not(feature = "irqs-32")))]
pub const MAX_IRQS: usize = 16;
/// Most interrupt sources a firmware declares (see the default's documentation).
#[cfg(not(any(feature = "irqs-16", feature = "irqs-32")))]
pub const MAX_IRQS: usize = 8;

/// The cargo feature that raises [`MAX_IRQS`], or `None` at the largest limit (as
/// `task::NEXT_TASKS_FEATURE` for tasks).
pub const NEXT_IRQS_FEATURE: Option<&str> = match MAX_IRQS {
    8 => Some("irqs-16"),
    16 => Some("irqs-32"),
    _ => None,
};

/// Refuses (panics, before any task runs) a firmware that declares more interrupt sources
/// than [`MAX_IRQS`], naming the feature that raises the limit.
pub fn check_declared(n: usize) {
    if n > MAX_IRQS {
        match NEXT_IRQS_FEATURE {
            Some(f) => panic!(
                "{n} interrupt sources declared, at most {MAX_IRQS} (the feature `{f}` of `jostle` raises it)"
            ),
            None => panic!("{n} interrupt sources declared, at most {MAX_IRQS}"),
        }
    }
}

/// How a source may fire (see `sched::irq`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Firing {
    /// Only after the firmware requested it ([`Interrupt::request`]); one firing per
    /// request, and a request while one is pending merges with it (a pended NVIC bit).
    Requested,
    /// Wherever it is enabled and unmasked, never re-entrantly, at most `max` times per run.
    Spontaneous {
        /// Firings per run.
        max: u8,
    },
    /// A peripheral's line whose handler firmware also pends: once per request (as
    /// [`Firing::Requested`]), and besides spontaneously, at most `max` times per run (as
    /// [`Firing::Spontaneous`]). An RTIC hardware task.
    Hardware {
        /// Spontaneous firings per run.
        max: u8,
    },
    /// An async task run by the handler of source `by` (its dispatcher), which polls it
    /// when it is requested: the scheduler never fires it on its own, and a request of it
    /// is also a request of its dispatcher ([`crate::sched::Core::next_poll`]).
    Polled {
        /// The dispatcher's source index.
        by: u8,
    },
}

impl Firing {
    /// The most spontaneous firings per run, when it fires spontaneously at all.
    pub const fn spontaneous_max(self) -> Option<u8> {
        match self {
            Firing::Spontaneous { max } | Firing::Hardware { max } => Some(max),
            Firing::Requested | Firing::Polled { .. } => None,
        }
    }
}

/// An interrupt source as the scheduler sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IrqSource {
    /// NVIC priority: lower numbers preempt higher ones; equal ones do not preempt.
    pub priority: u8,
    /// How it may fire.
    pub firing: Firing,
}

/// A declared interrupt source: `static UART: Interrupt = Interrupt::requested(5, 1, uart);`
/// then `firmware!(main_task, interrupts: [UART])`. Sources start disabled, as after a reset
/// (`UART.enable()`).
pub struct Interrupt {
    /// The NVIC line (IRQ number) the Cortex-M port pends to run the handler.
    pub irq: u16,
    /// Priority and firing.
    pub source: IrqSource,
    /// The handler.
    pub handler: fn(),
}

impl Interrupt {
    /// A source that fires only after the firmware requests it (e.g. a transfer it
    /// started completes), at a time the scheduler chooses.
    pub const fn requested(irq: u16, priority: u8, handler: fn()) -> Self {
        Interrupt {
            irq,
            source: IrqSource {
                priority,
                firing: Firing::Requested,
            },
            handler,
        }
    }

    /// A source that may fire wherever it is enabled and unmasked, at most `max_firings`
    /// times per run (an external event: a button, a timer, a received byte).
    pub const fn spontaneous(irq: u16, priority: u8, max_firings: u8, handler: fn()) -> Self {
        Interrupt {
            irq,
            source: IrqSource {
                priority,
                firing: Firing::Spontaneous { max: max_firings },
            },
            handler,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_the_declared_count() {
        check_declared(MAX_IRQS);
    }

    #[test]
    #[should_panic(expected = "at most 8 (the feature `irqs-16` of `jostle` raises it)")]
    fn one_source_too_many_names_the_feature_that_raises_the_limit() {
        check_declared(MAX_IRQS + 1);
    }
}
