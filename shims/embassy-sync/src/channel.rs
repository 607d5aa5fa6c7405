//! embassy-sync's [`Channel`], whose hand-offs are events: each attempt to send is a send
//! (a release) before the real one, each message received a receive (an acquire) after it,
//! through the channel itself and through its senders and receivers (static and dynamic).
//! What a producer did before sending happens before what the consumer does after
//! receiving, as for the kernel's own signals.
//!
//! A send is announced before the real attempt, and every attempt is announced (a
//! `send().await` on a full channel announces each poll): so the kernel never has fewer
//! sends than the real channel has delivered, and a receive's event is never a wait the
//! kernel would block on (a handler must not block).

use crate::events;
use core::future::Future;
use core::panic::Location;
use core::pin::Pin;
use core::task::{Context, Poll};
use embassy_sync::blocking_mutex::raw::RawMutex;
use embassy_sync::channel as real;

pub use real::{ReceiveReadyFuture, TryReceiveError, TrySendError};

/// A bounded channel (embassy-sync's), whose hand-offs are events.
pub struct Channel<M: RawMutex, T, const N: usize> {
    real: real::Channel<M, T, N>,
}

/// Where a channel's events go: the channel's address (kept by every handle of it).
#[derive(Clone, Copy)]
struct Ends {
    g: usize,
}

impl Ends {
    #[track_caller]
    fn sending(self) {
        events::sending(events::site(Location::caller()), self.g);
    }

    /// `r`, after a receive event if `received`.
    #[track_caller]
    fn got<R>(self, received: bool, r: R) -> R {
        if received {
            events::received(events::site(Location::caller()), self.g);
        }
        r
    }

    #[track_caller]
    fn receive<F>(self, real: F) -> Received<F> {
        Received {
            real,
            site: events::site(Location::caller()),
            g: self.g,
        }
    }

    #[track_caller]
    fn send<F>(self, real: F) -> Sending<F> {
        Sending {
            real,
            site: events::site(Location::caller()),
            g: self.g,
        }
    }
}

/// A channel's queries, the same on the channel and its static handles: the real one's.
macro_rules! queries {
    () => {
        /// Returns the maximum number of elements the channel can hold.
        pub const fn capacity(&self) -> usize {
            N
        }

        /// Returns the free capacity of the channel.
        pub fn free_capacity(&self) -> usize {
            self.real.free_capacity()
        }

        /// Clears all elements in the channel.
        pub fn clear(&self) {
            self.real.clear()
        }

        /// Returns the number of elements currently in the channel.
        pub fn len(&self) -> usize {
            self.real.len()
        }

        /// Returns whether the channel is empty.
        pub fn is_empty(&self) -> bool {
            self.real.is_empty()
        }

        /// Returns whether the channel is full.
        pub fn is_full(&self) -> bool {
            self.real.is_full()
        }
    };
}

/// The sending side, the same on the channel and each sender; `$future` is what `send`
/// returns.
macro_rules! sends {
    ($future:ty) => {
        /// Sends a value, waiting until there is capacity (a send event before each attempt).
        #[track_caller]
        pub fn send(&self, message: T) -> $future {
            self.ends().send(self.real.send(message))
        }

        /// Attempts to send a message at once (a send event before the attempt).
        #[track_caller]
        pub fn try_send(&self, message: T) -> Result<(), TrySendError<T>> {
            self.ends().sending();
            self.real.try_send(message)
        }

        /// Allows a poll_fn to poll until the channel is ready to send.
        pub fn poll_ready_to_send(&self, cx: &mut Context<'_>) -> Poll<()> {
            self.real.poll_ready_to_send(cx)
        }
    };
}

/// The receiving side, the same on the channel and each receiver; `$future` is what
/// `receive` returns.
macro_rules! receives {
    ($future:ty) => {
        /// Receives the next value, waiting until there is one (a receive event when it
        /// comes).
        #[track_caller]
        pub fn receive(&self) -> $future {
            self.ends().receive(self.real.receive())
        }

        /// Attempts to receive a message at once (a receive event when it gets one).
        #[track_caller]
        pub fn try_receive(&self) -> Result<T, TryReceiveError> {
            let r = self.real.try_receive();
            self.ends().got(r.is_ok(), r)
        }

        /// Polls the channel for the next message (a receive event when it gets one).
        #[track_caller]
        pub fn poll_receive(&self, cx: &mut Context<'_>) -> Poll<T> {
            let r = self.real.poll_receive(cx);
            self.ends().got(r.is_ready(), r)
        }

        /// Allows a poll_fn to poll until the channel is ready to receive.
        pub fn poll_ready_to_receive(&self, cx: &mut Context<'_>) -> Poll<()> {
            self.real.poll_ready_to_receive(cx)
        }
    };
}

