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
use crate::signal::Received;
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

/// Send events (before each attempt) and receive events (after each message), for the
/// primitive at address `g`.
#[derive(Clone, Copy)]
struct Ends {
    g: usize,
}

impl Ends {
    fn of<C>(channel: &C) -> Self {
        Ends {
            g: channel as *const C as usize,
        }
    }

    #[track_caller]
    fn sending(self) {
        events::sending(events::site(Location::caller()), self.g);
    }

    #[track_caller]
    fn got<R>(self, received: bool, r: R) -> R {
        if received {
            events::received(events::site(Location::caller()), self.g);
        }
        r
    }

    #[track_caller]
    fn receiving<F>(self, real: F) -> Received<F> {
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

impl<M: RawMutex, T, const N: usize> Channel<M, T, N> {
    /// Establish a new bounded channel.
    pub const fn new() -> Self {
        Channel {
            real: real::Channel::new(),
        }
    }

    fn ends(&self) -> Ends {
        Ends::of(self)
    }

    /// Get a sender for this channel.
    pub fn sender(&self) -> Sender<'_, M, T, N> {
        Sender {
            real: self.real.sender(),
            ends: self.ends(),
        }
    }

    /// Get a receiver for this channel.
    pub fn receiver(&self) -> Receiver<'_, M, T, N> {
        Receiver {
            real: self.real.receiver(),
            ends: self.ends(),
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

    /// Send a value, waiting until there is capacity.
    #[track_caller]
    pub fn send(&self, message: T) -> SendFuture<'_, M, T, N> {
        SendFuture(self.ends().send(self.real.send(message)))
    }

    /// Attempt to immediately send a message.
    #[track_caller]
    pub fn try_send(&self, message: T) -> Result<(), TrySendError<T>> {
        self.ends().sending();
        self.real.try_send(message)
    }

    /// Receive the next value, waiting until one is there.
    #[track_caller]
    pub fn receive(&self) -> ReceiveFuture<'_, M, T, N> {
        ReceiveFuture(self.ends().receiving(self.real.receive()))
    }

    /// Is a value ready to be received? (Waits; receives nothing.)
    pub fn ready_to_receive(&self) -> ReceiveReadyFuture<'_, M, T, N> {
        self.real.ready_to_receive()
    }

    /// Attempt to immediately receive a message.
    #[track_caller]
    pub fn try_receive(&self) -> Result<T, TryReceiveError> {
        let r = self.real.try_receive();
        self.ends().got(r.is_ok(), r)
    }

    /// Peek at the next value without taking it.
    pub fn try_peek(&self) -> Result<T, TryReceiveError>
    where
        T: Clone,
    {
        self.real.try_peek()
    }

    /// Poll the channel for the next message.
    #[track_caller]
    pub fn poll_receive(&self, cx: &mut Context<'_>) -> Poll<T> {
        let r = self.real.poll_receive(cx);
        self.ends().got(r.is_ready(), r)
    }

    /// Allows a poll_fn to poll until the channel is ready to receive.
    pub fn poll_ready_to_receive(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.real.poll_ready_to_receive(cx)
    }

    /// Allows a poll_fn to poll until the channel is ready to send.
    pub fn poll_ready_to_send(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.real.poll_ready_to_send(cx)
    }

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
}

impl<M: RawMutex, T, const N: usize> Default for Channel<M, T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M: RawMutex, T, const N: usize> futures_sink::Sink<T> for Channel<M, T, N> {
    type Error = TrySendError<T>;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.poll_ready_to_send(cx).map(Ok)
    }

    fn start_send(self: Pin<&mut Self>, item: T) -> Result<(), Self::Error> {
        self.try_send(item)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }
}

/// Send-only access to a [`Channel`].
pub struct Sender<'ch, M: RawMutex, T, const N: usize> {
    real: real::Sender<'ch, M, T, N>,
    ends: Ends,
}

