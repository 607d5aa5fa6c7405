//! Message passing over rtic-sync channels: a three-stage pipeline. `source` (priority 1)
//! sends the readings 1..=6 into a channel of two slots, `scale` (priority 2) multiplies each
//! by ten and sends it on, `sink` (priority 1) receives and checks that every value arrives
//! once and in order. Each channel has one sender and one receiver; a full channel makes
//! its sender wait, an empty one its receiver.

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965, dispatchers = [SSI0, QEI0])]
mod app {
    use cortex_m_semihosting::hprintln;
    use rtic_sync::channel::{Receiver, Sender};
    use rtic_sync::make_channel;

    const CAPACITY: usize = 2;

    #[shared]
    struct Shared {}

    #[local]
    struct Local {}

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        let (raw_tx, raw_rx) = make_channel!(u32, CAPACITY);
        let (scaled_tx, scaled_rx) = make_channel!(u32, CAPACITY);
        source::spawn(raw_tx).unwrap();
        scale::spawn(raw_rx, scaled_tx).unwrap();
        sink::spawn(scaled_rx).unwrap();
        (Shared {}, Local {})
    }

    #[task(priority = 1)]
    async fn source(_: source::Context, mut tx: Sender<'static, u32, CAPACITY>) {
        for reading in 1..=6 {
            tx.send(reading).await.unwrap();
        }
    }

    #[task(priority = 2)]
    async fn scale(
        _: scale::Context,
        mut rx: Receiver<'static, u32, CAPACITY>,
        mut tx: Sender<'static, u32, CAPACITY>,
    ) {
        while let Ok(reading) = rx.recv().await {
            tx.send(reading * 10).await.unwrap();
        }
    }

    #[task(priority = 1)]
    async fn sink(_: sink::Context, mut rx: Receiver<'static, u32, CAPACITY>) {
        for expected in 1..=6 {
            let value = rx.recv().await.unwrap();
            assert_eq!(value, expected * 10);
        }
        hprintln!("sink: all six arrived in order");
    }
}
