//! SafeStack: Dmitry Vyukov's lock-free stack example (Relacy), pthread version via SCTBench;
//! PERIOD `evaluation/SafeStack/SafeStack.cpp`. 4 tasks: main and 3 workers; a stack of 3 items
//! `{value, next (atomic)}` linked 0 -> 1 -> 2, atomics `head` and `count`. Each worker twice
//! pops an item (spinning with yields), writes its id into the item's `value`, asserts it reads
//! it back, and pushes the item. Pop claims `head`'s link by exchanging `next` with -1 and then
//! CASes `head`; push stores `next = head` and CASes `head`. Bug: assertion, through an ABA on
//! `head`: a pusher whose CAS failed re-stores `next`, erasing a stale popper's -1 mark, so the
//! stale popper's CAS later installs an out-of-date `next` and two workers own the same item
//! (the shortest failing run found for the C is 43 atomic steps, twice the ABA; SURW needs
//! ~370,000 schedules on average, every other strategy of the paper none in 10^6).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::sync::atomic::{AtomicI32, Ordering};
use jostle::*;

const NUM_THREADS: usize = 3;
/// `SafeStack<int> stack(3)`: the items pushed initially.
const PUSH_COUNT: usize = 3;

// The items (`array = new SafeStackItem<int>[pushCount]`).
static VALUE: [Shared<i32>; PUSH_COUNT] = [const { Shared::new(0) }; PUSH_COUNT];
static NEXT: [AtomicI32; PUSH_COUNT] = [const { AtomicI32::new(0) }; PUSH_COUNT];
static HEAD: AtomicI32 = AtomicI32::new(0);
static COUNT: AtomicI32 = AtomicI32::new(0);
static STACKS: [Stack<4096>; NUM_THREADS] = [const { Stack::new() }; NUM_THREADS];

/// `array[i]` (an index out of range is a porting error: the C would touch the heap
/// outside the array).
fn item(i: i32) -> usize {
    assert!(
        (0..PUSH_COUNT as i32).contains(&i),
        "array index {} out of range",
        i
    );
    i as usize
}

/// The constructor (a static initialiser: it runs in main before the workers).
fn safe_stack_new() {
    COUNT.store(PUSH_COUNT as i32, Ordering::Relaxed);
    HEAD.store(0, Ordering::Relaxed);
    for (i, next) in NEXT[..PUSH_COUNT - 1].iter().enumerate() {
        next.store(i as i32 + 1, Ordering::Relaxed);
    }
    NEXT[PUSH_COUNT - 1].store(-1, Ordering::Relaxed);
}

fn pop() -> i32 {
    while COUNT.load(Ordering::Acquire) > 1 {
        let head1 = HEAD.load(Ordering::Acquire);
        let next1 = NEXT[item(head1)].swap(-1, Ordering::SeqCst);
        if next1 >= 0 {
            let head2 = head1;
            if HEAD
                .compare_exchange(head2, next1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                COUNT.fetch_sub(1, Ordering::SeqCst);
                return head1;
            } else {
                NEXT[item(head1)].swap(next1, Ordering::SeqCst);
            }
        } else {
            yield_now(); // sched_yield
        }
    }
    -1
}

fn push(index: i32) {
    let mut head1 = HEAD.load(Ordering::Acquire);
    loop {
        NEXT[item(index)].store(head1, Ordering::Release);
        match HEAD.compare_exchange(head1, index, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => break,
            Err(current) => head1 = current,
        }
    }
    COUNT.fetch_add(1, Ordering::SeqCst);
}

fn thread<const IDX: i32>() {
    for _ in 0..2 {
        let elem = loop {
            let e = pop();
            if e >= 0 {
                break e;
            }
            yield_now(); // sched_yield
        };
        VALUE[item(elem)].write(IDX);
        assert!(
            VALUE[item(elem)].read() == IDX,
            "stack.array[elem].Value == idx"
        );
        push(elem);
    }
}

fn main_task() {
    safe_stack_new();
    let entries: [fn(); NUM_THREADS] = [thread::<0>, thread::<1>, thread::<2>];
    let threads: [JoinHandle; NUM_THREADS] =
        core::array::from_fn(|i| spawn(&STACKS[i], entries[i]));
    for h in threads {
        h.join();
    }
}

firmware!(main_task);
