//! embassy-sync's [`Signal`], whose hand-offs are events: `signal` a send (a release), a
//! `wait` or `try_take` that gets the value a receive (an acquire), so that what the
//! signalling task did before happens before what the waiting task does after, as for the
//! kernel's own signals.

use crate::channel::Received;
use crate::events;
use core::future::Future;
use core::panic::Location;
use embassy_sync::blocking_mutex::raw::RawMutex;
use embassy_sync::signal as real;

/// Single-slot signalling primitive (embassy-sync's), whose hand-offs are events.
pub struct Signal<M: RawMutex, T> {
    real: real::Signal<M, T>,
}

impl<M: RawMutex, T> Signal<M, T> {
    /// Create a new `Signal`.
    pub const fn new() -> Self {
        Signal {
            real: real::Signal::new(),
        }
    }

    /// Its identity: its address.
    fn addr(&self) -> usize {
        self as *const Self as usize
    }

    /// Mark this Signal as signaled (a send at the caller's line).
    #[track_caller]
    pub fn signal(&self, val: T) {
        events::sending(events::site(Location::caller()), self.addr());
        self.real.signal(val)
    }

    /// Remove the queued value in this `Signal`, if any.
    pub fn reset(&self) {
        self.real.reset()
    }

    /// Future that completes when this Signal has been signaled, taking the value out of
    /// the signal (a receive at the caller's line).
    #[track_caller]
    pub fn wait(&self) -> impl Future<Output = T> + '_ {
        Received {
            real: self.real.wait(),
            site: events::site(Location::caller()),
            g: self.addr(),
        }
    }

    /// Non-blocking method to try and take the signal value (a receive when it gets one).
    #[track_caller]
    pub fn try_take(&self) -> Option<T> {
        let taken = self.real.try_take();
        if taken.is_some() {
            events::received(events::site(Location::caller()), self.addr());
        }
        taken
    }

    /// Non-blocking method to check whether this signal has been signaled. This does not
    /// clear the signal.
    pub fn signaled(&self) -> bool {
        self.real.signaled()
    }
}

impl<M: RawMutex, T> Default for Signal<M, T> {
    fn default() -> Self {
        Self::new()
    }
}