impl<M: RawMutex, T, const N: usize> Clone for Sender<'_, M, T, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: RawMutex, T, const N: usize> Copy for Sender<'_, M, T, N> {}

impl<'ch, M: RawMutex, T, const N: usize> Sender<'ch, M, T, N> {
    /// Sends a value (see [`Channel::send`]).
    #[track_caller]
    pub fn send(&self, message: T) -> SendFuture<'ch, M, T, N> {
        SendFuture(self.ends.send(self.real.send(message)))
    }

    /// Attempt to immediately send a message (see [`Channel::try_send`]).
    #[track_caller]
    pub fn try_send(&self, message: T) -> Result<(), TrySendError<T>> {
        self.ends.sending();
        self.real.try_send(message)
    }

    /// Allows a poll_fn to poll until the channel is ready to send.
    pub fn poll_ready_to_send(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.real.poll_ready_to_send(cx)
    }

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
}

impl<M: RawMutex, T, const N: usize> futures_sink::Sink<T> for Sender<'_, M, T, N> {
    type Error = TrySendError<T>;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.poll_ready_to_send(cx).map(Ok)
    }

    fn start_send(self: Pin<&mut Self>, item: T) -> Result<(), Self::Error> {
        self.try_send(item)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }
}

/// Receive-only access to a [`Channel`].
pub struct Receiver<'ch, M: RawMutex, T, const N: usize> {
    real: real::Receiver<'ch, M, T, N>,
    ends: Ends,
}

impl<M: RawMutex, T, const N: usize> Clone for Receiver<'_, M, T, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: RawMutex, T, const N: usize> Copy for Receiver<'_, M, T, N> {}

impl<'ch, M: RawMutex, T, const N: usize> Receiver<'ch, M, T, N> {
    /// Receives the next value (see [`Channel::receive`]).
    #[track_caller]
    pub fn receive(&self) -> ReceiveFuture<'_, M, T, N> {
        ReceiveFuture(self.ends.receiving(self.real.receive()))
    }

    /// Is a value ready to be received? (Waits; receives nothing.)
    pub fn ready_to_receive(&self) -> ReceiveReadyFuture<'_, M, T, N> {
        self.real.ready_to_receive()
    }

    /// Attempt to immediately receive a message (see [`Channel::try_receive`]).
    #[track_caller]
    pub fn try_receive(&self) -> Result<T, TryReceiveError> {
        let r = self.real.try_receive();
        self.ends.got(r.is_ok(), r)
    }

    /// Peek at the next value without taking it.
    pub fn try_peek(&self) -> Result<T, TryReceiveError>
    where
        T: Clone,
    {
        self.real.try_peek()
    }

    /// Allows a poll_fn to poll until the channel is ready to receive.
    pub fn poll_ready_to_receive(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.real.poll_ready_to_receive(cx)
    }

    /// Poll the channel for the next item.
    #[track_caller]
    pub fn poll_receive(&self, cx: &mut Context<'_>) -> Poll<T> {
        let r = self.real.poll_receive(cx);
        self.ends.got(r.is_ready(), r)
    }

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
}

impl<M: RawMutex, T, const N: usize> futures_core::Stream for Receiver<'_, M, T, N> {
    type Item = T;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        self.poll_receive(cx).map(Some)
    }
}

/// Send-only access to a [`Channel`] without knowing its raw mutex or capacity.
#[derive(Clone, Copy)]
pub struct DynamicSender<'ch, T> {
    real: real::DynamicSender<'ch, T>,
    ends: Ends,
}

impl<'ch, M: RawMutex, T, const N: usize> From<Sender<'ch, M, T, N>> for DynamicSender<'ch, T> {
    fn from(s: Sender<'ch, M, T, N>) -> Self {
        DynamicSender {
            real: s.real.into(),
            ends: s.ends,
        }
    }
}

