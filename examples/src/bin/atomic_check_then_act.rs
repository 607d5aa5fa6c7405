//! A check-then-act on an atomic that should have been a compare-and-swap: two tasks each
//! claim a free slot with `load`, compare, `store`. Both can see it free before either
//! stores, and both claim it. Every operation is atomic; the sequence is not.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::sync::atomic::{AtomicU32, Ordering};
use jostle::*;

/// 0: free; otherwise the task id + 1 of the owner.
static OWNER: AtomicU32 = AtomicU32::new(0);
static CLAIMS: AtomicU32 = AtomicU32::new(0);
static STACK1: Stack<TASK_STACK_BYTES> = Stack::new();
static STACK2: Stack<TASK_STACK_BYTES> = Stack::new();

fn claim() {
    if OWNER.load(Ordering::Acquire) == 0 {
        // Should be `OWNER.compare_exchange(0, me, AcqRel, Acquire).is_ok()`.
        OWNER.store(u32::from(current_task()) + 1, Ordering::Release);
        CLAIMS.fetch_add(1, Ordering::Relaxed);
    }
}

fn main_task() {
    let a = spawn(&STACK1, claim);
    let b = spawn(&STACK2, claim);
    a.join();
    b.join();
    assert_eq!(
        CLAIMS.load(Ordering::Relaxed),
        1,
        "two tasks claimed the same slot"
    );
}

firmware!(main_task);
