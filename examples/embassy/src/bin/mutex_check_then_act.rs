//! BUG: a check-then-act across an `.await` on an async `Mutex`. Two card payments each
//! check the balance under the lock, release it while the bank authorises the payment
//! (an await), then take the lock again to debit: in between, the other payment debits
//! too, and the account is overdrawn. The fix: check and debit under one guard, holding
//! it across the authorisation.
#![no_std]
#![no_main]

use embassy_executor::Spawner;
use embassy_sync::blocking_mutex::raw::ThreadModeRawMutex;
use embassy_sync::mutex::Mutex;
use embassy_time::Timer;

static BALANCE: Mutex<ThreadModeRawMutex, u32> = Mutex::new(100);

#[embassy_executor::task(pool_size = 2)]
async fn payment(amount: u32) {
    let enough = *BALANCE.lock().await >= amount;
    if enough {
        // The bank authorises the payment.
        Timer::after_millis(3).await;
        let mut balance = BALANCE.lock().await;
        assert!(
            *balance >= amount,
            "overdrawn: {} left, {amount} debited",
            *balance
        );
        *balance -= amount;
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    spawner.spawn(payment(60).unwrap());
    spawner.spawn(payment(70).unwrap());
}
