//! racefuzzer-pldi08 Figure 2: a hard-to-reproduce real race on `x` (statements 8 and 10).
//! thread1 holds `L` across `--arg 0` filler statements (default 20) before reading `x`.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static X: Shared<u32> = Shared::new(0);
static L: Mutex<()> = Mutex::new(());
static OWN1: Shared<u32> = Shared::new(0);
static OWN2: Shared<u32> = Shared::new(0);
static STACK1: Stack<TASK_STACK_BYTES> = Stack::new();
static STACK2: Stack<TASK_STACK_BYTES> = Stack::new();

fn thread1() {
    let g = L.lock(); // 1
    filler(&OWN1, arg_or(0, 20)); // 2-6: f1() … f5()
    g.unlock(); // 7
    if X.read() == 0 {
        // 8
        panic!("ERROR"); // 9
    }
}

fn thread2() {
    X.write(1); // 10
    let g = L.lock(); // 11
    filler(&OWN2, 1); // 12: f6()
    g.unlock(); // 13
}

fn main_task() {
    let a = spawn(&STACK1, thread1);
    let b = spawn(&STACK2, thread2);
    a.join();
    b.join();
}

firmware!(main_task);
