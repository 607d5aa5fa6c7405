//! Chess/InterlockedWorkStealQueue: the CHESS test of the CILK "THE" work-stealing queue with a
//! spin lock (`USE_NON_BLOCKING_SYNC`), via SCTBench; PERIOD
//! `evaluation/Chess/InterlockedWorkStealQueue/` (`InterlockedWorkStealQueue.cpp`,
//! `WorkStealQueue.h`). 3 tasks: main, one stealer (2 steal attempts) and the owner (pushes and
//! pops 4 items) on a queue of initial capacity 2; `head`/`tail` are atomics read by a CAS and
//! written by an exchange, the lock is an exchange loop that yields. Bug: assertion (main checks
//! each item was processed exactly once). With the injected `BUG3` a push may fill the last free
//! slot: the stealer increments `head` and passes `h < tail`, the owner pushes into slot
//! `h & mask`, overwriting the item being stolen, and the stealer takes the new item.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use jostle::*;

/// `INITQSIZE`: the queue's initial size (a power of 2).
const INITQSIZE: i32 = 2;
const MAX_SIZE: i32 = 1024 * 1024;
const INITIAL_SIZE: i32 = 1024;
const N_STEALERS: usize = 1;
const N_ITEMS: usize = 4;
const N_STEAL_ATTEMPTS: usize = 2;

/// The task arrays the queue allocates: sizes 2 (the initial one), 4 and 8 (`SyncPush`
/// doubles the array; it never holds more than the 4 items).
const ARRAYS: usize = 3;
const ARRAY_SLOTS: usize = 8;

/// `ObjType::field` of the items (`new ObjType[nItems]`); an item pointer is its index plus
/// one (0 is NULL).
static FIELD: [Shared<i32>; N_ITEMS] = [const { Shared::new(0) }; N_ITEMS];

// The queue (`new WorkStealQueue<ObjType*>(INITQSIZE)`).
static HEAD: AtomicI32 = AtomicI32::new(0);
static TAIL: AtomicI32 = AtomicI32::new(0);
/// `elems`: which of `ARRAY` is the current task array.
static ELEMS: Shared<usize> = Shared::new(0);
static MASK: Shared<i32> = Shared::new(0);
static ARRAY: [[Shared<usize>; ARRAY_SLOTS]; ARRAYS] =
    [const { [const { Shared::new(0) }; ARRAY_SLOTS] }; ARRAYS];
/// The queue's `SpinLock` (`USE_NON_BLOCKING_SYNC`): 1 locked, 0 free.
static LOCK: AtomicU32 = AtomicU32::new(0);
/// `maxRetriesBeforeSleep`, set to 0 by the constructor (a single processor): a failed
/// exchange yields at once.
static MAX_RETRIES_BEFORE_SLEEP: Shared<u32> = Shared::new(4);

/// `SpinLock::Acquire`.
fn acquire() -> Held {
    let mut retries = 0;
    loop {
        let old = LOCK.swap(1, Ordering::SeqCst);
        if old == 0 {
            break;
        }
        retries += 1;
        if retries >= MAX_RETRIES_BEFORE_SLEEP.read() {
            yield_now(); // sleep(0)
            retries = 0;
        }
    }
    Held
}

/// Proof that the spin lock is held.
struct Held;

/// `SpinLock::Release`.
fn release(_held: Held) {
    LOCK.store(0, Ordering::SeqCst);
}

static STEALER_STACKS: [Stack<4096>; N_STEALERS] = [const { Stack::new() }; N_STEALERS];
static OWNER_STACK: Stack<4096> = Stack::new();

/// `readV`: a compare-and-swap of 0 by 0, for its old value.
fn read_v(v: &AtomicI32) -> i32 {
    match v.compare_exchange(0, 0, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(old) | Err(old) => old,
    }
}

/// `writeV`: an exchange.
fn write_v(v: &AtomicI32, w: i32) {
    v.swap(w, Ordering::SeqCst);
}

/// `elems[i & mask]` of the current array.
fn elem(i: i32) -> &'static Shared<usize> {
    let array = ELEMS.read();
    let mask = MASK.read();
    &ARRAY[array][(i & mask) as usize]
}

/// `Steal`.
fn steal() -> Option<usize> {
    let held = acquire();
    // increment the head; save it in h
    let h = read_v(&HEAD);
    write_v(&HEAD, h + 1);
    let result = if h < read_v(&TAIL) {
        Some(elem(h).read())
    } else {
        // failure: either empty or single element interleaving with pop
        write_v(&HEAD, h); // restore the head
        None
    };
    release(held);
    result
}

