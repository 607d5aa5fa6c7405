//! BUG: a lost wake-up on the interrupt executor. A motor task runs on a more urgent line
//! and waits for commands; the thread-mode shell parses a command and hands it over, but
//! through the acknowledgement `Signal` (the two statics look alike): the motor task waits
//! forever, and once the shell is done nothing can wake it.
#![no_std]
#![no_main]

use embassy_executor::{InterruptExecutor, Spawner};
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::signal::Signal;
use embassy_time::Timer;
use lm3s6965::{Interrupt, interrupt};
use panic_semihosting as _;

static COMMAND: Signal<CriticalSectionRawMutex, u32> = Signal::new();
static ACK: Signal<CriticalSectionRawMutex, u32> = Signal::new();

static MOTOR: InterruptExecutor = InterruptExecutor::new();

#[embassy_executor::task]
async fn motor() {
    let speed = COMMAND.wait().await;
    ACK.signal(speed);
}

#[embassy_executor::task]
async fn shell() {
    // Parsing the command line takes a while.
    Timer::after_millis(3).await;
    ACK.signal(1200);
}

#[interrupt]
fn GPIOB() {
    // SAFETY: the handler of the line `MOTOR` was started on.
    unsafe { MOTOR.on_interrupt() }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    let mut core = cortex_m::Peripherals::take().unwrap();
    // SAFETY: no priority-based critical section is in use yet.
    unsafe { core.NVIC.set_priority(Interrupt::GPIOB, 1 << 5) };
    MOTOR.start(Interrupt::GPIOB).spawn(motor().unwrap());
    spawner.spawn(shell().unwrap());
}
