//! Chess/StateWorkStealQueue: the CHESS work-stealing queue test with a shadow call stack, via
//! SCTBench; PERIOD `evaluation/Chess/StateWorkStealQueue/` (`StateWorkStealQueue.cpp`,
//! `WorkStealQueueWithState.h`). 4 tasks: main, 2 stealers (thread ids 1 and 2, 2 steal
//! attempts each) and the owner (thread id 0, main's: pushes 4 items, then pops 4) on a correct
//! queue with a spin lock. Every queue operation pushes, updates and pops an activation record
//! on `state.stacks[tid]`, a global vector of vectors that all threads resize without a lock.
//! Bug: assertion or uncaught `std::out_of_range` (a panic; an abort in SURW). Stealer 1 finds
//! `stacks.size() <= 1` and is preempted; stealer 2 grows the vector to 3 and pushes its
//! record; stealer 1's `resize(2)` then shrinks it, destroying stealer 2's stack, whose next
//! `stacks.at(2)` throws (or a stale grow empties a stack that `Peek` then finds empty).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use jostle::*;

/// `INITQSIZE`: the queue's initial size (a power of 2).
const INITQSIZE: i32 = 2;
const MAX_SIZE: i32 = 1024 * 1024;
const INITIAL_SIZE: i32 = 1024;
const N_STEALERS: usize = 2;
const N_ITEMS: usize = 4;
const N_STEAL_ATTEMPTS: usize = 2;

// Function names of the shadow call stack's activation records.
const F_RUN_TEST: u8 = 0;
const F_STEALER: u8 = 1;
const F_PUSH: u8 = 2;
const F_POP: u8 = 3;
const F_STEAL: u8 = 4;
const F_SYNC_PUSH: u8 = 5;
const F_SYNC_POP: u8 = 6;
const F_ACQUIRE: u8 = 7;
const F_RELEASE: u8 = 8;

/// The outer vector's modelled capacity (the C reserves 100: it never reallocates).
const STACKS_CAPACITY: usize = 16;
/// Deepest shadow stack modelled (the owner's reaches 4: RunTest, Push, SyncPush, Acquire).
const MAX_DEPTH: usize = 8;
/// Local variables per activation record (ids 0..2 are used).
const MAX_LVARS: usize = 3;

// The global `State state`: `stacks`, a vector (its length) of vectors (their lengths) of
// activation records (function name, pc, local variables).
static STACKS_LEN: Shared<usize> = Shared::new(0);
static DEPTH: [Shared<usize>; STACKS_CAPACITY] = [const { Shared::new(0) }; STACKS_CAPACITY];
static FNAME: [[Shared<u8>; MAX_DEPTH]; STACKS_CAPACITY] =
    [const { [const { Shared::new(0) }; MAX_DEPTH] }; STACKS_CAPACITY];
static PC: [[Shared<i32>; MAX_DEPTH]; STACKS_CAPACITY] =
    [const { [const { Shared::new(0) }; MAX_DEPTH] }; STACKS_CAPACITY];
static LVARS_LEN: [[Shared<usize>; MAX_DEPTH]; STACKS_CAPACITY] =
    [const { [const { Shared::new(0) }; MAX_DEPTH] }; STACKS_CAPACITY];
static LVARS: [[[Shared<i64>; MAX_LVARS]; MAX_DEPTH]; STACKS_CAPACITY] =
    [const { [const { [const { Shared::new(0) }; MAX_LVARS] }; MAX_DEPTH] }; STACKS_CAPACITY];

/// The task arrays the queue allocates: sizes 2 (the initial one), 4 and 8.
const ARRAYS: usize = 3;
const ARRAY_SLOTS: usize = 8;

/// `ObjType::field` of the items; an item pointer is its index plus one (0 is NULL).
static FIELD: [Shared<i32>; N_ITEMS] = [const { Shared::new(0) }; N_ITEMS];

// The queue (`new WorkStealQueue<ObjType*>(INITQSIZE)`), with its spin lock.
static LOCK: AtomicU32 = AtomicU32::new(0);
/// `maxRetriesBeforeSleep`, set to 0 by the constructor (a single processor): a failed
/// exchange yields at once.
static MAX_RETRIES_BEFORE_SLEEP: Shared<u32> = Shared::new(4);
static HEAD: AtomicI32 = AtomicI32::new(0);
static TAIL: AtomicI32 = AtomicI32::new(0);
/// `elems`: which of `ARRAY` is the current task array.
static ELEMS: Shared<usize> = Shared::new(0);
static MASK: Shared<i32> = Shared::new(0);
static ARRAY: [[Shared<usize>; ARRAY_SLOTS]; ARRAYS] =
    [const { [const { Shared::new(0) }; ARRAY_SLOTS] }; ARRAYS];
