//! Test firmware: see `src/bin`. The library holds what the measuring firmware shares.
#![no_std]

/// Recurses `n` frames deep, a 128-byte frame each, calling `at_each` in every frame: a
/// task that overflows its stack (`stack_overflow`, `stack_reuse`).
pub fn recurse(n: u32, at_each: fn()) -> u32 {
    let mut frame = [n; 32];
    core::hint::black_box(&mut frame);
    at_each();
    if n == 0 {
        frame[0]
    } else {
        recurse(n - 1, at_each).wrapping_add(frame[(n % 32) as usize])
    }
}

/// SysTick as an instruction counter: under QEMU `-icount` it counts instructions
/// deterministically (calibrated against a known loop).
#[cfg(target_os = "none")]
pub mod clock {
    use cortex_m::peripheral::{SYST, syst::SystClkSource};

    /// Starts SysTick from its top, counting down the core clock, 24 bits.
    pub fn start() {
        // SAFETY: nothing else uses SysTick in the measuring firmware.
        let mut syst = unsafe { cortex_m::Peripherals::steal() }.SYST;
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(0x00FF_FFFF);
        syst.clear_current();
        syst.enable_counter();
    }

    /// The 24-bit down-counter.
    pub fn now() -> u32 {
        SYST::get_current()
    }

    /// Runs `n` iterations of a two-instruction loop.
    pub fn spin(n: u32) {
        // SAFETY: pure register arithmetic.
        unsafe {
            core::arch::asm!("1:", "subs {0}, #1", "bne 1b", inout(reg) n => _);
        }
    }

    /// Ticks `f` takes, from a fresh start (modulo 2^24: the first reload happens on the
    /// first tick).
    pub fn measure(f: impl FnOnce()) -> u32 {
        start();
        let t0 = now();
        f();
        t0.wrapping_sub(now()) & 0x00FF_FFFF
    }
}
