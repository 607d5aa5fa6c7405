//! Two tasks on stacks that each fill one 1 KiB page of QEMU's (aligned to it), so each
//! task's 32-byte MPU guard starts the page its stack pointer is in: every frame written on
//! these stacks is a semihosting `SYS_WRITE` whose parameter block lies in the guard's page.
//! QEMU checks semihosting's accesses against the MPU page by page (by the page's first
//! address), so such a write fails unless the board lifts the guard for it: the run then
//! lost most of its events on QEMU (CCT `twostage`, whose two 2 KiB stacks happened to
//! start at 0x2000_0000 and 0x2000_0800). `--arg 0` = 1: the second task also panics, on
//! its stack (the panic's site and message are frames too).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

/// A stack that starts a page (QEMU's target pages are 1 KiB on M-profile CPUs).
#[repr(C, align(1024))]
struct PageStack(Stack<1024>);

static STACKS: [PageStack; 2] = [const { PageStack(Stack::new()) }; 2];
static COUNT: Mutex<u32> = Mutex::new(0);
static LAST: Shared<u32> = Shared::new(0);

fn worker(id: u32) {
    let mut n = COUNT.lock();
    *n += 1;
    LAST.write(id);
    n.unlock();
    yield_now();
    let last = LAST.read();
    if id == 2 && arg_or(0, 0) == 1 {
        panic!("worker {} saw {}", id, last);
    }
}

fn first() {
    worker(1);
}

fn second() {
    worker(2);
}

fn main_task() {
    let a = spawn(&STACKS[0].0, first);
    let b = spawn(&STACKS[1].0, second);
    a.join();
    b.join();
}

firmware!(main_task);
