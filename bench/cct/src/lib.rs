//! Helpers shared by the SCTBench/ConVul subjects of the SURW evaluation, ported to Jostle
//! (one binary per subject in `src/bin/`; their structure and bug conditions are described in
//! `SUBJECTS.md`).
//!
//! Conventions of the ports:
//!
//! * A variable that two tasks touch is a [`Shared`]: one C load is one `read`, one C store
//!   one `write`, and a C `x++` is a `read` then a `write` (the lost update stays possible).
//!   Loads of data that no task writes once the workers run (constants, pointers to
//!   statics) are not modelled.
//! * `pthread_mutex_t` is a [`Mutex<()>`]; `pthread_cond_t` is a [`CondVar`] (below).
//! * `malloc`/`free` are a [`Pool`] of statically allocated objects, addressed by a [`Ptr`]
//!   handle ([`NULL`] is 0). glibc's allocator is not instrumented in SURW's runs, so
//!   allocating and freeing are no scheduling points here either; dereferencing `NULL`
//!   panics (SIGSEGV in SURW) and freeing a freed object panics (glibc's double-free abort).
//!   Using a freed object is silent, as it was without AddressSanitizer, unless `--arg 0` is
//!   non-zero (the "ASan" variant: it panics then).
//! * `sched_yield`, `sleep(0)`, `usleep` and `PR_Sleep(0)` are [`yield_now`].
#![cfg_attr(target_os = "none", no_std)]
#![warn(missing_docs)]

pub mod reorder;
pub mod twostage;

use jostle::*;

/// A Mesa-style condition variable (`pthread_cond_t`), built from a counting [`Signal`] and
/// a count of waiters kept under the caller's mutex.
///
/// `wait` counts itself as a waiter, releases the mutex, waits for a signal and takes the
/// mutex again; `signal` (called with the mutex held) sends one signal when some task waits;
/// `broadcast` sends one per waiter. A signal sent between a waiter's release of the mutex
/// and its wait on the [`Signal`] stays pending, so releasing and waiting are as atomic as
/// in `pthread_cond_wait`. A signal with no waiter is lost, as with pthreads. Spurious
/// wake-ups are not produced (every subject re-checks its condition in a loop anyway).
pub struct CondVar {
    waiters: Shared<u32>,
    sig: Signal,
}

impl Default for CondVar {
    fn default() -> Self {
        Self::new()
    }
}

impl CondVar {
    /// A condition variable nobody waits on.
    pub const fn new() -> Self {
        CondVar {
            waiters: Shared::new(0),
            sig: Signal::new(),
        }
    }

    /// `pthread_cond_wait(self, mutex)`: `guard` must be `mutex`'s; returns it re-acquired.
    #[track_caller]
    pub fn wait<'a, T>(&self, mutex: &'a Mutex<T>, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        let n = self.waiters.read();
        self.waiters.write(n + 1);
        guard.unlock();
        self.sig.wait();
        mutex.lock()
    }

    /// `pthread_cond_signal(self)`, with the mutex held: wakes one waiter, if any.
    #[track_caller]
    pub fn signal(&self) {
        let n = self.waiters.read();
        if n > 0 {
            self.waiters.write(n - 1);
            self.sig.signal();
        }
    }

    /// `pthread_cond_broadcast(self)`, with the mutex held: wakes every waiter.
    #[track_caller]
    pub fn broadcast(&self) {
        let n = self.waiters.read();
        if n > 0 {
            self.waiters.write(0);
            for _ in 0..n {
                self.sig.signal();
            }
        }
    }
}

/// A heap pointer: an index into a [`Pool`], plus one; [`NULL`] is 0.
pub type Ptr = usize;

/// The null pointer.
pub const NULL: Ptr = 0;

/// Whether the "ASan" variant is on (`--arg 0` non-zero): using a freed object panics.
pub fn asan() -> bool {
    arg_or(0, 0) != 0
}

/// `N` statically allocated objects standing for the heap (`malloc`/`new`, `free`/`delete`).
///
/// Allocation hands out each object once (a bump allocator: no address is reused within a
/// run, so a stale pointer never aliases a newer object). The pool's own bookkeeping is not
/// instrumented (libc's allocator was not in SURW's runs); the objects' fields are the
/// subject's own `Shared` arrays, indexed by [`Pool::index`]. The bookkeeping is [`PerRun`]:
/// every run starts with an empty heap on the host port too.
pub struct Pool<const N: usize> {
    next: PerRun<usize>,
    live: [PerRun<bool>; N],
}

impl<const N: usize> Default for Pool<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Pool<N> {
    /// A pool with nothing allocated.
    pub const fn new() -> Self {
        Pool {
            next: PerRun::new(0),
            live: [const { PerRun::new(false) }; N],
        }
    }

    /// `malloc`: a fresh object (panics when the pool is exhausted: a porting error).
    #[track_caller]
    pub fn alloc(&self) -> Ptr {
        let i = self.next.get();
        assert!(i < N, "object pool exhausted (a porting error)");
        self.next.set(i + 1);
        self.live[i].set(true);
        i + 1
    }

    /// `free`: `free(NULL)` does nothing; freeing a freed object panics ("double free").
    #[track_caller]
    pub fn free(&self, p: Ptr) {
        if p == NULL {
            return;
        }
        let live = &self.live[p - 1];
        if !live.replace(false) {
            panic!("double free");
        }
    }

    /// Whether `p` points to an allocated, not yet freed object.
    pub fn is_live(&self, p: Ptr) -> bool {
        p != NULL && self.live[p - 1].get()
    }

    /// Dereferences `p`: its object's index (for the subject's field arrays). `NULL` panics
    /// ("null deref"); a freed object panics only in the ASan variant ([`asan`]).
    #[track_caller]
    pub fn index(&self, p: Ptr) -> usize {
        if p == NULL {
            panic!("null deref");
        }
        if asan() && !self.live[p - 1].get() {
            panic!("use after free");
        }
        p - 1
    }
}

/// Dereferences a pointer to a statically allocated object (one the program never frees):
/// `NULL` panics ("null deref"), otherwise the object's index.
#[track_caller]
pub fn deref(p: Ptr) -> usize {
    if p == NULL {
        panic!("null deref");
    }
    p - 1
}