/// Peeking, where embassy-sync has it: no event (nothing is taken).
macro_rules! peeks {
    () => {
        /// Peeks at the next value without taking it.
        pub fn try_peek(&self) -> Result<T, TryReceiveError>
        where
            T: Clone,
        {
            self.real.try_peek()
        }
    };
}

impl<M: RawMutex, T, const N: usize> Channel<M, T, N> {
    /// Establish a new bounded channel.
    pub const fn new() -> Self {
        Channel {
            real: real::Channel::new(),
        }
    }

    fn ends(&self) -> Ends {
        Ends {
            g: self as *const Self as usize,
        }
    }

    /// Get a sender for this channel.
    pub fn sender(&self) -> Sender<'_, M, T, N> {
        Sender {
            real: self.real.sender(),
            at: self.ends(),
        }
    }

    /// Get a receiver for this channel.
    pub fn receiver(&self) -> Receiver<'_, M, T, N> {
        Receiver {
            real: self.real.receiver(),
            at: self.ends(),
        }
    }

    /// Get a sender for this channel using dynamic dispatch.
    pub fn dyn_sender(&self) -> DynamicSender<'_, T> {
        self.sender().into()
    }

    /// Get a receiver for this channel using dynamic dispatch.
    pub fn dyn_receiver(&self) -> DynamicReceiver<'_, T> {
        self.receiver().into()
    }

    /// Is a value ready to be received? (Waits; receives nothing.)
    pub fn ready_to_receive(&self) -> ReceiveReadyFuture<'_, M, T, N> {
        self.real.ready_to_receive()
    }

    sends!(SendFuture<'_, M, T, N>);
    receives!(ReceiveFuture<'_, M, T, N>);
    peeks!();
    queries!();
}

impl<M: RawMutex, T, const N: usize> Default for Channel<M, T, N> {
    fn default() -> Self {
        Self::new()
    }
}

/// A handle of a channel (a sender or a receiver, static or dynamic: the aliases below):
/// the real handle `R` and where its events go. `Copy` as the real ones are.
pub struct Handle<R> {
    real: R,
    at: Ends,
}

impl<R: Copy> Clone for Handle<R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R: Copy> Copy for Handle<R> {}

impl<R> Handle<R> {
    fn ends(&self) -> Ends {
        self.at
    }

    /// The handle of the same channel whose real handle `R` converts to.
    fn converted<S: From<R>>(self) -> Handle<S> {
        Handle {
            real: self.real.into(),
            at: self.at,
        }
    }
}

/// Send-only access to a [`Channel`].
pub type Sender<'ch, M, T, const N: usize> = Handle<real::Sender<'ch, M, T, N>>;
/// Receive-only access to a [`Channel`].
pub type Receiver<'ch, M, T, const N: usize> = Handle<real::Receiver<'ch, M, T, N>>;
/// Send-only access to a [`Channel`] without knowing its raw mutex or capacity.
pub type DynamicSender<'ch, T> = Handle<real::DynamicSender<'ch, T>>;
/// A [`DynamicSender`] that may be sent between threads (its raw mutex is `Sync`).
pub type SendDynamicSender<'ch, T> = Handle<real::SendDynamicSender<'ch, T>>;
/// Receive-only access to a [`Channel`] without knowing its raw mutex or capacity.
pub type DynamicReceiver<'ch, T> = Handle<real::DynamicReceiver<'ch, T>>;
/// A [`DynamicReceiver`] that may be sent between threads (its raw mutex is `Sync`).
pub type SendDynamicReceiver<'ch, T> = Handle<real::SendDynamicReceiver<'ch, T>>;
/// Receive-only access to a [`Channel`] that may be sent between threads (the older name).
pub type SendableDynamicReceiver<'ch, T> = SendDynamicReceiver<'ch, T>;

impl<'ch, M: RawMutex, T, const N: usize> Sender<'ch, M, T, N> {
    sends!(SendFuture<'ch, M, T, N>);
    queries!();
}

impl<'ch, M: RawMutex, T, const N: usize> Receiver<'ch, M, T, N> {
    /// Is a value ready to be received? (Waits; receives nothing.)
    pub fn ready_to_receive(&self) -> ReceiveReadyFuture<'_, M, T, N> {
        self.real.ready_to_receive()
    }

    receives!(ReceiveFuture<'_, M, T, N>);
    peeks!();
    queries!();
}

impl<'ch, T> DynamicSender<'ch, T> {
    sends!(DynamicSendFuture<'ch, T>);
}

impl<'ch, T> SendDynamicSender<'ch, T> {
    sends!(DynamicSendFuture<'ch, T>);
}

impl<T> DynamicReceiver<'_, T> {
    receives!(DynamicReceiveFuture<'_, T>);
    peeks!();
}

impl<T> SendDynamicReceiver<'_, T> {
    receives!(DynamicReceiveFuture<'_, T>);
}

/// A static handle or future into its dynamic one (the `Send*` handles for a `Sync + Send`
/// raw mutex).
macro_rules! dynamic {
    ($static:ident => $dynamic:ident $(+ $bound:ident)*) => {
        impl<'ch, M: RawMutex $(+ $bound)*, T, const N: usize> From<$static<'ch, M, T, N>>
            for $dynamic<'ch, T>
        {
            fn from(h: $static<'ch, M, T, N>) -> Self {
                h.converted()
            }
        }
    };
}

dynamic!(Sender => DynamicSender);
dynamic!(Sender => SendDynamicSender + Sync + Send);
dynamic!(Receiver => DynamicReceiver);
dynamic!(Receiver => SendDynamicReceiver + Sync + Send);

impl<M: RawMutex, T, const N: usize> futures_core::Stream for Receiver<'_, M, T, N> {
    type Item = T;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        self.poll_receive(cx).map(Some)
    }
}

/// embassy-sync 0.8's `Sink` (for 0.7 too): `start_send` is a `try_send`.
macro_rules! sink {
    ($ty:ty $(, $life:lifetime)?) => {
        impl<$($life,)? M: RawMutex, T, const N: usize> futures_sink::Sink<T> for $ty {
            type Error = TrySendError<T>;

            fn poll_ready(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
            ) -> Poll<Result<(), Self::Error>> {
                self.poll_ready_to_send(cx).map(Ok)
            }

            fn start_send(self: Pin<&mut Self>, item: T) -> Result<(), Self::Error> {
                self.try_send(item)
            }

            fn poll_flush(
                self: Pin<&mut Self>,
                _cx: &mut Context<'_>,
            ) -> Poll<Result<(), Self::Error>> {
                Poll::Ready(Ok(()))
            }

            fn poll_close(
                self: Pin<&mut Self>,
                _cx: &mut Context<'_>,
            ) -> Poll<Result<(), Self::Error>> {
                Poll::Ready(Ok(()))
            }
        }
    };
}

sink!(Channel<M, T, N>);
sink!(Sender<'ch, M, T, N>, 'ch);

/// A real sending future, each poll announced first (a send event): at `site`, through the
/// channel at `g`.
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Sending<F> {
    real: F,
    site: u32,
    g: usize,
}

impl<F> Sending<F> {
    /// The same send, through the future `F` converts to.
    fn converted<G: From<F>>(self) -> Sending<G> {
        Sending {
            real: self.real.into(),
            site: self.site,
            g: self.g,
        }
    }
}

impl<F: Future + Unpin> Future for Sending<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        events::sending(self.site, self.g);
        Pin::new(&mut self.real).poll(cx)
    }
}

