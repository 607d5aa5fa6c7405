//! An interleaver that comes too early: `reporter` checks a sample against its scaled value
//! at once, while `sampler` first calibrates (a dozen writes of its own) and only then stores
//! a sample and its scaled value in two locked stages, as in `two_stage`. A reporter running
//! between the stages sees the new sample with the old scaled value.
//!
//! Run freely, the reporter has nearly always made its check before the sampler starts, so
//! AtomFuzzer's pause between the stages waits for nobody. The prediction names the
//! reporter's acquire of `RAW_LOCK` as an interleaver: AtomFuzzer holds it there until the
//! sampler is paused, then lets it go first.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static RAW_LOCK: Mutex<()> = Mutex::new(());
static SCALED_LOCK: Mutex<()> = Mutex::new(());
static RAW: Shared<u32> = Shared::new(0);
static SCALED: Shared<u32> = Shared::new(0);
static CALIBRATION: Shared<u32> = Shared::new(0);
static STACK1: Stack<4096> = Stack::new();
static STACK2: Stack<4096> = Stack::new();

fn sampler() {
    for step in 0..12 {
        CALIBRATION.write(step);
    }

    let g = RAW_LOCK.lock();
    RAW.write(7);
    g.unlock();

    let g = SCALED_LOCK.lock();
    let raw = RAW.read();
    SCALED.write(raw * 10);
    g.unlock();
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
