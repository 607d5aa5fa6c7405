//! Redundant-write races beside races that are not: two setters each store `READY = 1` and
//! `LEVEL = 3` (two writes of one value: either order leaves memory the same) and their own
//! number in `OWNER` (two values: the order shows); a reader reads `LEVEL` (a read against a
//! write). The campaign's queue must try the redundant races after every other candidate.
//! Nothing here fails.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static READY: Shared<u32> = Shared::new(0);
static LEVEL: Shared<u32> = Shared::new(0);
static OWNER: Shared<u32> = Shared::new(0);
static SEEN: Shared<u32> = Shared::new(0);
static STACKS: [Stack<4096>; 3] = [const { Stack::new() }; 3];

fn set(me: u32) {
    OWNER.write(me);
    LEVEL.write(3);
    READY.write(1);
}

fn setter1() {
    set(1);
}

fn setter2() {
    set(2);
}

fn reader() {
    SEEN.write(LEVEL.read());
}

fn main_task() {
    let a = spawn(&STACKS[0], setter1);
    let b = spawn(&STACKS[1], setter2);
    let c = spawn(&STACKS[2], reader);
    a.join();
    b.join();
    c.join();
}

firmware!(main_task);
