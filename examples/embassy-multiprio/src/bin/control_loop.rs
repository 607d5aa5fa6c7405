//! A control loop on a more urgent line than the rest: an `InterruptExecutor` task ticks
//! every 5 ms, reads the setpoint a thread-mode task changes, and hands each output to a
//! thread-mode logger through a `Channel`; the logger checks every tick arrives, in order,
//! and that each output follows the setpoint in force, then exits. The executor is started
//! from `#[embassy_executor::main]`'s task, as the kernel runs.
#![no_std]
#![no_main]

use core::sync::atomic::{AtomicU32, Ordering};
use cortex_m_semihosting::debug;
use embassy_executor::{InterruptExecutor, Spawner};
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::channel::Channel;
use embassy_time::{Duration, Ticker, Timer};
use lm3s6965::{Interrupt, interrupt};
use panic_semihosting as _;

const TICKS: u32 = 6;

static SETPOINT: AtomicU32 = AtomicU32::new(10);
static OUTPUTS: Channel<CriticalSectionRawMutex, (u32, u32, u32), 2> = Channel::new();

static CONTROL: InterruptExecutor = InterruptExecutor::new();

#[embassy_executor::task]
async fn control() {
    let mut ticker = Ticker::every(Duration::from_millis(5));
    for tick in 1..=TICKS {
        ticker.next().await;
        let setpoint = SETPOINT.load(Ordering::Relaxed);
        // A full queue drops the output: the logger would report the missing tick.
        let _ = OUTPUTS.try_send((tick, setpoint, setpoint * 2));
    }
}

#[embassy_executor::task]
async fn operator() {
    Timer::after_millis(12).await;
    SETPOINT.store(20, Ordering::Relaxed);
}

#[embassy_executor::task]
async fn logger() {
    for expected in 1..=TICKS {
        let (tick, setpoint, output) = OUTPUTS.receive().await;
        assert_eq!(tick, expected, "tick {expected} was dropped");
        assert_eq!(output, setpoint * 2, "tick {tick}: output off its setpoint");
    }
    debug::exit(debug::EXIT_SUCCESS);
}

#[interrupt]
fn UART0() {
    // SAFETY: the handler of the line `CONTROL` was started on.
    unsafe { CONTROL.on_interrupt() }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    let mut core = cortex_m::Peripherals::take().unwrap();
    // SAFETY: no priority-based critical section is in use yet.
    unsafe { core.NVIC.set_priority(Interrupt::UART0, 2 << 5) };
    CONTROL.start(Interrupt::UART0).spawn(control().unwrap());
    spawner.spawn(operator().unwrap());
    spawner.spawn(logger().unwrap());
}
