//! ConVul CVE-2016-7911 (Linux `get_task_ioprio` racing `exit_io_context`); PERIOD
//! `evaluation/ConVul-CVE-Benchmarks/CVE-2016-7911/2016-7911.cpp`. 3 tasks: main (owns the task
//! and its `io_context`), t1 (`get_task_ioprio`) and t2 (`exit_io_context`). t1 tests
//! `task->io_context` and reads it twice more (for a `printf`, then for `->ioprio`) without the
//! task lock; t2, under `task->alloc_lock`, takes the pointer and sets it to NULL, then
//! decrements `ioc->nr_tasks`. Bug: NULL dereference (a panic; SIGSEGV in SURW): t2's
//! `io_context = NULL` lands between t1's NULL test and t1's dereference.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_cct::{NULL, Ptr, deref};

const IOPRIO_CLASS_SHIFT: i32 = 13;
const IOPRIO_CLASS_NONE: i32 = 0;
const IOPRIO_NORM: i32 = 4;

/// `task_test` (on main's stack): its `io_context` pointer and `alloc_lock`.
static IO_CONTEXT: Shared<Ptr> = Shared::new(NULL);
static ALLOC_LOCK: Mutex<()> = Mutex::new(());
/// `ioc_test` (on main's stack), the one `io_context`: `nr_tasks.counter`, `ioprio`.
static IOC_NR_TASKS: [Shared<i32>; 1] = [const { Shared::new(0) }; 1];
static IOC_IOPRIO: [Shared<u16>; 1] = [const { Shared::new(0) }; 1];
static STACK1: Stack<2048> = Stack::new();
static STACK2: Stack<2048> = Stack::new();

fn get_task_ioprio() -> i32 {
    let mut ret = 0; // security_task_getioprio
    if ret != 0 {
        return ret;
    }
    ret = (IOPRIO_CLASS_NONE << IOPRIO_CLASS_SHIFT) | IOPRIO_NORM;
    if IO_CONTEXT.read() != NULL {
        let _shown = IO_CONTEXT.read(); // printf("p->io_context: %p\n", p->io_context)
        let ioc = deref(IO_CONTEXT.read());
        ret = IOC_IOPRIO[ioc].read() as i32;
    }
    ret
}

fn exit_io_context() {
    let g = ALLOC_LOCK.lock();
    let ioc = IO_CONTEXT.read();
    IO_CONTEXT.write(NULL);
    g.unlock();
    // atomic_dec(&ioc->nr_tasks): a plain `counter--` here
    let i = deref(ioc);
    let n = IOC_NR_TASKS[i].read();
    IOC_NR_TASKS[i].write(n - 1);
}

fn thread_one() {
    get_task_ioprio();
}

fn thread_two() {
    exit_io_context();
}

fn main_task() {
    IOC_IOPRIO[0].write(1);
    IO_CONTEXT.write(1); // &ioc_test

    let t1 = spawn(&STACK1, thread_one);
    let t2 = spawn(&STACK2, thread_two);
    t1.join();
    t2.join();
}

firmware!(main_task);
