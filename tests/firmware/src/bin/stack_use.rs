//! Measures the stack the kernel needs: a task's deepest use when it makes every kind of
//! scheduling point (accesses, a lock, a signal and wait, atomics, a critical section, a
//! spawn and join, a yield) at the trace level the run asks for, with interrupt handlers
//! firing at its points; and the deepest use of the handlers' stack (the boot stack). Both
//! stacks are filled with a pattern first; the deepest word no longer holding it marks the
//! use. Prints `stack task_bytes= handler_bytes=` (a log frame) and ends.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static VALUE: Shared<u32> = Shared::new(0);
static LOCK: Mutex<u32> = Mutex::new(0);
static READY: Signal = Signal::new();
static COUNT: sync::atomic::AtomicU32 = sync::atomic::AtomicU32::new(0);
static MEASURED: Stack<4096> = Stack::new();
static HELPER: Stack<1024> = Stack::new();

static LOW: Interrupt = Interrupt::spontaneous(3, 2, 4, on_low);
static HIGH: Interrupt = Interrupt::spontaneous(4, 1, 4, on_high);

fn on_low() {
    VALUE.update(|v| v + 1);
    COUNT.fetch_add(1, sync::atomic::Ordering::SeqCst);
}

fn on_high() {
    VALUE.update(|v| v + 1);
}

fn helper() {
    READY.signal();
}

/// Every kind of scheduling point, a few times.
fn measured() {
    for _ in 0..4 {
        VALUE.update(|v| v + 1);
        *LOCK.lock() += VALUE.read();
        COUNT.fetch_add(1, sync::atomic::Ordering::SeqCst);
        let _ = COUNT.compare_exchange(
            1,
            2,
            sync::atomic::Ordering::SeqCst,
            sync::atomic::Ordering::SeqCst,
        );
        critical_section::with(|_| ());
        yield_now();
    }
    let h = spawn(&HELPER, helper);
    READY.wait();
    h.join();
}

const PATTERN: u32 = 0x5AC3_3CA5;

/// Bytes from the top of `lowest..top` down to the deepest word that lost the pattern.
fn used(lowest: usize, top: usize) -> usize {
    let mut at = lowest;
    // SAFETY: words of a region this firmware filled and owns.
    while at < top && unsafe { (at as *const u32).read_volatile() } == PATTERN {
        at += 4;
    }
    top - at
}

fn fill(lowest: usize, top: usize) {
    let mut at = lowest;
    while at < top {
        // SAFETY: as in `used`: memory no one uses now.
        unsafe { (at as *mut u32).write_volatile(PATTERN) };
        at += 4;
    }
}

fn main_task() {
    let (base, size) = MEASURED.region();
    let (base, top) = (base as usize, base as usize + size);
    // Above the guard; the kernel writes the first frame and the guard at the spawn.
    fill(base + 32, top);
    let handlers = handler_stack::region();
    if let Some((low, high)) = handlers {
        fill(low, high);
    }
    LOW.enable();
    HIGH.enable();
    spawn(&MEASURED, measured).join();
    disable_interrupts();
    let task_bytes = used(base + 32, top);
    let handler_bytes = handlers.map_or(0, |(low, high)| used(low, high) + handler_stack::ABOVE);
    report(task_bytes, handler_bytes);
}

#[cfg(target_os = "none")]
fn report(task: usize, handlers: usize) {
    defmt::println!(
        "stack task_bytes={=usize} handler_bytes={=usize}",
        task,
        handlers
    );
}

#[cfg(not(target_os = "none"))]
fn report(task: usize, handlers: usize) {
    println!("stack task_bytes={task} handler_bytes={handlers}");
}

#[cfg(target_os = "none")]
mod handler_stack {
    unsafe extern "C" {
        /// The end of the statics (cortex-m-rt): the boot stack grows down to it.
        static _stack_end: u32;
    }

    /// Bytes of the boot stack above the filled part, which the boot itself used before
    /// task 0 ran (counted as used).
    pub const ABOVE: usize = 512;

    /// The part of the boot stack below what the boot used: from the statics' end to
    /// [`ABOVE`] below the top (the main stack pointer's value at reset).
    pub fn region() -> Option<(usize, usize)> {
        // SAFETY: reading the vector table's first word and a linker symbol's address.
        let top = unsafe {
            let vtor = (*cortex_m::peripheral::SCB::PTR).vtor.read();
            (vtor as *const u32).read_volatile() as usize
        };
        let low = (&raw const _stack_end) as usize;
        (top > low + ABOVE).then_some((low, top - ABOVE))
    }
}

#[cfg(not(target_os = "none"))]
mod handler_stack {
    pub const ABOVE: usize = 0;
    pub fn region() -> Option<(usize, usize)> {
        None
    }
}

firmware!(main_task, interrupts: [LOW, HIGH]);
