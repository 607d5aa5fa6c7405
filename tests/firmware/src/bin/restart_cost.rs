//! Measures the warm restart between two runs of one boot (QEMU, `-icount`: SysTick counts
//! instructions, and keeps counting across the restart, which resets no peripheral). At
//! the end of its main task a run leaves SysTick's value in RAM that startup does not
//! touch; the next run's main task reads SysTick first thing and prints, as a log frame,
//! `cost restart ticks=… calibration instructions=… ticks=…`: the ticks from one run's last
//! instruction of firmware to the next run's first, which covers the end of the run (task
//! exit, `RunEnd`), the restart (startup's `.data`/`.bss`), the configuration block's check
//! and the new run's start (`RunStart`). Run it with two runs per boot, trace `results`.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static VALUE: Shared<u32> = Shared::new(0);

#[cfg(target_os = "none")]
mod carried {
    use core::mem::MaybeUninit;

    const MAGIC: u32 = 0x5245_5354; // "REST"

    /// A marker and SysTick's value at the end of the previous run's main task.
    #[unsafe(link_section = ".uninit.JOSTLE_RESTART_COST")]
    static mut ENDED_AT: MaybeUninit<[u32; 2]> = MaybeUninit::uninit();

    /// SysTick's value when the previous run of this boot ended, if one did (and forgets it).
    pub fn take() -> Option<u32> {
        // SAFETY: two plain words only this module touches, in one task.
        unsafe {
            let p = (&raw mut ENDED_AT).cast::<u32>();
            let (magic, at) = (p.read_volatile(), p.add(1).read_volatile());
            p.write_volatile(0);
            (magic == MAGIC).then_some(at)
        }
    }

    /// Leaves SysTick's value `at` for the next run.
    pub fn leave(at: u32) {
        // SAFETY: as in `take`.
        unsafe {
            let p = (&raw mut ENDED_AT).cast::<u32>();
            p.add(1).write_volatile(at);
            p.write_volatile(MAGIC);
        }
    }
}

#[cfg(target_os = "none")]
use jostle_test_firmware::clock;

fn main_task() {
    #[cfg(target_os = "none")]
    {
        let now = clock::now();
        if let Some(ended_at) = carried::take() {
            let ticks = ended_at.wrapping_sub(now) & 0x00FF_FFFF;
            let spin = 100_000u32;
            let calibration = clock::measure(|| clock::spin(spin));
            defmt::println!(
                "cost restart ticks={=u32} calibration instructions={=u32} ticks={=u32}",
                ticks,
                2 * spin,
                calibration
            );
        }
    }
    // A smallest run: one shared write.
    VALUE.write(1);
    #[cfg(target_os = "none")]
    {
        clock::start();
        carried::leave(clock::now());
    }
}

firmware!(main_task);