static STEALER_STACKS: [Stack<4096>; N_STEALERS] = [const { Stack::new() }; N_STEALERS];
static OWNER_STACK: Stack<4096> = Stack::new();

/// `stacks.at(tid)`: the bounds check (an uncaught `std::out_of_range` aborts).
fn at(tid: usize) {
    if tid >= STACKS_LEN.read() {
        panic!("vector::at: out_of_range (std::terminate)");
    }
}

/// `stacks.resize(n)` (libstdc++): grows by default-constructing at the end it reads then,
/// or shrinks by destroying the tail.
fn stacks_resize(n: usize) {
    let len = STACKS_LEN.read();
    if n > len {
        let add = n - len;
        let finish = STACKS_LEN.read();
        assert!(
            finish + add <= STACKS_CAPACITY,
            "model: more stacks than modelled"
        );
        for s in &DEPTH[finish..finish + add] {
            s.write(0); // an empty vector
        }
        STACKS_LEN.write(finish + add);
    } else if n < len {
        // The destroyed stacks' storage is freed; their records are unreachable.
        let _finish = STACKS_LEN.read();
        STACKS_LEN.write(n);
    }
}

/// `State::Push(tid, fname)`.
fn state_push(tid: usize, fname: u8) {
    if STACKS_LEN.read() <= tid {
        stacks_resize(tid + 1);
    }
    at(tid);
    // push_back(ar): copy the new record at the end
    let d = DEPTH[tid].read();
    assert!(d < MAX_DEPTH, "model: shadow stack deeper than modelled");
    FNAME[tid][d].write(fname);
    PC[tid][d].write(0);
    LVARS_LEN[tid][d].write(0);
    DEPTH[tid].write(d + 1);
}

/// `State::Pop(tid)`.
fn state_pop(tid: usize) {
    at(tid);
    let size = DEPTH[tid].read();
    assert!(size > 0, "State::Pop: size > 0");
    at(tid);
    // resize(size - 1): destroy the last record
    let _finish = DEPTH[tid].read();
    DEPTH[tid].write(size - 1);
}

/// `State::Clear()`.
fn state_clear() {
    let _finish = STACKS_LEN.read();
    STACKS_LEN.write(0);
}

/// An activation record, `stacks[tid][index]`.
#[derive(Clone, Copy)]
struct Record {
    tid: usize,
    index: usize,
}

/// `State::Peek(tid)`: the top record.
fn state_peek(tid: usize) -> Record {
    at(tid);
    let size = DEPTH[tid].read();
    assert!(size > 0, "State::Peek: size > 0");
    at(tid);
    // .at(size - 1)
    let index = size - 1;
    if index >= DEPTH[tid].read() {
        panic!("vector::at: out_of_range (std::terminate)");
    }
    Record { tid, index }
}

impl Record {
    /// `ActivationRecord::Update(pc)`.
    fn update(self, pc: i32) {
        PC[self.tid][self.index].write(pc);
    }

    /// `ActivationRecord::Update(pc, id, val)`.
    fn update_var(self, pc: i32, id: usize, val: i64) {
        PC[self.tid][self.index].write(pc);
        let len = &LVARS_LEN[self.tid][self.index];
        if len.read() <= id {
            // lvars.resize(id + 1)
            let old = len.read();
            for v in &LVARS[self.tid][self.index][old..=id] {
                v.write(0);
            }
            len.write(id + 1);
        }
        LVARS[self.tid][self.index][id].write(val);
    }
}

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

/// `ComputeIndex(l)`: `l`'s position from `head`.
fn compute_index(l: i32) -> i64 {
    if l >= HEAD.load(Ordering::SeqCst) {
        (l - HEAD.load(Ordering::SeqCst)) as i64
    } else {
        (MASK.read() + 1 - (HEAD.load(Ordering::SeqCst) - l)) as i64
    }
}

/// Proof that the spin lock is held.
struct Held;

