//! A race hidden by a lock hand-off: T1 writes a value, then sets a flag under lock `N`;
//! T2, after `--arg 0` filler statements (default 20), takes `N`, reads the flag, releases
//! `N`, then reads the value and asserts it was published, without checking the flag. In
//! most schedules the hand-off of `N` orders the write before the read.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static VALUE: Shared<u32> = Shared::new(0);
static FLAG: Shared<u32> = Shared::new(0);
static N: Mutex<()> = Mutex::new(());
static OWN2: Shared<u32> = Shared::new(0);
static STACK1: Stack<TASK_STACK_BYTES> = Stack::new();
static STACK2: Stack<TASK_STACK_BYTES> = Stack::new();

// Each task body is an instrumented frame, so DrFinder knows which code may take `N`.
fn t1() {
    frame(|| {
        VALUE.write(42); // publish
        let g = N.lock();
        FLAG.write(1);
        g.unlock();
    })
}

fn t2() {
    frame(|| {
        filler(&OWN2, arg_or(0, 20));
        let g = N.lock();
        let _published = FLAG.read();
        g.unlock();
        // Bug: uses the value without checking the flag.
        assert_eq!(VALUE.read(), 42, "value used before it was published");
    })
}

fn main_task() {
    let a = spawn(&STACK1, t1);
    let b = spawn(&STACK2, t2);
    a.join();
    b.join();
}

firmware!(main_task);
