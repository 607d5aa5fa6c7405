//! A monotonic delay and a timeout, on rtic-monotonics' SysTick monotonic. `heartbeat`
//! beats three times, 10 ms apart (`Mono::delay_until`, so the beats do not drift);
//! `client` sends a request over a channel and waits for the reply with
//! `Mono::timeout_after(50 ms, ..)`; `server` answers after 20 ms, well within it. Under
//! Jostle the clock is virtual: it moves only when nothing else can happen, so the
//! campaign never waits wall time, and the timeout fires only if the reply really could
//! not come first.

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965, dispatchers = [SSI0, QEI0])]
mod app {
    use cortex_m_semihosting::hprintln;
    use rtic_monotonics::systick::prelude::*;
    use rtic_sync::channel::{Receiver, Sender};
    use rtic_sync::make_channel;

    systick_monotonic!(Mono, 1_000);

    #[shared]
    struct Shared {}

    #[local]
    struct Local {}

    #[init]
    fn init(cx: init::Context) -> (Shared, Local) {
        Mono::start(cx.core.SYST, 12_000_000);
        let (request_tx, request_rx) = make_channel!(u32, 1);
        let (reply_tx, reply_rx) = make_channel!(u32, 1);
        heartbeat::spawn().unwrap();
        client::spawn(request_tx, reply_rx).unwrap();
        server::spawn(request_rx, reply_tx).unwrap();
        (Shared {}, Local {})
    }

    #[task(priority = 1)]
    async fn heartbeat(_: heartbeat::Context) {
        let start = Mono::now();
        let mut next = start;
        for beat in 1..=3 {
            next += 10.millis();
            Mono::delay_until(next).await;
            let late = Mono::now() - next;
            assert!(late.to_millis() < 1, "beat {} is late", beat);
        }
        hprintln!(
            "heartbeat: 3 beats in {} ms",
            (Mono::now() - start).to_millis()
        );
    }

    #[task(priority = 2)]
    async fn client(
        _: client::Context,
        mut requests: Sender<'static, u32, 1>,
        mut replies: Receiver<'static, u32, 1>,
    ) {
        requests.send(21).await.unwrap();
        match Mono::timeout_after(50.millis(), replies.recv()).await {
            Ok(Ok(answer)) => assert_eq!(answer, 42),
            _ => panic!("no reply within 50 ms"),
        }
    }

    #[task(priority = 1)]
    async fn server(
        _: server::Context,
        mut requests: Receiver<'static, u32, 1>,
        mut replies: Sender<'static, u32, 1>,
    ) {
        let question = requests.recv().await.unwrap();
        Mono::delay(20.millis()).await;
        replies.send(question * 2).await.unwrap();
    }
}