/// A real receiving future, a receive event when it completes: at `site`, from the
/// primitive at `g`.
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Received<F> {
    pub(crate) real: F,
    pub(crate) site: u32,
    pub(crate) g: usize,
}

impl<F> Received<F> {
    /// The same receive, through the future `F` converts to.
    fn converted<G: From<F>>(self) -> Received<G> {
        Received {
            real: self.real.into(),
            site: self.site,
            g: self.g,
        }
    }
}

impl<F: Future + Unpin> Future for Received<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let poll = Pin::new(&mut self.real).poll(cx);
        if poll.is_ready() {
            events::received(self.site, self.g);
        }
        poll
    }
}

/// Future returned by [`Channel::send`] and [`Sender`]'s `send`.
pub type SendFuture<'ch, M, T, const N: usize> = Sending<real::SendFuture<'ch, M, T, N>>;
/// Future returned by a [`DynamicSender`]'s `send`.
pub type DynamicSendFuture<'ch, T> = Sending<real::DynamicSendFuture<'ch, T>>;
/// Future returned by [`Channel::receive`] and [`Receiver`]'s `receive`.
pub type ReceiveFuture<'ch, M, T, const N: usize> = Received<real::ReceiveFuture<'ch, M, T, N>>;
/// Future returned by a [`DynamicReceiver`]'s `receive`.
pub type DynamicReceiveFuture<'ch, T> = Received<real::DynamicReceiveFuture<'ch, T>>;

dynamic!(SendFuture => DynamicSendFuture);
dynamic!(ReceiveFuture => DynamicReceiveFuture);
