//! Two tasks increment a counter inside `critical_section::with`: the kernel's
//! `critical-section` implementation serialises them and records enter/exit.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static COUNT: Shared<u32> = Shared::new(0);
static STACK1: Stack<4096> = Stack::new();
static STACK2: Stack<4096> = Stack::new();

fn worker() {
    for _ in 0..3 {
        critical_section::with(|_| {
            let v = COUNT.read();
            // A scheduling point inside the section: the other task must not get in.
            yield_now();
            COUNT.write(v + 1);
        });
    }
}

fn main_task() {
    let a = spawn(&STACK1, worker);
    let b = spawn(&STACK2, worker);
    a.join();
    b.join();
    assert_eq!(COUNT.read(), 6, "a critical section let another task in");
}

firmware!(main_task);
