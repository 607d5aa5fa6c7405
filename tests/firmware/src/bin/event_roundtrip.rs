//! Emits one event of every kind (the kernel's `Event::samples`) and both side frames, so
//! the host can check that every kind survives encode → defmt → decode.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

fn main_task() {
    #[cfg(target_os = "none")]
    port::emit_samples();
}

firmware!(main_task);
