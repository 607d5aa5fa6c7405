//! A wronglock behind noise (SCTBench's WrongLock, issue 35's first program): the main task
//! and task A update one counter under different locks, while six noise tasks each make
//! `--arg 0` (default 200) operations under a lock of their own on data of their own. A
//! reads the counter, increments it and checks that nobody else moved it; main's store
//! between A's write and its check fails the check. The noise makes every run some 3,600
//! steps long with a context switch at nearly every one: what shrinking has to cut.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

const NOISE: usize = 6;

static DATA: Shared<u32> = Shared::new(0);
static DATA_LOCK: Mutex<()> = Mutex::new(());
static THIS_LOCK: Mutex<()> = Mutex::new(());
static NOISE_DATA: [Shared<u32>; NOISE] = [const { Shared::new(0) }; NOISE];
static NOISE_LOCKS: [Mutex<()>; NOISE] = [const { Mutex::new(()) }; NOISE];
static NOISE_STACKS: [Stack<2048>; NOISE] = [const { Stack::new() }; NOISE];
static A_STACK: Stack<2048> = Stack::new();

fn noise<const I: usize>() {
    for _ in 0..arg_or(0, 200) {
        let g = NOISE_LOCKS[I].lock();
        NOISE_DATA[I].update(|v| v + 1);
        g.unlock();
    }
}

fn side_a() {
    let g = DATA_LOCK.lock();
    let x = DATA.read();
    DATA.write(x + 1);
    assert_eq!(DATA.read(), x + 1, "the counter moved under DATA_LOCK");
    g.unlock();
}

fn main_task() {
    let noise: [JoinHandle; NOISE] = [
        spawn(&NOISE_STACKS[0], noise::<0>),
        spawn(&NOISE_STACKS[1], noise::<1>),
        spawn(&NOISE_STACKS[2], noise::<2>),
        spawn(&NOISE_STACKS[3], noise::<3>),
        spawn(&NOISE_STACKS[4], noise::<4>),
        spawn(&NOISE_STACKS[5], noise::<5>),
    ];
    let a = spawn(&A_STACK, side_a);
    // The other side, under the wrong lock.
    let g = THIS_LOCK.lock();
    let d = DATA.read();
    DATA.write(d + 1);
    g.unlock();
    a.join();
    for h in noise {
        h.join();
    }
}

firmware!(main_task);
