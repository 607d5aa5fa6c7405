//! Spawning with arguments, across three priorities. A reading enters at priority 1, is
//! scaled at priority 2 and filed at priority 3; each stage spawns the next with what it
//! computed, and the last checks that the arguments arrived intact: `stage2` and `stage3`
//! run before the spawner goes on (they are more urgent), so the order of the filed
//! values is the order of the readings.

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965, dispatchers = [SSI0, QEI0, UART1])]
mod app {
    use cortex_m_semihosting::hprintln;

    #[shared]
    struct Shared {
        filed: [u32; 4],
        count: usize,
    }

    #[local]
    struct Local {}

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        stage1::spawn(7).unwrap();
        (
            Shared {
                filed: [0; 4],
                count: 0,
            },
            Local {},
        )
    }

    #[task(priority = 1, shared = [filed, count])]
    async fn stage1(mut cx: stage1::Context, base: u32) {
        for i in 0..4 {
            stage2::spawn(base + i, i as u8).unwrap();
        }
        let filed = cx.shared.filed.lock(|f| *f);
        let count = cx.shared.count.lock(|c| *c);
        hprintln!("filed {:?}", filed);
        assert_eq!(count, 4);
        assert_eq!(filed, [70, 80, 90, 100]);
    }

    #[task(priority = 2)]
    async fn stage2(_: stage2::Context, reading: u32, slot: u8) {
        stage3::spawn(reading * 10, slot).unwrap();
    }

    #[task(priority = 3, shared = [filed, count])]
    async fn stage3(mut cx: stage3::Context, value: u32, slot: u8) {
        cx.shared.filed.lock(|f| f[slot as usize] = value);
        cx.shared.count.lock(|c| *c += 1);
    }
}
