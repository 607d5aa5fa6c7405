//! RADBench/bug4 (NSPR-1, Mozilla bug 354593): NSPR 4.6.4's `MT_safe_localtime` creates its
//! lock lazily; PERIOD `evaluation/RADBench/bug4/src/threads.c` (+ NSPR's `prtime.c`,
//! `ptsynch.c`, a debug build). 3 tasks: main and two "dumb" threads (main yields after each
//! create, then waits on a monitor until `alive == 0`). Each thread converts a time to local
//! time (two `MT_safe_localtime` calls: `if monitor == NULL { monitor = PR_NewLock() };
//! PR_Lock(monitor); ..; PR_Unlock(monitor)`). Bug: NSPR assertion (panic). Both threads see
//! `monitor == NULL` and each creates a lock; one locks its lock, the other overwrites
//! `monitor`, and the first's `PR_Unlock` re-reads `monitor` and unlocks a lock that is not
//! locked or that it does not own (`PR_ASSERT(lock->locked)`, `PR_ASSERT(owner == self)`).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_cct::{CondVar, NULL, Pool, Ptr};

const THREAD_COUNT: usize = 2;

/// An NSPR `PRLock` (pthreads build): the pthread mutex and the fields its debug assertions
/// check.
struct PrLock {
    mutex: Mutex<()>,
    locked: Shared<bool>,
    owner: Shared<TaskId>,
}

/// A held `PRLock`'s pthread mutex.
struct PrLockHeld {
    lock: &'static PrLock,
    guard: MutexGuard<'static, ()>,
}

impl PrLock {
    const fn new() -> Self {
        PrLock {
            mutex: Mutex::new(()),
            locked: Shared::new(false),
            owner: Shared::new(0),
        }
    }

    /// `PR_Lock`.
    fn lock(&'static self) -> PrLockHeld {
        let guard = self.mutex.lock();
        assert!(!self.locked.read(), "PR_ASSERT(PR_FALSE == lock->locked)");
        self.locked.write(true);
        self.owner.write(current_task());
        PrLockHeld { lock: self, guard }
    }

    /// `PR_Unlock(self)` by the task holding `held` (its only NSPR lock).
    fn unlock(&'static self, held: PrLockHeld) {
        assert!(self.locked.read(), "PR_ASSERT(PR_TRUE == lock->locked)");
        assert!(
            self.owner.read() == current_task(),
            "PR_ASSERT(pthread_equal(lock->owner, self))"
        );
        self.locked.write(false);
        // Locked and owned by this task: it is the lock whose mutex `held` holds.
        assert!(
            core::ptr::eq(self, held.lock),
            "model: one NSPR lock per task"
        );
        held.guard.unlock();
    }
}

/// The heap: room for one `PRLock` per thread (each creates at most one).
static LOCK_HEAP: Pool<THREAD_COUNT> = Pool::new();
static LOCKS: [PrLock; THREAD_COUNT] = [const { PrLock::new() }; THREAD_COUNT];
/// `static PRLock *monitor = NULL` in `prtime.c`.
static MONITOR: Shared<Ptr> = Shared::new(NULL);

// The test's monitor (`PR_NewMonitor`) and `alive`.
static MON: Mutex<()> = Mutex::new(());
static MON_CV: CondVar = CondVar::new();
static ALIVE: Shared<i32> = Shared::new(0);
static STACKS: [Stack<2048>; THREAD_COUNT] = [const { Stack::new() }; THREAD_COUNT];

/// `PR_NewLock`: a fresh, unlocked lock.
fn pr_new_lock() -> Ptr {
    let p = LOCK_HEAP.alloc();
    let lock = &LOCKS[LOCK_HEAP.index(p)];
    lock.locked.write(false);
    lock.owner.write(0);
    p
}

fn lock_at(p: Ptr) -> &'static PrLock {
    if p == NULL {
        panic!("PR_ASSERT(lock != NULL)");
    }
    &LOCKS[LOCK_HEAP.index(p)]
}

/// `MT_safe_localtime` (`PR_Initialized()` is true: the lock is used).
fn mt_safe_localtime() {
    if MONITOR.read() == NULL {
        let l = pr_new_lock();
        MONITOR.write(l);
    }
    let held = lock_at(MONITOR.read()).lock();
    // localtime() and the copy of its result: libc, no shared accesses modelled.
    lock_at(MONITOR.read()).unlock(held);
}

fn dumb_thread() {
    // PR_ExplodeTime(t, PR_LocalTimeParameters, ..): PR_LocalTimeParameters converts two
    // times (the UTC offset of 2 Jan 1970, then the time itself).
    mt_safe_localtime();
    mt_safe_localtime();

    let g = MON.lock();
    let a = ALIVE.read();
    ALIVE.write(a - 1);
    MON_CV.signal();
    g.unlock();
}

fn main_task() {
    ALIVE.write(THREAD_COUNT as i32);
    let threads: [JoinHandle; THREAD_COUNT] = core::array::from_fn(|i| {
        let h = spawn(&STACKS[i], dumb_thread);
        yield_now(); // PR_Sleep(0)
        h
    });

    // Wait for all threads to exit.
    let mut g = MON.lock();
    while ALIVE.read() != 0 {
        g = MON_CV.wait(&MON, g);
    }
    g.unlock();

    // PR_Cleanup waits for the (unjoinable) user threads to end.
    for h in threads {
        h.join();
    }
}

firmware!(main_task);
