//! Nested locks with priority ceilings. Two accounts hold 100 units between them; three
//! tasks move units around:
//!
//! - `low` (priority 1) locks `left`, then, inside, `right` (ceilings 2 then 3: first `mid`,
//!   then `high` too are kept out), and moves one unit from left to right;
//! - `mid` (priority 2) locks both at once and moves one back;
//! - `high` (priority 3, the `GPIOA` interrupt) locks only `right` and checks it never holds
//!   more than there is.
//!
//! Every transfer happens inside the locks of both accounts, so whatever preempts whom,
//! the total stays 100: a clean app.

#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965, dispatchers = [SSI0, QEI0])]
mod app {
    use cortex_m_semihosting::hprintln;
    use lm3s6965::Interrupt;

    #[shared]
    struct Shared {
        left: u32,
        right: u32,
    }

    #[local]
    struct Local {}

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        low::spawn().unwrap();
        mid::spawn().unwrap();
        (
            Shared {
                left: 60,
                right: 40,
            },
            Local {},
        )
    }

    #[task(priority = 1, shared = [left, right])]
    async fn low(mut cx: low::Context) {
        for _ in 0..3 {
            cx.shared.left.lock(|left| {
                cx.shared.right.lock(|right| {
                    *left -= 1;
                    *right += 1;
                });
            });
            rtic::pend(Interrupt::GPIOA);
        }
        let (l, r) = (cx.shared.left, cx.shared.right).lock(|l, r| (*l, *r));
        hprintln!("low: left {} right {}", l, r);
        assert_eq!(l + r, 100);
    }

    #[task(priority = 2, shared = [left, right])]
    async fn mid(cx: mid::Context) {
        (cx.shared.left, cx.shared.right).lock(|left, right| {
            assert_eq!(*left + *right, 100);
            *right -= 1;
            *left += 1;
        });
    }

    #[task(binds = GPIOA, priority = 3, shared = [right])]
    fn high(mut cx: high::Context) {
        let right = cx.shared.right.lock(|right| *right);
        assert!(right <= 100);
    }
}
