//! embassy-sync's async [`Mutex`], with the events Jostle's checker needs: the lock is an
//! acquire once the real lock is taken, the guard's drop a release, and each `Deref` /
//! `DerefMut` of a guard a read / write of the protected data at the caller's line. So an
//! access inside a guard is a memory access the checker sees, under the mutex's lock, and a
//! check-then-act across an `.await` (two guards) is predicted.

use crate::events;
use core::future::Future;
use core::ops::{Deref, DerefMut};
use core::panic::Location;
use core::pin::Pin;
use core::task::{Context, Poll};
use embassy_sync::blocking_mutex::raw::RawMutex;
use embassy_sync::mutex as real;

pub use real::TryLockError;

/// Async mutex (embassy-sync's), whose lock, release and guarded accesses are events.
pub struct Mutex<M: RawMutex, T: ?Sized> {
    real: real::Mutex<M, T>,
}

impl<M: RawMutex, T> Mutex<M, T> {
    /// Create a new mutex with the given value.
    pub const fn new(value: T) -> Self {
        Mutex {
            real: real::Mutex::new(value),
        }
    }
}

impl<M: RawMutex, T: ?Sized> Mutex<M, T> {
    /// Lock the mutex: waits while it is locked. Once taken, an acquire at the caller's line.
    #[track_caller]
    pub fn lock(&self) -> impl Future<Output = MutexGuard<'_, M, T>> {
        Locking {
            real: self.real.lock(),
            mutex: self,
            site: events::site(Location::caller()),
        }
    }

    /// Attempt to immediately lock the mutex (an acquire when it succeeds).
    #[track_caller]
    pub fn try_lock(&self) -> Result<MutexGuard<'_, M, T>, TryLockError> {
        let real = self.real.try_lock()?;
        Ok(MutexGuard::taken(
            real,
            self,
            events::site(Location::caller()),
        ))
    }

    /// Consumes this mutex, returning the underlying data.
    pub fn into_inner(self) -> T
    where
        T: Sized,
    {
        self.real.into_inner()
    }

    /// Returns a mutable reference to the underlying data (no lock: the borrow is exclusive).
    pub fn get_mut(&mut self) -> &mut T {
        self.real.get_mut()
    }

    /// The lock's identity: the mutex's address.
    fn lock_addr(&self) -> *const Self {
        self
    }
}

impl<M: RawMutex, T> From<T> for Mutex<M, T> {
    fn from(from: T) -> Self {
        Self::new(from)
    }
}

impl<M: RawMutex, T: Default> Default for Mutex<M, T> {
    fn default() -> Self {
        Self::new(Default::default())
    }
}

impl<M: RawMutex, T: ?Sized + core::fmt::Debug> core::fmt::Debug for Mutex<M, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.real.fmt(f)
    }
}

/// The future of [`Mutex::lock`]: the real lock's, then the acquire event.
struct Locking<'a, M: RawMutex, T: ?Sized, F> {
    real: F,
    mutex: &'a Mutex<M, T>,
    site: u32,
}

impl<'a, M: RawMutex, T: ?Sized, F> Future for Locking<'a, M, T, F>
where
    F: Future<Output = real::MutexGuard<'a, M, T>> + Unpin,
{
    type Output = MutexGuard<'a, M, T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        match Pin::new(&mut this.real).poll(cx) {
            Poll::Ready(real) => Poll::Ready(MutexGuard::taken(real, this.mutex, this.site)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// A held [`Mutex`]: dereferencing reads or writes its data (an event at the caller's
/// line); dropping it releases the lock.
#[clippy::has_significant_drop]
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MutexGuard<'a, M: RawMutex, T: ?Sized> {
    // First: fields drop in order, so the release event comes before the real unlock.
    held: Held,
    real: real::MutexGuard<'a, M, T>,
}

/// What a held lock's release names: the lock and the site that took it.
/// (The lock's address as a number: a guard is `Send` when the real one is.)
struct Held {
    lock: usize,
    site: u32,
}

impl Drop for Held {
    fn drop(&mut self) {
        events::releasing(self.site, self.lock as *const ());
    }
}

impl<'a, M: RawMutex, T: ?Sized> MutexGuard<'a, M, T> {
    /// The guard of a lock the real mutex just gave: the acquire event.
    fn taken(real: real::MutexGuard<'a, M, T>, mutex: &'a Mutex<M, T>, site: u32) -> Self {
        let lock = mutex.lock_addr();
        events::acquired(site, lock);
        MutexGuard {
            held: Held {
                lock: lock as *const () as usize,
                site,
            },
            real,
        }
    }
}

/// A held lock's view of a portion of its data ([`MutexGuard::map`]).
#[clippy::has_significant_drop]
pub struct MappedMutexGuard<'a, M: RawMutex, T: ?Sized> {
    held: Held,
    real: real::MappedMutexGuard<'a, M, T>,
}

/// What both guards do alike: `map`, and each `Deref` / `DerefMut` a read / write event at
/// the caller's line (formatting reads no event: it is not the application's access).
macro_rules! guard {
    ($guard:ident) => {
        impl<'a, M: RawMutex, T: ?Sized> $guard<'a, M, T> {
            /// Returns a locked view over a portion of the locked data.
            pub fn map<U>(
                this: Self,
                fun: impl FnOnce(&mut T) -> &mut U,
            ) -> MappedMutexGuard<'a, M, U> {
                let $guard { held, real: inner } = this;
                MappedMutexGuard {
                    held,
                    real: real::$guard::map(inner, fun),
                }
            }
        }

        impl<M: RawMutex, T: ?Sized> Deref for $guard<'_, M, T> {
            type Target = T;
            #[track_caller]
            fn deref(&self) -> &T {
                let data = &*self.real;
                events::read(Location::caller(), data);
                data
            }
        }

        impl<M: RawMutex, T: ?Sized> DerefMut for $guard<'_, M, T> {
            #[track_caller]
            fn deref_mut(&mut self) -> &mut T {
                let data = &mut *self.real;
                events::write(Location::caller(), data);
                data
            }
        }

        impl<M: RawMutex, T: ?Sized + core::fmt::Debug> core::fmt::Debug for $guard<'_, M, T> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                self.real.fmt(f)
            }
        }

        impl<M: RawMutex, T: ?Sized + core::fmt::Display> core::fmt::Display for $guard<'_, M, T> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                self.real.fmt(f)
            }
        }
    };
}

guard!(MutexGuard);
guard!(MappedMutexGuard);