/// `Pop`.
fn pop() -> Option<usize> {
    // decrement the tail
    let t = read_v(&TAIL) - 1;
    write_v(&TAIL, t);
    if read_v(&HEAD) <= t {
        Some(elem(t).read())
    } else {
        // failure: either empty or single element interleaving with take
        write_v(&TAIL, t + 1); // restore the tail
        sync_pop()
    }
}

/// `SyncPop`: a pop under the lock.
fn sync_pop() -> Option<usize> {
    let held = acquire();
    let t = read_v(&TAIL) - 1;
    write_v(&TAIL, t);
    let mut result = if read_v(&HEAD) <= t {
        Some(elem(t).read())
    } else {
        write_v(&TAIL, t + 1); // restore the tail
        None
    };
    if read_v(&HEAD) > t {
        // the queue is empty: reset head and tail
        write_v(&HEAD, 0);
        write_v(&TAIL, 0);
        result = None;
    }
    release(held);
    result
}

/// `Push`.
fn push(item: usize) {
    let t = read_v(&TAIL);
    // BUG3: the correct test is `t < head + mask`, which keeps one slot free for a
    // concurrent steal.
    if t < read_v(&HEAD) + MASK.read() + 1 && t < MAX_SIZE {
        elem(t).write(item);
        write_v(&TAIL, t + 1); // only once the entry is initialised
    } else {
        // failure: we need to resize or re-index
        sync_push(item);
    }
}

/// `SyncPush`: re-index, grow the array if it is full, push, under the lock.
fn sync_push(item: usize) {
    let held = acquire();
    let mut h = read_v(&HEAD);
    let count = read_v(&TAIL) - h;
    // normalise the indices
    h &= MASK.read();
    write_v(&HEAD, h);
    write_v(&TAIL, h + count);
    if count >= MASK.read() {
        let mask = MASK.read();
        let newsize = if mask == 0 {
            INITIAL_SIZE
        } else {
            2 * (mask + 1)
        };
        assert!(newsize < MAX_SIZE, "newsize < MaxSize");
        let old = ELEMS.read();
        let new = old + 1;
        assert!(
            new < ARRAYS && newsize as usize <= ARRAY_SLOTS,
            "model: a task array larger than modelled"
        );
        for i in 0..count {
            let v = ARRAY[old][((h + i) & mask) as usize].read();
            ARRAY[new][i as usize].write(v);
        }
        ELEMS.write(new);
        MASK.write(newsize - 1);
        write_v(&HEAD, 0);
        write_v(&TAIL, count);
    }
    assert!(count < MASK.read(), "count < mask");
    // push the element
    let t = read_v(&TAIL);
    elem(t).write(item);
    write_v(&TAIL, t + 1);
    release(held);
}

/// `ObjType::Operation`: `field++` of the item `r` points to.
fn operation(r: usize) {
    if r == 0 {
        panic!("null deref");
    }
    let f = FIELD[r - 1].read();
    FIELD[r - 1].write(f + 1);
}

fn stealer() {
    for _ in 0..N_STEAL_ATTEMPTS {
        if let Some(r) = steal() {
            operation(r);
        }
    }
}

fn main_thread() {
    for i in 0..N_ITEMS / 2 {
        push(2 * i + 1); // &items[2 * i]
        push(2 * i + 2); // &items[2 * i + 1]
        if let Some(r) = pop() {
            operation(r);
        }
    }
    for _ in 0..N_ITEMS / 2 {
        if let Some(r) = pop() {
            operation(r);
        }
    }
}

fn main_task() {
    for f in &FIELD {
        f.write(0); // ObjType()
    }
    // WorkStealQueue(INITQSIZE)
    write_v(&HEAD, 0);
    write_v(&TAIL, 0);
    MAX_RETRIES_BEFORE_SLEEP.write(0);
    MASK.write(INITQSIZE - 1);
    ELEMS.write(0);

    let stealers: [JoinHandle; N_STEALERS] =
        core::array::from_fn(|i| spawn(&STEALER_STACKS[i], stealer));
    let m = spawn(&OWNER_STACK, main_thread);
    m.join();
    for h in stealers {
        h.join();
    }
    for f in &FIELD {
        assert!(f.read() == 1, "field == 1");
    }
}

firmware!(main_task);
