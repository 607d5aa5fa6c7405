//! ConVul CVE-2016-1972 (Firefox/libvpx `once()` freeing its lock); PERIOD
//! `evaluation/ConVul-CVE-Benchmarks/CVE-2016-1972/2016-1972.c`. 3 tasks: main and two workers
//! running `once()` (joined in reverse). `once`: `if done return; ++waiters; lock->i = 1;
//! lock(lock->mutex); done = 1; unlock(lock->mutex); if --waiters == 0 { free(lock); lock =
//! NULL }`, with `waiters` a plain counter and `lock` a heap object. Bug: NULL dereference or
//! double free (a panic; SIGSEGV / glibc abort in SURW). (a) One worker runs `once` to the end
//! (frees, `lock = NULL`) while the other has passed the `done` test: it dereferences NULL.
//! (b) A lost update on `waiters` lets both see 0 and both free the same pointer.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_cct::{NULL, Pool, Ptr};

const THREAD_SIZE: usize = 2;

static WAITERS: Shared<i64> = Shared::new(0);
/// `static int done` inside `once()`.
static DONE: Shared<i32> = Shared::new(0);
/// The heap: the one `CRITICAL_SECTION` main allocates.
static HEAP: Pool<1> = Pool::new();
/// `lock`: a pointer to the `CRITICAL_SECTION { mutex, i }`.
static LOCK: Shared<Ptr> = Shared::new(NULL);
static CS_MUTEX: Mutex<()> = Mutex::new(());
static CS_I: Shared<i32> = Shared::new(0);
static STACKS: [Stack<2048>; THREAD_SIZE] = [const { Stack::new() }; THREAD_SIZE];

fn inc_waiters() {
    let w = WAITERS.read();
    WAITERS.write(w + 1);
}

fn dec_waiters() -> i64 {
    let w = WAITERS.read() - 1;
    WAITERS.write(w);
    w
}

/// `Enter(lock)`: `lock->i = 1; pthread_mutex_lock(&lock->mutex)`.
fn enter(lock: Ptr) -> MutexGuard<'static, ()> {
    HEAP.index(lock);
    CS_I.write(1);
    CS_MUTEX.lock()
}

/// `Exit(lock)`: `pthread_mutex_unlock(&lock->mutex)`.
fn exit(lock: Ptr, held: MutexGuard<'static, ()>) {
    // pthread_mutex_unlock(NULL) faults; a freed mutex is unlocked silently.
    HEAP.index(lock);
    held.unlock();
}

fn once() {
    if DONE.read() != 0 {
        return;
    }
    inc_waiters();
    let held = enter(LOCK.read());
    if DONE.read() == 0 {
        DONE.write(1);
    }
    exit(LOCK.read(), held);
    if dec_waiters() == 0 {
        HEAP.free(LOCK.read());
        LOCK.write(NULL);
    }
}

fn main_task() {
    let lock = HEAP.alloc();
    LOCK.write(lock);

    let t0 = spawn(&STACKS[0], once);
    let t1 = spawn(&STACKS[1], once);
    t1.join();
    t0.join();
}

firmware!(main_task);
