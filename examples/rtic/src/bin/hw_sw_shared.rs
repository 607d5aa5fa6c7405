//! A hardware task and a software task sharing a resource. `UART0`'s handler stands for a
//! receiver: each firing (whenever the peripheral has a byte: spontaneously, or when `init`
//! pends it) adds a byte to a small FIFO resource and spawns the software task `drain`,
//! which empties the FIFO under the lock. Both take the lock for every access, so the
//! handler can fire anywhere and no byte is lost or counted twice.

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965, dispatchers = [SSI0])]
mod app {
    use cortex_m_semihosting::hprintln;
    use lm3s6965::Interrupt;

    pub struct Fifo {
        bytes: [u8; 8],
        len: usize,
        received: u32,
    }

    #[shared]
    struct Shared {
        fifo: Fifo,
    }

    #[local]
    struct Local {
        drained: u32,
    }

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        rtic::pend(Interrupt::UART0);
        (
            Shared {
                fifo: Fifo {
                    bytes: [0; 8],
                    len: 0,
                    received: 0,
                },
            },
            Local { drained: 0 },
        )
    }

    #[task(binds = UART0, priority = 2, shared = [fifo])]
    fn uart0(mut cx: uart0::Context) {
        cx.shared.fifo.lock(|fifo| {
            fifo.received += 1;
            let byte = fifo.received as u8;
            if fifo.len < fifo.bytes.len() {
                fifo.bytes[fifo.len] = byte;
                fifo.len += 1;
            }
        });
        // Already spawned: the running `drain` takes this byte too.
        let _ = drain::spawn();
    }

    #[task(priority = 1, shared = [fifo], local = [drained])]
    async fn drain(mut cx: drain::Context) {
        loop {
            let taken = cx.shared.fifo.lock(|fifo| {
                let n = fifo.len;
                fifo.len = 0;
                n
            });
            if taken == 0 {
                break;
            }
            *cx.local.drained += taken as u32;
        }
        let received = cx.shared.fifo.lock(|fifo| fifo.received);
        hprintln!("drained {} of {}", cx.local.drained, received);
        assert!(*cx.local.drained <= received);
    }
}
