//! BUG: a lost wake-up a timeout hides. The converter's interrupt (`ADC0_SEQUENCE_0`) stores a
//! sample, sets `READY` and wakes the reader through a waker slot. The reader checks
//! `READY` and, when it is not set, *then* puts its waker in the slot: a conversion that
//! completes between the check and the store finds the slot empty and wakes nobody. The
//! reader only goes on when its 50 ms timeout expires, and then handles a stale sample.
//! Fix: store the waker first, then check.
//!
//! The reader waits with `Mono::timeout_after`, as careful code does; the sample's age is
//! what shows the lost wake-up: on Jostle's virtual clock a sample is 0 ms old when the
//! wake-up is not lost.

#![no_std]
#![no_main]

use panic_semihosting as _;

use core::cell::RefCell;
use core::future::poll_fn;
use core::task::{Poll, Waker};
use critical_section::Mutex;
use portable_atomic::{AtomicBool, AtomicU32, Ordering};

static READY: AtomicBool = AtomicBool::new(false);
static SAMPLE_AT: AtomicU32 = AtomicU32::new(0);
static SLOT: Mutex<RefCell<Option<Waker>>> = Mutex::new(RefCell::new(None));

/// Waits until a sample is ready. (The bug: checks, then registers.)
async fn sample_ready() {
    poll_fn(|cx| {
        if READY.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        critical_section::with(|cs| *SLOT.borrow_ref_mut(cs) = Some(cx.waker().clone()));
        Poll::Pending
    })
    .await
}

#[rtic::app(device = lm3s6965, dispatchers = [SSI0])]
mod app {
    use super::{sample_ready, Ordering, READY, SAMPLE_AT, SLOT};
    use cortex_m_semihosting::hprintln;
    use rtic_monotonics::systick::prelude::*;

    systick_monotonic!(Mono, 1_000);

    #[shared]
    struct Shared {}

    #[local]
    struct Local {}

    #[init]
    fn init(cx: init::Context) -> (Shared, Local) {
        Mono::start(cx.core.SYST, 12_000_000);
        reader::spawn().unwrap();
        (Shared {}, Local {})
    }

    #[task(priority = 1)]
    async fn reader(_: reader::Context) {
        loop {
            if Mono::timeout_after(50.millis(), sample_ready())
                .await
                .is_ok()
            {
                break;
            }
            if READY.load(Ordering::Acquire) {
                break;
            }
        }
        let age = Mono::now().ticks() - SAMPLE_AT.load(Ordering::Relaxed);
        hprintln!("sample handled {} ms after the conversion", age);
        assert!(
            age < 10,
            "the sample waited {} ms: its wake-up was lost",
            age
        );
    }

    #[task(binds = ADC0_SEQUENCE_0, priority = 2)]
    fn conversion_done(_: conversion_done::Context) {
        SAMPLE_AT.store(Mono::now().ticks(), Ordering::Relaxed);
        READY.store(true, Ordering::Release);
        if let Some(waker) = critical_section::with(|cs| SLOT.borrow_ref_mut(cs).take()) {
            waker.wake();
        }
    }
}
