//! `#[idle]` as a worker: the lowest-priority context runs whenever no task does, here
//! summing the samples an interrupt (`ADC0_SEQUENCE_0`, priority 1) deposits in a shared buffer,
//! under the buffer's lock. After three samples it reports and ends the program through
//! semihosting, as RTIC's book's examples do.

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965)]
mod app {
    use cortex_m_semihosting::{debug, hprintln};
    use lm3s6965::Interrupt;

    pub struct Samples {
        pending: [u16; 4],
        len: usize,
        taken: u32,
    }

    #[shared]
    struct Shared {
        samples: Samples,
    }

    #[local]
    struct Local {}

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        rtic::pend(Interrupt::ADC0_SEQUENCE_0);
        (
            Shared {
                samples: Samples {
                    pending: [0; 4],
                    len: 0,
                    taken: 0,
                },
            },
            Local {},
        )
    }

    #[idle(shared = [samples])]
    fn idle(mut cx: idle::Context) -> ! {
        let mut sum = 0u32;
        let mut count = 0u32;
        while count < 3 {
            let (taken, got) = cx.shared.samples.lock(|s| {
                let got = s.pending[..s.len]
                    .iter()
                    .map(|&v| u32::from(v))
                    .sum::<u32>();
                let n = s.len as u32;
                s.len = 0;
                s.taken += n;
                (n, got)
            });
            count += taken;
            sum += got;
            if taken == 0 {
                // Nothing yet: ask the converter for another sample.
                rtic::pend(Interrupt::ADC0_SEQUENCE_0);
            }
        }
        hprintln!("idle: {} samples, sum {}", count, sum);
        assert_eq!(sum, 10 * count * (count + 1) / 2);
        debug::exit(debug::EXIT_SUCCESS);
        loop {
            cortex_m::asm::nop();
        }
    }

    #[task(binds = ADC0_SEQUENCE_0, priority = 1, shared = [samples])]
    fn adc(mut cx: adc::Context) {
        cx.shared.samples.lock(|s| {
            if s.len < s.pending.len() {
                let seq = s.taken + s.len as u32 + 1;
                s.pending[s.len] = (seq * 10) as u16;
                s.len += 1;
            }
        });
    }
}
