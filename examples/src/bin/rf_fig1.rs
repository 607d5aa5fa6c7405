//! racefuzzer-pldi08 Figure 1: a real race on `z` (statements 5 and 7) and a false race on
//! `x` (statements 1 and 10, ordered through `y` under lock `L`).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static X: Shared<u32> = Shared::new(0);
static Y: Shared<u32> = Shared::new(0);
static Z: Shared<u32> = Shared::new(0);
static L: Mutex<()> = Mutex::new(());
static STACK1: Stack<TASK_STACK_BYTES> = Stack::new();
static STACK2: Stack<TASK_STACK_BYTES> = Stack::new();

fn thread1() {
    X.write(1); // 1
    let g = L.lock(); // 2
    Y.write(1); // 3
    g.unlock(); // 4
    if Z.read() == 1 {
        // 5
        panic!("ERROR1"); // 6
    }
}

fn thread2() {
    Z.write(1); // 7
    let g = L.lock(); // 8
    if Y.read() == 1 {
        // 9
        if X.read() != 1 {
            // 10
            panic!("ERROR2"); // 11
        }
    }
    g.unlock(); // 13
}

fn main_task() {
    let a = spawn(&STACK1, thread1);
    let b = spawn(&STACK2, thread2);
    a.join();
    b.join();
}

firmware!(main_task);
