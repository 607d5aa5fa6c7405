#![doc = include_str!("../README.md")]
#![cfg_attr(target_os = "none", no_std)]
#![warn(missing_docs)]

pub use jostle_kernel::*;

#[cfg(all(target_os = "none", feature = "mps2-an385"))]
#[doc(hidden)]
pub use jostle_board_mps2_an385 as __board;
#[cfg(all(target_os = "none", feature = "nrf52840"))]
#[doc(hidden)]
pub use jostle_board_nrf52840 as __board;
#[cfg(all(target_os = "none", feature = "rp2040"))]
#[doc(hidden)]
pub use jostle_board_rp2040 as __board;
#[cfg(all(target_os = "none", feature = "stm32f411"))]
#[doc(hidden)]
pub use jostle_board_stm32f411 as __board;

#[cfg(all(
    target_os = "none",
    not(any(
        all(
            feature = "mps2-an385",
            not(any(feature = "nrf52840", feature = "stm32f411", feature = "rp2040"))
        ),
        all(
            feature = "nrf52840",
            not(any(feature = "mps2-an385", feature = "stm32f411", feature = "rp2040"))
        ),
        all(
            feature = "stm32f411",
            not(any(feature = "mps2-an385", feature = "nrf52840", feature = "rp2040"))
        ),
        all(
            feature = "rp2040",
            not(any(feature = "mps2-an385", feature = "nrf52840", feature = "stm32f411"))
        ),
    ))
))]
compile_error!(
    "choose exactly one board feature: mps2-an385 (default), nrf52840, stm32f411, rp2040 \
     (e.g. --no-default-features --features nrf52840)"
);

/// Defines the program's entry: `firmware!(main_task)` runs `main_task` as task 0, on the
/// board under `target_os = "none"` and on the host port otherwise;
/// `firmware!(main_task, interrupts: [UART, TIMER])` declares the firmware's interrupt
/// sources (`static UART: Interrupt = Interrupt::requested(..)`), whose handlers the
/// scheduler fires.
#[macro_export]
macro_rules! firmware {
    ($main:path) => {
        $crate::firmware!($main, interrupts: []);
    };
    ($main:path, interrupts: [$($irq:path),* $(,)?]) => {
        #[cfg(target_os = "none")]
        $crate::__board::entry!($main, interrupts: [$($irq),*]);

        #[cfg(not(target_os = "none"))]
        fn main() {
            static IRQS: &[&$crate::Interrupt] = &[$(&$irq),*];
            $crate::port::run_with_interrupts($main, IRQS)
        }
    };
}

/// Declares several concurrency tests in one firmware, each a main task with options of its
/// own, for `cargo test` (the runner `jostle campaign` runs each as a campaign and prints
/// libtest's lines):
///
/// ```ignore
/// jostle::tests! {
///     interrupts: [UART];            // optional: the firmware's interrupt sources
///     fn counter_is_exact() { /* main task */ }
///     #[should_find]                 // passes only if the campaign finds a bug
///     #[budget = 300]                // runs of its campaign
///     fn lost_update() { /* main task */ }
/// }
/// ```
///
/// Attributes are the calls of [`test_table::TestOptions`] (`#[step_limit = 500]` too); doc
/// comments are allowed. The records go to the ELF section `.jostle_tests`; each run's
/// configuration block says which test runs ([`selected_test`]).
#[macro_export]
macro_rules! tests {
    (interrupts: [$($irq:path),* $(,)?]; $($rest:tt)+) => {
        $crate::tests!(@tests [$($irq),*] $($rest)+);
    };
    (@tests [$($irq:path),*] $( $(#[$opt:ident $(= $val:expr)?])* fn $name:ident () $body:block )+) => {
        $( fn $name() $body )+

        #[doc(hidden)]
        const __JOSTLE_TEST_COUNT: usize = [$(stringify!($name)),+].len();

        #[doc(hidden)]
        #[used]
        #[unsafe(link_section = ".jostle_tests")]
        static __JOSTLE_TESTS: [$crate::test_table::TestRecord; __JOSTLE_TEST_COUNT] =
            $crate::test_table::TestRecord::table([
                $( (stringify!($name), $crate::test_table::TestOptions::new()$(.$opt($($val)?))*) ),+
            ]);

        /// Runs the test the configuration block selects.
        fn __jostle_selected_test() {
            let tests: [fn(); __JOSTLE_TEST_COUNT] = [$($name),+];
            let selected = $crate::selected_test() as usize;
            match tests.get(selected) {
                Some(test) => test(),
                None => panic!("no declared test {}", selected),
            }
        }

        $crate::firmware!(__jostle_selected_test, interrupts: [$($irq),*]);
    };
    ($($rest:tt)+) => {
        $crate::tests!(@tests [] $($rest)+);
    };
}

/// `n` scheduling points on a variable no other task touches (the papers' `f1(); f2(); …`).
#[track_caller]
pub fn filler(own: &Shared<u32>, n: u32) {
    for _ in 0..n {
        own.update(|v| v.wrapping_add(1));
    }
}
