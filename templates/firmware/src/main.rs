//! A first test program: a sensor task and a logger task share a reading and a count.
//! The logger takes the lock for the count but reads the reading unprotected, and the
//! sensor writes the reading before it counts it: in some interleavings the logger sees a
//! count that does not match the reading. `cargo run --release` runs a campaign that finds
//! the race and prints the command that replays it; fix it by moving the reading under the
//! lock.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static READING: Shared<u32> = Shared::new(0);
static COUNT: Mutex<u32> = Mutex::new(0);
static SENSOR_STACK: Stack<4096> = Stack::new();

fn sensor() {
    for sample in 1..=3 {
        READING.write(sample * 10);
        *COUNT.lock() += 1;
    }
}

fn logger() {
    let count = *COUNT.lock();
    let reading = READING.read();
    assert_eq!(reading, count * 10, "logged a reading that does not match its count");
}

fn main_task() {
    let sensor = spawn(&SENSOR_STACK, sensor);
    logger();
    sensor.join();
}

firmware!(main_task);
