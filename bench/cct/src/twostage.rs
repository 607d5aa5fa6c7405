//! CS/twostage (ESBMC's `twostage_bad.c` via SCTBench), shared by the `twostage*` subjects,
//! which differ only in their thread counts. A writer sets `d1 = 1` under `L1`, then
//! `d2 = d1 + 1` under `L2`; a reader that finds `d1 != 0` under `L1` and then reads `d2`
//! under `L2` asserts `d2 == d1 + 1`. It fails when the reader runs both critical sections
//! after some writer's first stage and before any writer's second stage (one preemption of a
//! writer between its two stages; once one writer has done stage 2, `d2` stays 2).

use jostle::*;

static DATA1: Shared<i32> = Shared::new(0);
static DATA2: Shared<i32> = Shared::new(0);
static DATA1_LOCK: Mutex<()> = Mutex::new(());
static DATA2_LOCK: Mutex<()> = Mutex::new(());

fn writer() {
    let g = DATA1_LOCK.lock();
    DATA1.write(1);
    g.unlock();

    let g = DATA2_LOCK.lock();
    let d1 = DATA1.read();
    DATA2.write(d1 + 1);
    g.unlock();
}

fn reader() {
    let g = DATA1_LOCK.lock();
    if DATA1.read() == 0 {
        g.unlock();
        return;
    }
    let t1 = DATA1.read();
    g.unlock();

    let g = DATA2_LOCK.lock();
    let t2 = DATA2.read();
    g.unlock();

    assert!(t2 == t1 + 1, "Bug found!");
}

/// The main thread: spawns the writers then the readers (one per stack), joins them in that
/// order.
pub fn run<const WRITERS: usize, const READERS: usize>(
    writer_stacks: &'static [Stack<2048>; WRITERS],
    reader_stacks: &'static [Stack<2048>; READERS],
) {
    let writers: [JoinHandle; WRITERS] = core::array::from_fn(|i| spawn(&writer_stacks[i], writer));
    let readers: [JoinHandle; READERS] = core::array::from_fn(|i| spawn(&reader_stacks[i], reader));
    for h in writers {
        h.join();
    }
    for h in readers {
        h.join();
    }
}
