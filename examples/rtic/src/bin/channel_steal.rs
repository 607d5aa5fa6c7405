//! BUG, in rtic-sync (rtic-rs/rtic#780, fixed in rtic-sync 1.3.2 by PR #1034): this project
//! pins rtic-sync 1.3.0, the last release before the fix
//! (`cargo update -p rtic-sync --precise 1.3.0`).
//!
//! A log channel of one slot: `status` (priority 1) sends with `send().await`, which waits
//! while the channel is full; `logger` (priority 1) receives; a fault interrupt (`GPIOB`,
//! priority 3) reports with `try_send`, dropping the report when the channel is full. When
//! the logger frees the slot it wakes the waiting `send`, but before that sender runs again
//! the fault handler's `try_send` takes the slot: the woken `send` then finds no free slot
//! and rtic-sync's own assertion fails, `!self.0.access(cs).freeq.is_empty()`, as in the
//! issue's report. With rtic-sync 1.3.2 or later the app runs clean.

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965, dispatchers = [SSI0])]
mod app {
    use cortex_m_semihosting::hprintln;
    use rtic_sync::channel::{Receiver, Sender};
    use rtic_sync::make_channel;

    #[shared]
    struct Shared {}

    #[local]
    struct Local {
        faults: Sender<'static, u32, 1>,
    }

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        let (tx, rx) = make_channel!(u32, 1);
        let faults = tx.clone();
        status::spawn(tx).unwrap();
        logger::spawn(rx).unwrap();
        (Shared {}, Local { faults })
    }

    #[task(priority = 1)]
    async fn status(_: status::Context, mut log: Sender<'static, u32, 1>) {
        for code in 1..=3 {
            log.send(code).await.unwrap();
        }
    }

    #[task(priority = 1)]
    async fn logger(_: logger::Context, mut log: Receiver<'static, u32, 1>) {
        while let Ok(code) = log.recv().await {
            hprintln!("log: {}", code);
        }
    }

    #[task(binds = GPIOB, priority = 3, local = [faults])]
    fn fault(cx: fault::Context) {
        cx.local.faults.try_send(100).ok();
    }
}
