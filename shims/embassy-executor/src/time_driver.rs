//! embassy-time's driver on the kernel's virtual clock: `now` is the clock (in embassy-time's
//! ticks), and a wake-up at a deadline is the waiting task's kernel timer, which wakes the
//! task's wake-up signal. The clock moves only when nothing else can happen, so
//! `Timer::after`, `with_timeout`, `Ticker` and `select` over them never wait wall time,
//! and a timeout fires only when the event it guards could not have come first.
//!
//! An interrupt executor's task's timer requests its interrupt source instead: the
//! executor's line fires when it is due.
//!
//! One timer per task, as Embassy's own timer queue keeps one deadline per task: the
//! earliest deadline any of its futures asked for. A poll clears it first
//! (`crate::executor`); the futures still waiting set it again.

use core::task::Waker;
use jostle_kernel::clock::{self, TimerAction};

struct VirtualTime;

impl embassy_time_driver::Driver for VirtualTime {
    fn now(&self) -> u64 {
        clock::now()
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        let Some(task) = crate::raw::try_task_from_waker(waker) else {
            panic!(
                "jostle: an embassy-time deadline awaited outside an Embassy task (a waker that is not the executor's)"
            );
        };
        let header = task.header;
        if at < header.timer_at.get() {
            header.timer_at.set(at);
            let g = header.wake_signal();
            // An interrupt executor's task is woken by a request of its source (its
            // executor's line pended, as its waker does).
            let action = if crate::executor::ExecutorCore::of(header.executor.get()).is_interrupt()
            {
                TimerAction::Request(header.source.get())
            } else {
                TimerAction::Wake(g)
            };
            clock::set_timer(g, at, action);
        }
    }
}

embassy_time_driver::time_driver_impl!(static DRIVER: VirtualTime = VirtualTime);