impl<'ch, T> DynamicSender<'ch, T> {
    /// Sends a value (see [`Channel::send`]).
    #[track_caller]
    pub fn send(&self, message: T) -> DynamicSendFuture<'ch, T> {
        DynamicSendFuture(self.ends.send(self.real.send(message)))
    }

    /// Attempt to immediately send a message (see [`Channel::try_send`]).
    #[track_caller]
    pub fn try_send(&self, message: T) -> Result<(), TrySendError<T>> {
        self.ends.sending();
        self.real.try_send(message)
    }

    /// Allows a poll_fn to poll until the channel is ready to send.
    pub fn poll_ready_to_send(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.real.poll_ready_to_send(cx)
    }
}

/// A [`DynamicSender`] that may be sent between threads (its raw mutex is `Sync`).
#[derive(Clone, Copy)]
pub struct SendDynamicSender<'ch, T> {
    real: real::SendDynamicSender<'ch, T>,
    ends: Ends,
}

impl<'ch, M: RawMutex + Sync + Send, T, const N: usize> From<Sender<'ch, M, T, N>>
    for SendDynamicSender<'ch, T>
{
    fn from(s: Sender<'ch, M, T, N>) -> Self {
        SendDynamicSender {
            real: s.real.into(),
            ends: s.ends,
        }
    }
}

impl<'ch, T> SendDynamicSender<'ch, T> {
    /// Sends a value (see [`Channel::send`]).
    #[track_caller]
    pub fn send(&self, message: T) -> DynamicSendFuture<'ch, T> {
        DynamicSendFuture(self.ends.send(self.real.send(message)))
    }

    /// Attempt to immediately send a message (see [`Channel::try_send`]).
    #[track_caller]
    pub fn try_send(&self, message: T) -> Result<(), TrySendError<T>> {
        self.ends.sending();
        self.real.try_send(message)
    }

    /// Allows a poll_fn to poll until the channel is ready to send.
    pub fn poll_ready_to_send(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.real.poll_ready_to_send(cx)
    }
}

/// Receive-only access to a [`Channel`] without knowing its raw mutex or capacity.
#[derive(Clone, Copy)]
pub struct DynamicReceiver<'ch, T> {
    real: real::DynamicReceiver<'ch, T>,
    ends: Ends,
}

impl<'ch, M: RawMutex, T, const N: usize> From<Receiver<'ch, M, T, N>> for DynamicReceiver<'ch, T> {
    fn from(r: Receiver<'ch, M, T, N>) -> Self {
        DynamicReceiver {
            real: r.real.into(),
            ends: r.ends,
        }
    }
}

impl<T> DynamicReceiver<'_, T> {
    /// Receives the next value (see [`Channel::receive`]).
    #[track_caller]
    pub fn receive(&self) -> DynamicReceiveFuture<'_, T> {
        DynamicReceiveFuture(self.ends.receiving(self.real.receive()))
    }

    /// Attempt to immediately receive a message (see [`Channel::try_receive`]).
    #[track_caller]
    pub fn try_receive(&self) -> Result<T, TryReceiveError> {
        let r = self.real.try_receive();
        self.ends.got(r.is_ok(), r)
    }

    /// Peek at the next value without taking it.
    pub fn try_peek(&self) -> Result<T, TryReceiveError>
    where
        T: Clone,
    {
        self.real.try_peek()
    }

    /// Allows a poll_fn to poll until the channel is ready to receive.
    pub fn poll_ready_to_receive(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.real.poll_ready_to_receive(cx)
    }

    /// Poll the channel for the next item.
    #[track_caller]
    pub fn poll_receive(&self, cx: &mut Context<'_>) -> Poll<T> {
        let r = self.real.poll_receive(cx);
        self.ends.got(r.is_ready(), r)
    }
}

/// A [`DynamicReceiver`] that may be sent between threads (its raw mutex is `Sync`).
#[derive(Clone, Copy)]
pub struct SendDynamicReceiver<'ch, T> {
    real: real::SendDynamicReceiver<'ch, T>,
    ends: Ends,
}