/// `SpinLock::Acquire(tid)`.
fn acquire(tid: usize) -> Held {
    state_push(tid, F_ACQUIRE);
    let _ar = state_peek(tid);
    let mut retries = 0;
    loop {
        // pc == 0
        state_peek(tid).update_var(0, 0, retries as i64);
        let old = LOCK.swap(1, Ordering::SeqCst);
        if old == 0 {
            break;
        }
        retries += 1;
        if retries >= MAX_RETRIES_BEFORE_SLEEP.read() {
            // pc == 1
            state_peek(tid).update_var(1, 0, retries as i64);
            yield_now(); // sleep(0)
            retries = 0;
        }
    }
    state_pop(tid);
    Held
}

/// `SpinLock::Release(tid)`.
fn release(tid: usize, _held: Held) {
    state_push(tid, F_RELEASE);
    let _ar = state_peek(tid);
    // pc == 0
    state_peek(tid).update(0);
    LOCK.store(0, Ordering::SeqCst);
    state_pop(tid);
}

/// `Steal(result, tid)`.
fn steal(tid: usize) -> Option<usize> {
    state_push(tid, F_STEAL);
    let _ar = state_peek(tid);
    // pc == 0
    state_peek(tid).update(0);
    let held = acquire(tid);
    // pc == 1
    state_peek(tid).update(1);
    let h = read_v(&HEAD);
    // pc == 2
    let ar = state_peek(tid);
    ar.update_var(2, 0, compute_index(h));
    write_v(&HEAD, h + 1);
    // pc == 3
    state_peek(tid).update(3);
    let found = if h < read_v(&TAIL) {
        Some(elem(h).read())
    } else {
        // pc == 4
        state_peek(tid).update(4);
        write_v(&HEAD, h); // restore the head
        None
    };
    // pc == 5
    state_peek(tid).update_var(5, 1, found.is_some() as i64);
    release(tid, held);
    state_pop(tid);
    found
}

/// `Pop(result, tid)`.
fn pop(tid: usize) -> Option<usize> {
    state_push(tid, F_POP);
    let _ar = state_peek(tid);
    // pc == 0
    state_peek(tid).update(0);
    let t = read_v(&TAIL) - 1;
    // pc == 1
    let ar = state_peek(tid);
    ar.update_var(1, 0, compute_index(t));
    write_v(&TAIL, t);
    // pc == 2
    state_peek(tid).update(2);
    let ret = if read_v(&HEAD) <= t {
        Some(elem(t).read())
    } else {
        // pc == 3
        state_peek(tid).update(3);
        write_v(&TAIL, t + 1); // restore the tail
        sync_pop(tid)
    };
    state_pop(tid);
    ret
}

/// `SyncPop(result, tid)`.
fn sync_pop(tid: usize) -> Option<usize> {
    state_push(tid, F_SYNC_POP);
    let _ar = state_peek(tid);
    // pc == 0
    state_peek(tid).update(0);
    let held = acquire(tid);
    // pc == 1
    state_peek(tid).update(1);
    let t = read_v(&TAIL) - 1;
    // pc == 2
    let ar = state_peek(tid);
    ar.update_var(2, 0, compute_index(t));
    write_v(&TAIL, t);
    // pc == 3
    state_peek(tid).update(3);
    let mut found = if read_v(&HEAD) <= t {
        Some(elem(t).read())
    } else {
        // pc == 4
        state_peek(tid).update(4);
        write_v(&TAIL, t + 1); // restore the tail
        None
    };
    // pc == 5
    state_peek(tid).update_var(5, 1, found.is_some() as i64);
    if read_v(&HEAD) > t {
        // the queue is empty: reset head and tail; pc == 6
        state_peek(tid).update(6);
        write_v(&HEAD, 0);
        // pc == 7
        state_peek(tid).update(7);
        write_v(&TAIL, 0);
        found = None;
    }
    // pc == 8
    state_peek(tid).update_var(8, 1, found.is_some() as i64);
    release(tid, held);
    state_pop(tid);
    found
}

/// `Push(elem, tid)` (the correct version: one slot stays free for a concurrent steal).
fn push(item: usize, tid: usize) {
    state_push(tid, F_PUSH);
    let _ar = state_peek(tid);
    // pc == 0
    state_peek(tid).update(0);
    let t = read_v(&TAIL);
    // pc == 1
    let ar = state_peek(tid);
    ar.update_var(1, 0, compute_index(t));
    if t < read_v(&HEAD) + MASK.read() && t < MAX_SIZE {
        elem(t).write(item);
        // pc == 2
        state_peek(tid).update(2);
        write_v(&TAIL, t + 1); // only once the entry is initialised
    } else {
        // resize or re-index; pc == 3
        state_peek(tid).update(3);
        sync_push(item, tid);
    }
    state_pop(tid);
}

