//! Local resources: state only one task touches needs no lock and lives across its runs.
//! A button's interrupt (`GPIOB`) debounces a bouncing contact with a counter declared on
//! the task (`local = [stable: u8 = 0]`): each bounce pends the line again, and the third
//! edge in a row counts as a press, sent through a channel whose sender `init` moved into
//! the task's `#[local]` resources; `presses` receives them in order.

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965, dispatchers = [SSI0])]
mod app {
    use cortex_m_semihosting::hprintln;
    use lm3s6965::Interrupt;
    use rtic_sync::channel::{Receiver, Sender};
    use rtic_sync::make_channel;

    #[shared]
    struct Shared {}

    #[local]
    struct Local {
        press_tx: Sender<'static, u32, 4>,
    }

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        let (press_tx, press_rx) = make_channel!(u32, 4);
        presses::spawn(press_rx).unwrap();
        rtic::pend(Interrupt::GPIOB);
        (Shared {}, Local { press_tx })
    }

    #[task(binds = GPIOB, priority = 2, local = [press_tx, stable: u8 = 0, count: u32 = 0])]
    fn button(cx: button::Context) {
        *cx.local.stable += 1;
        if *cx.local.stable < 3 {
            // The contact still bounces: another edge follows.
            rtic::pend(Interrupt::GPIOB);
        } else {
            *cx.local.stable = 0;
            *cx.local.count += 1;
            cx.local.press_tx.try_send(*cx.local.count).ok();
        }
    }

    #[task(priority = 1)]
    async fn presses(_: presses::Context, mut rx: Receiver<'static, u32, 4>) {
        let mut last = 0;
        while let Ok(n) = rx.recv().await {
            assert_eq!(n, last + 1, "presses arrive in order");
            last = n;
            hprintln!("press {}", n);
        }
    }
}
