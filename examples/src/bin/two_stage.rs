//! Two locks in turn: `sampler` stores a sample under `RAW_LOCK`, then, under `SCALED_LOCK`,
//! stores its scaled value; `reporter` reads the sample and then the scaled value, each under
//! its lock, and checks that they belong together. Every access is locked (no race), yet
//! the sampler's two stages are not atomic: a reporter running between them sees the new
//! sample with the old scaled value. Atomizer's reduction predicts it (an acquire after a
//! release in one block) and AtomFuzzer makes it happen by pausing the sampler before its
//! second stage. `--arg 1` makes the two stages an annotated `atomic` block; without it,
//! the checker's heuristic finds them (consecutive sections on a common location).
//!
//! A second argument N makes the sampler calibrate first (N writes of its own). With N = 12
//! the reporter has nearly always made its check before the sampler starts, so pausing the
//! sampler between its stages waits for nobody: AtomFuzzer holds the reporter at its
//! acquire of `RAW_LOCK` (the candidate's interleaver) until the sampler is paused.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static RAW_LOCK: Mutex<()> = Mutex::new(());
static SCALED_LOCK: Mutex<()> = Mutex::new(());
static RAW: Shared<u32> = Shared::new(0);
static SCALED: Shared<u32> = Shared::new(0);
static CALIBRATION: Shared<u32> = Shared::new(0);
static STACK1: Stack<TASK_STACK_BYTES> = Stack::new();
static STACK2: Stack<TASK_STACK_BYTES> = Stack::new();

fn stages() {
    let g = RAW_LOCK.lock();
    RAW.write(7);
    g.unlock();

    let g = SCALED_LOCK.lock();
    let raw = RAW.read();
    SCALED.write(raw * 10);
    g.unlock();
}

fn sampler() {
    for step in 0..arg_or(1, 0) {
        CALIBRATION.write(step);
    }
    if arg_or(0, 0) == 1 {
        atomic(stages);
    } else {
        stages();
    }
}

fn reporter() {
    let g = RAW_LOCK.lock();
    let raw = RAW.read();
    g.unlock();

    let g = SCALED_LOCK.lock();
    let scaled = SCALED.read();
    g.unlock();

    assert!(scaled == raw * 10, "scaled value of another sample");
}

fn main_task() {
    let a = spawn(&STACK1, sampler);
    let b = spawn(&STACK2, reporter);
    a.join();
    b.join();
}

firmware!(main_task);
