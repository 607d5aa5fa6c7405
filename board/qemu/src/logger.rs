//! defmt global logger over semihosting: one `SYS_WRITE` per frame, to the frame channel
//! ([`crate::write_frames`]: the host's pipe on fd 3, else QEMU's standard output).

use core::cell::UnsafeCell;

/// Frames longer than this are written in several pieces.
const BUF_LEN: usize = 256;

struct State {
    encoder: defmt::Encoder,
    taken: bool,
    token: critical_section::RestoreState,
    /// Encoded bytes of the frame being written.
    buf: [u8; BUF_LEN],
    len: usize,
}

struct Global(UnsafeCell<State>);
// SAFETY: accessed only inside a critical section (interrupts masked, or the kernel's
// section that no other task enters), from one core.
unsafe impl Sync for Global {}

static STATE: Global = Global(UnsafeCell::new(State {
    encoder: defmt::Encoder::new(),
    taken: false,
    token: critical_section::RestoreState::invalid(),
    buf: [0; BUF_LEN],
    len: 0,
}));

fn flush(state: &mut State) {
    if state.len == 0 {
        return;
    }
    // With the stack guards lifted while one starts a page: QEMU checks a semihosting call's
    // memory against the MPU by the first address of each 1 KiB page, so a no-access guard
    // (ARMv7-M) that starts a page would fail the call (and lose the frame) whenever its
    // parameter block, on the task's stack, lies in that page (see
    // `jostle_kernel::port::unguarded`).
    let len = state.len.min(BUF_LEN);
    jostle_kernel::port::unguarded(|| crate::write_frames(&state.buf[..len]));
    state.len = 0;
}

fn push(state: *mut State, data: &[u8]) {
    // SAFETY: called only between acquire and release, inside the critical section.
    let state = unsafe { &mut *state };
    for &b in data {
        if state.len >= BUF_LEN {
            flush(state);
        }
        state.buf[state.len] = b;
        state.len += 1;
    }
}

#[defmt::global_logger]
struct Logger;

// SAFETY: frames are written whole inside a critical section; a nested acquire (a panic while
// a frame is open) starts a new frame, which the host's rzCOBS decoder recovers from.
unsafe impl defmt::Logger for Logger {
    fn acquire() {
        // Through `critical-section`, as `defmt-rtt` does on the other boards: a task's log
        // is then the same scheduling point everywhere; the kernel's own frames only mask
        // interrupts (the kernel's implementation sees that it is logging).
        // SAFETY: released in `release` (or never, when a fault ends the run).
        let token = unsafe { critical_section::acquire() };
        let state = STATE.0.get();
        // SAFETY: inside the critical section; single core.
        unsafe {
            // A frame starts with nothing buffered: a fault that interrupted a frame leaves
            // its unsent bytes (dropped, so that the fault report is a clean frame; a frame
            // longer than the buffer that was partly sent shows up on the host as one
            // malformed frame), and a task's overflowing stack may have written here (the
            // state is in `.data`, below the stacks: a frame larger than a stack's guard can
            // skip it).
            (*state).len = 0;
            if !(*state).taken {
                (*state).token = token;
            }
            (*state).taken = true;
            (*state).encoder.start_frame(|d| push(state, d));
        }
    }

    unsafe fn flush() {
        // SAFETY: inside the critical section taken by acquire.
        unsafe { flush(&mut *STATE.0.get()) }
    }

    unsafe fn release() {
        let state = STATE.0.get();
        // SAFETY: paired with acquire.
        unsafe {
            (*state).encoder.end_frame(|d| push(state, d));
            flush(&mut *state);
            (*state).taken = false;
            critical_section::release((*state).token);
        }
    }

    unsafe fn write(bytes: &[u8]) {
        let state = STATE.0.get();
        // SAFETY: between acquire and release.
        unsafe { (*state).encoder.write(bytes, |d| push(state, d)) }
    }
}