/// Receive-only access to a [`Channel`] that may be sent between threads (the older name).
pub type SendableDynamicReceiver<'ch, T> = SendDynamicReceiver<'ch, T>;

impl<'ch, M: RawMutex + Sync + Send, T, const N: usize> From<Receiver<'ch, M, T, N>>
    for SendDynamicReceiver<'ch, T>
{
    fn from(r: Receiver<'ch, M, T, N>) -> Self {
        SendDynamicReceiver {
            real: r.real.into(),
            ends: r.ends,
        }
    }
}

impl<T> SendDynamicReceiver<'_, T> {
    /// Receives the next value (see [`Channel::receive`]).
    #[track_caller]
    pub fn receive(&self) -> DynamicReceiveFuture<'_, T> {
        DynamicReceiveFuture(self.ends.receiving(self.real.receive()))
    }

    /// Attempt to immediately receive a message (see [`Channel::try_receive`]).
    #[track_caller]
    pub fn try_receive(&self) -> Result<T, TryReceiveError> {
        let r = self.real.try_receive();
        self.ends.got(r.is_ok(), r)
    }

    /// Allows a poll_fn to poll until the channel is ready to receive.
    pub fn poll_ready_to_receive(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.real.poll_ready_to_receive(cx)
    }

    /// Poll the channel for the next item.
    #[track_caller]
    pub fn poll_receive(&self, cx: &mut Context<'_>) -> Poll<T> {
        let r = self.real.poll_receive(cx);
        self.ends.got(r.is_ready(), r)
    }
}

/// A real sending future, announced before each of its polls: at `site`, through the
/// primitive at `g`.
struct Sending<F> {
    real: F,
    site: u32,
    g: usize,
}

impl<F: Future + Unpin> Future for Sending<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        events::sending(self.site, self.g);
        Pin::new(&mut self.real).poll(cx)
    }
}

/// Future returned by [`Channel::send`] and [`Sender::send`].
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct SendFuture<'ch, M: RawMutex, T, const N: usize>(Sending<real::SendFuture<'ch, M, T, N>>);

impl<M: RawMutex, T, const N: usize> Future for SendFuture<'_, M, T, N> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx)
    }
}

/// Future returned by [`DynamicSender::send`].
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct DynamicSendFuture<'ch, T>(Sending<real::DynamicSendFuture<'ch, T>>);

impl<T> Future for DynamicSendFuture<'_, T> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl<'ch, M: RawMutex, T, const N: usize> From<SendFuture<'ch, M, T, N>>
    for DynamicSendFuture<'ch, T>
{
    fn from(value: SendFuture<'ch, M, T, N>) -> Self {
        let Sending { real, site, g } = value.0;
        DynamicSendFuture(Sending {
            real: real.into(),
            site,
            g,
        })
    }
}

/// Future returned by [`Channel::receive`] and [`Receiver::receive`].
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReceiveFuture<'ch, M: RawMutex, T, const N: usize>(
    Received<real::ReceiveFuture<'ch, M, T, N>>,
);

impl<M: RawMutex, T, const N: usize> Future for ReceiveFuture<'_, M, T, N> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        Pin::new(&mut self.0).poll(cx)
    }
}

/// Future returned by [`DynamicReceiver::receive`].
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct DynamicReceiveFuture<'ch, T>(Received<real::DynamicReceiveFuture<'ch, T>>);

impl<T> Future for DynamicReceiveFuture<'_, T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl<'ch, M: RawMutex, T, const N: usize> From<ReceiveFuture<'ch, M, T, N>>
    for DynamicReceiveFuture<'ch, T>
{
    fn from(value: ReceiveFuture<'ch, M, T, N>) -> Self {
        let Received { real, site, g } = value.0;
        DynamicReceiveFuture(Received {
            real: real.into(),
            site,
            g,
        })
    }
}
