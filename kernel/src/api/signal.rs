use super::caller_site;
use crate::op::Op;
use crate::port;

/// A counting signal: `signal` sends (SND), `wait` blocks until one is pending and receives
/// it (RCV). Each send happens-before the receive that consumes it.
pub struct Signal {
    // Gives each signal a distinct address, its identity.
    _id: u8,
}

impl Default for Signal {
    fn default() -> Self {
        Self::new()
    }
}

impl Signal {
    /// A signal with nothing pending.
    pub const fn new() -> Self {
        Signal { _id: 0 }
    }

    fn id(&self) -> u32 {
        port::addr(self as *const Self as *const ())
    }

    /// Sends one signal.
    #[track_caller]
    pub fn signal(&self) {
        port::point(Op::Signal {
            s: caller_site(),
            g: self.id(),
        });
    }

    /// Waits for a pending signal and consumes it.
    #[track_caller]
    pub fn wait(&self) {
        port::point(Op::Wait {
            s: caller_site(),
            g: self.id(),
        });
    }
}