/// `SyncPush(elem, tid)`: re-index, grow the array if it is full, push, under the lock.
fn sync_push(item: usize, tid: usize) {
    state_push(tid, F_SYNC_PUSH);
    let _ar = state_peek(tid);
    // pc == 0
    state_peek(tid).update(0);
    let held = acquire(tid);
    // pc == 1
    state_peek(tid).update(1);
    let mut h = read_v(&HEAD);
    // pc == 2
    let ar = state_peek(tid);
    ar.update_var(2, 0, compute_index(h));
    let count = read_v(&TAIL) - h;
    // normalise the indices
    h &= MASK.read();
    // pc == 3
    let ar = state_peek(tid);
    ar.update_var(3, 0, compute_index(h));
    state_peek(tid).update_var(3, 1, count as i64);
    write_v(&HEAD, h);
    // pc == 4
    state_peek(tid).update(4);
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
        for s in &ARRAY[new][..newsize as usize] {
            s.write(0); // T()
        }
        for i in 0..count {
            let v = ARRAY[old][((h + i) & mask) as usize].read();
            ARRAY[new][i as usize].write(v);
        }
        ELEMS.write(new);
        MASK.write(newsize - 1);
        // pc == 5
        state_peek(tid).update(5);
        HEAD.store(0, Ordering::SeqCst);
        // pc == 6
        state_peek(tid).update(6);
        TAIL.store(count, Ordering::SeqCst);
    }
    assert!(count < MASK.read(), "count < mask");
    // push the element; pc == 7
    state_peek(tid).update(7);
    let t = read_v(&TAIL);
    elem(t).write(item);
    // pc == 8
    let ar = state_peek(tid);
    ar.update_var(8, 2, compute_index(t));
    write_v(&TAIL, t + 1);
    // pc == 9
    state_peek(tid).update(9);
    release(tid, held);
    state_pop(tid);
}

/// `ObjType::Operation`: `field++` of the item `r` points to.
fn operation(r: usize) {
    if r == 0 {
        panic!("null deref");
    }
    let f = FIELD[r - 1].read();
    FIELD[r - 1].write(f + 1);
}

/// `Stealer((void*)TID)`.
fn stealer<const TID: usize>() {
    let tid = TID;
    state_push(tid, F_STEALER);
    let _ar = state_peek(tid);
    for i in 0..N_STEAL_ATTEMPTS {
        // pc == 0
        state_peek(tid).update_var(0, 0, i as i64);
        if let Some(r) = steal(tid) {
            operation(r);
        }
    }
    state_pop(tid);
}

/// `MainThread((void*)0)`: thread id 0 (main's, whose record it shares).
fn main_thread() {
    let tid = 0;
    for i in 0..N_ITEMS {
        // pc == 1
        state_peek(tid).update_var(1, 0, i as i64);
        push(i + 1, tid); // &items[i]
    }
    for i in 0..N_ITEMS {
        // pc == 4
        state_peek(tid).update_var(4, 0, i as i64);
        if let Some(r) = pop(tid) {
            operation(r);
        }
    }
    // pc == 5
    state_peek(tid).update(5);
}

fn main_task() {
    let tid = 0;
    state_push(tid, F_RUN_TEST);
    for f in &FIELD {
        f.write(0); // ObjType()
    }
    // WorkStealQueue(INITQSIZE)
    HEAD.store(0, Ordering::SeqCst);
    TAIL.store(0, Ordering::SeqCst);
    MAX_RETRIES_BEFORE_SLEEP.write(0);
    MASK.write(INITQSIZE - 1);
    ELEMS.write(0);
    for s in &ARRAY[0][..INITQSIZE as usize] {
        s.write(0); // T()
    }
    let _ar = state_peek(tid);

    let entries: [fn(); N_STEALERS] = [stealer::<1>, stealer::<2>];
    let stealers: [JoinHandle; N_STEALERS] = core::array::from_fn(|i| {
        // pc == 0
        state_peek(tid).update_var(0, 0, i as i64);
        spawn(&STEALER_STACKS[i], entries[i])
    });
    let m = spawn(&OWNER_STACK, main_thread);
    m.join();
    for h in stealers {
        h.join();
    }
    for f in &FIELD {
        assert!(f.read() == 1, "field == 1");
    }
    state_pop(tid);
    state_clear();
}

firmware!(main_task);
