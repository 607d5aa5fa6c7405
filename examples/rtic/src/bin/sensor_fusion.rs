//! A consistent snapshot of two resources. Two sensors' interrupts update their readings at
//! different priorities (`accel` on `GPIOC` at 3, `gyro` on `GPIOD` at 2), each reading
//! with the sequence number of its sample; `fuse` (priority 1) locks both at once and takes
//! a snapshot in which neither changes while it reads. Each reading is written whole under
//! its lock, so a snapshot never shows a torn reading.

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965, dispatchers = [SSI0])]
mod app {
    use cortex_m_semihosting::hprintln;
    use lm3s6965::Interrupt;

    #[derive(Clone, Copy)]
    pub struct Reading {
        seq: u32,
        value: i32,
        check: i32,
    }

    impl Reading {
        fn new(seq: u32, value: i32) -> Self {
            Reading {
                seq,
                value,
                check: value ^ seq as i32,
            }
        }

        fn intact(&self) -> bool {
            self.check == self.value ^ self.seq as i32
        }
    }

    #[shared]
    struct Shared {
        accel: Reading,
        gyro: Reading,
    }

    #[local]
    struct Local {}

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        fuse::spawn().unwrap();
        rtic::pend(Interrupt::GPIOC);
        rtic::pend(Interrupt::GPIOD);
        (
            Shared {
                accel: Reading::new(0, 0),
                gyro: Reading::new(0, 0),
            },
            Local {},
        )
    }

    #[task(binds = GPIOC, priority = 3, shared = [accel])]
    fn accel(mut cx: accel::Context) {
        cx.shared
            .accel
            .lock(|a| *a = Reading::new(a.seq + 1, -(a.seq as i32) * 3));
    }

    #[task(binds = GPIOD, priority = 2, shared = [gyro])]
    fn gyro(mut cx: gyro::Context) {
        cx.shared
            .gyro
            .lock(|g| *g = Reading::new(g.seq + 1, g.seq as i32 * 7));
    }

    #[task(priority = 1, shared = [accel, gyro])]
    async fn fuse(cx: fuse::Context) {
        let (a, g) = (cx.shared.accel, cx.shared.gyro).lock(|a, g| (*a, *g));
        assert!(a.intact() && g.intact());
        hprintln!("fused accel #{} and gyro #{}", a.seq, g.seq);
    }
}
