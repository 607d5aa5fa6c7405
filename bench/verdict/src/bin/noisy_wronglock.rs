//! A wronglock behind noise: two tasks update one counter under different locks (SCTBench's
//! WrongLock, the "wrong lock"), while six noise tasks each make 200 operations under a lock
//! of their own on data of their own. The A-side reads the counter, increments it and checks
//! that nobody else moved it; a B-side store between its reads fails the check. The noise
//! makes every run long: what the campaign's shrinking has to cut.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

const NOISE: usize = 6;
const NOISE_OPS: u32 = 200;

static DATA: Shared<u32> = Shared::new(0);
static DATA_LOCK: Mutex<()> = Mutex::new(());
static THIS_LOCK: Mutex<()> = Mutex::new(());
static NOISE_DATA: [Shared<u32>; NOISE] = [const { Shared::new(0) }; NOISE];
static NOISE_LOCKS: [Mutex<()>; NOISE] = [const { Mutex::new(()) }; NOISE];
static NOISE_STACKS: [Stack<2048>; NOISE] = [const { Stack::new() }; NOISE];
static A_STACK: Stack<2048> = Stack::new();
static B_STACK: Stack<2048> = Stack::new();

fn noise<const I: usize>() {
    for _ in 0..NOISE_OPS {
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

fn side_b() {
    let g = THIS_LOCK.lock();
    let d = DATA.read();
    DATA.write(d + 1);
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
    let b = spawn(&B_STACK, side_b);
    a.join();
    b.join();
    for h in noise {
        h.join();
    }
}

firmware!(main_task);
