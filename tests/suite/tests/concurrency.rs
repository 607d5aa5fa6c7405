//! Three concurrency tests in one firmware: each is a main task; the runner runs each as a
//! campaign (one configuration per run selects it) and prints libtest's lines.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static COUNT: Mutex<u32> = Mutex::new(0);
static SEEN: Shared<u32> = Shared::new(0);
static A: Mutex<()> = Mutex::new(());
static B: Mutex<()> = Mutex::new(());
static STACK1: Stack<4096> = Stack::new();
static STACK2: Stack<4096> = Stack::new();

fn locked_increment() {
    let mut count = COUNT.lock();
    *count += 1;
    count.unlock();
}

fn unlocked_increment() {
    let v = SEEN.read();
    SEEN.write(v + 1);
}

fn a_then_b() {
    let a = A.lock();
    let b = B.lock();
    b.unlock();
    a.unlock();
}

fn b_then_a() {
    let b = B.lock();
    let a = A.lock();
    a.unlock();
    b.unlock();
}

/// Runs `first` and `second` as two tasks and waits for both.
fn both(first: fn(), second: fn()) {
    let one = spawn(&STACK1, first);
    let two = spawn(&STACK2, second);
    one.join();
    two.join();
}

jostle::tests! {
    /// Increments under a lock: no schedule loses one.
    #[budget = 200]
    fn counter_under_a_lock_is_exact() {
        both(locked_increment, locked_increment);
        let count = COUNT.lock();
        assert_eq!(*count, 2);
        count.unlock();
    }

    /// Read, then write without a lock: a schedule that interleaves them loses one.
    #[should_find]
    #[budget = 200]
    fn unlocked_read_modify_write_loses_an_update() {
        both(unlocked_increment, unlocked_increment);
        assert_eq!(SEEN.read(), 2, "an increment was lost");
    }

    /// Two locks taken in opposite orders deadlock when each task holds its first.
    #[should_find]
    #[budget = 200]
    fn opposite_lock_orders_deadlock() {
        both(a_then_b, b_then_a);
    }
}
