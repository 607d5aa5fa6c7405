//! A receive ring filled by an interrupt handler (a UART's RX interrupt) and drained by the
//! main loop. The consumer publishes the new tail (frees the slot) before it reads the slot:
//! a handler firing in between sees room, writes the next byte into that very slot, and the
//! consumer reads the wrong element. (Fix: read the slot, then store the tail.)
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

const CAPACITY: u32 = 2;
static SLOTS: [Shared<u32>; CAPACITY as usize] = [const { Shared::new(0) }; CAPACITY as usize];
/// Next slot the handler fills, next slot the consumer empties (free-running).
static HEAD: Shared<u32> = Shared::new(0);
static TAIL: Shared<u32> = Shared::new(0);
/// Bytes the handler produced and dropped (ring full).
static PRODUCED: Shared<u32> = Shared::new(0);

/// A received byte, up to six times per run.
static RX: Interrupt = Interrupt::spontaneous(11, 1, 6, rx);

fn rx() {
    let head = HEAD.read();
    if head - TAIL.read() == CAPACITY {
        return; // full: the byte is dropped
    }
    let byte = PRODUCED.read() + 1;
    PRODUCED.write(byte);
    SLOTS[(head % CAPACITY) as usize].write(byte);
    HEAD.write(head + 1);
}

fn main_task() {
    RX.enable();
    let mut expected = 1;
    for _ in 0..12 {
        let tail = TAIL.read();
        if tail == HEAD.read() {
            yield_now();
            continue;
        }
        // The bug: the slot is freed before it is read.
        TAIL.write(tail + 1);
        let byte = SLOTS[(tail % CAPACITY) as usize].read();
        assert_eq!(byte, expected, "read a slot the handler had refilled");
        expected += 1;
    }
    RX.disable();
}

firmware!(main_task, interrupts: [RX]);
