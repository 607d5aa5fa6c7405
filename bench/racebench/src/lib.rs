#![doc = include_str!("../README.md")]
//! The harness model of racebench 2.1 (`2.1/README.md` of `chenruibuaa/racebench`) on
//! Jostle's interrupt sources, shared by the 31 cases in `src/bin/` (see `CASES.md`).
//!
//! Conventions of the ports:
//!
//! * `svp_simple_NNN_001_main` is the main task; `svp_simple_NNN_001_isr_N` is a
//!   [`Interrupt::spontaneous`] source of racebench priority `N` ([`isr`]): a larger `N`
//!   preempts a smaller one, so the NVIC priority is [`nvic_priority`]`(N)`. A source fires
//!   at most [`FIRINGS`] times per run (the README's "any number of times", bounded).
//! * Every source starts disabled, as before the C's `init()`; [`Isrs::init`] enables them
//!   all. `disable_isr(n)` / `enable_isr(n)` mask one source (`n = -1`: every source), with
//!   no nesting count, and the enable state is global ([`Isrs`]).
//! * A global the main program and a handler share is a [`Shared`]: one C load is one
//!   `read`, one C store one `write`; `x++` is `update` (one read-modify-write statement)
//!   unless the case's labels name its read and its write on different lines. Arrays are
//!   arrays of `Shared` (an element is a location of its own); pointers are
//!   `Shared<&'static Shared<_>>` (the pointer and its target are both locations).
//! * `rand()` and hardware registers are [`input`]: a value the run's seed chooses, from a
//!   small range written beside each call (the labelled bugs need particular values).
//! * `idlerun()` (a 101-iteration empty loop, the C's "an interrupt may come here") is
//!   [`idlerun`]: one scheduling point with no shared effect.
//! * Loops of 10,000 iterations are scaled to [`MAX_LENGTH`] (the racing element is still
//!   the last one); this keeps runs short and changes no labelled access.
//! * Each labelled access carries the comment `@Lnn`: nn is its line in the C file, the line
//!   `labels.toml` names. `scripts/racebench` maps Jostle's sites back to the labels with it.
#![cfg_attr(target_os = "none", no_std)]
#![warn(missing_docs)]

use jostle::*;

/// Firings per source per run: enough for a handler to come back inside a window once.
pub const FIRINGS: u8 = 2;

/// The scaled length of the C's 10,000-iteration loops.
pub const MAX_LENGTH: usize = 100;

/// The NVIC priority of racebench priority `n` (1..=7): lower numbers preempt on the NVIC,
/// larger ones in racebench.
pub const fn nvic_priority(n: u8) -> u8 {
    8 - n
}

/// Handler `N` of a case: NVIC line `15 + n` (free on every board Jostle supports),
/// racebench priority `n`, spontaneous, at most [`FIRINGS`] times per run.
pub const fn isr(n: u8, handler: fn()) -> Interrupt {
    Interrupt::spontaneous(15 + n as u16, nvic_priority(n), FIRINGS, handler)
}

/// A case's handlers, `isr_1` first: the C's `init`, `disable_isr` and `enable_isr`.
pub struct Isrs(pub &'static [&'static Interrupt]);

impl Isrs {
    /// `init()`: every handler enabled.
    pub fn init(&self) {
        self.enable_isr(-1);
    }

    /// `disable_isr(n)`: masks handler `n`, or every handler for `n = -1`.
    #[track_caller]
    pub fn disable_isr(&self, n: i32) {
        match n {
            -1 => {
                for i in self.0 {
                    i.disable();
                }
            }
            n => self.0[n as usize - 1].disable(),
        }
    }

    /// `enable_isr(n)`: unmasks handler `n`, or every handler for `n = -1`.
    #[track_caller]
    pub fn enable_isr(&self, n: i32) {
        match n {
            -1 => {
                for i in self.0 {
                    i.enable();
                }
            }
            n => self.0[n as usize - 1].enable(),
        }
    }
}

/// `idlerun()`: a window in which an interrupt may come, touching nothing shared.
#[track_caller]
pub fn idlerun() {
    yield_now();
}

/// `rand()`, constrained to `0..bound`: a value the run's seed chooses.
pub fn rand(bound: u32) -> u32 {
    input(bound)
}
