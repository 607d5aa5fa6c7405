//! CS/stack: ESBMC's `stack_bad.c` via SCTBench; PERIOD `evaluation/CS/stack/stack_bad.c`.
//! 3 tasks: main, a pusher and a popper (created and joined in that order), one mutex `m`.
//! Bug: assertion. The pusher does 10 times `lock; assert(push(i) != OVERFLOW); flag = true;
//! unlock`, the popper 10 times `lock; if flag { assert(pop() != UNDERFLOW) }; unlock`. Once
//! `flag` is set the popper asserts on every pop, so it fails as soon as it gets more
//! critical sections than the pusher has had since the first push (e.g. push, pop, pop).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

const SIZE: usize = 10;
const OVERFLOW: i32 = -1;
const UNDERFLOW: i32 = -2;

static TOP: Shared<i32> = Shared::new(0);
static ARR: [Shared<u32>; SIZE] = [const { Shared::new(0) }; SIZE];
static FLAG: Shared<bool> = Shared::new(false);
static M: Mutex<()> = Mutex::new(());
static STACK1: Stack<2048> = Stack::new();
static STACK2: Stack<2048> = Stack::new();

fn inc_top() {
    let t = TOP.read();
    TOP.write(t + 1);
}

fn dec_top() {
    let t = TOP.read();
    TOP.write(t - 1);
}

fn get_top() -> i32 {
    TOP.read()
}

fn push(x: u32) -> i32 {
    if TOP.read() == SIZE as i32 {
        return OVERFLOW;
    }
    ARR[get_top() as usize].write(x);
    inc_top();
    0
}

fn pop() -> i32 {
    if get_top() == 0 {
        return UNDERFLOW;
    }
    dec_top();
    ARR[get_top() as usize].read() as i32
}

fn t1() {
    for i in 0..SIZE as u32 {
        let g = M.lock();
        assert!(push(i) != OVERFLOW, "stack overflow");
        FLAG.write(true);
        g.unlock();
    }
}

fn t2() {
    for _ in 0..SIZE {
        let g = M.lock();
        if FLAG.read() {
            assert!(pop() != UNDERFLOW, "stack underflow");
        }
        g.unlock();
    }
}

fn main_task() {
    let a = spawn(&STACK1, t1);
    let b = spawn(&STACK2, t2);
    a.join();
    b.join();
}

firmware!(main_task);
