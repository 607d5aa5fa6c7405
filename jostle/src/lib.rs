#![doc = include_str!("../README.md")]
#![cfg_attr(target_os = "none", no_std)]
#![warn(missing_docs)]

pub use jostle_kernel::*;

/// Picks the board crate of the one board feature enabled (as `__board`), and refuses a
/// firmware build with none or with several.
macro_rules! boards {
    ($($feature:literal => $board:ident,)*) => {
        $(
            #[cfg(all(target_os = "none", feature = $feature))]
            #[doc(hidden)]
            pub use $board as __board;
        )*

        #[cfg(all(target_os = "none", not(any($(feature = $feature),*))))]
        compile_error!(concat!(
            "choose a board feature (--no-default-features --features BOARD), one of:"
            $(, " ", $feature)*
        ));

        #[cfg(target_os = "none")]
        const _: () = assert!(
            0 $(+ cfg!(feature = $feature) as usize)* <= 1,
            concat!("choose exactly one board feature, one of:" $(, " ", $feature)*)
        );
    };
}

boards! {
    "mps2-an385" => jostle_board_mps2_an385,
    "mps2-an386" => jostle_board_mps2_an386,
    "mps2-an500" => jostle_board_mps2_an500,
    "mps2-an505" => jostle_board_mps2_an505,
    "microbit" => jostle_board_microbit,
    "lm3s6965evb" => jostle_board_lm3s6965evb,
    "nrf52840" => jostle_board_nrf52840,
    "stm32f411" => jostle_board_stm32f411,
    "rp2040" => jostle_board_rp2040,
    "rp2350" => jostle_board_rp2350,
}

/// Defines the program's entry: `firmware!(main_task)` runs `main_task` as task 0, on the
/// board under `target_os = "none"` and on the host port otherwise;
/// `firmware!(main_task, interrupts: [UART, TIMER])` declares the firmware's interrupt
/// sources (`static UART: Interrupt = Interrupt::requested(..)`), whose handlers the
/// scheduler fires. Task 0's stack is [`MAIN_STACK_BYTES`] (the board's) unless the firmware
/// gives its size first: `firmware!(main_task, main_stack: 2048)`,
/// `firmware!(main_task, main_stack: 2048, interrupts: [UART])`.
#[macro_export]
macro_rules! firmware {
    ($main:path) => {
        $crate::firmware!($main, interrupts: []);
    };
    ($main:path, main_stack: $bytes:expr) => {
        $crate::firmware!($main, main_stack: $bytes, interrupts: []);
    };
    ($main:path, interrupts: [$($irq:path),* $(,)?]) => {
        $crate::firmware!($main, main_stack: $crate::MAIN_STACK_BYTES, interrupts: [$($irq),*]);
    };
    ($main:path, main_stack: $bytes:expr, interrupts: [$($irq:path),* $(,)?]) => {
        #[cfg(target_os = "none")]
        $crate::__board::entry!($main, main_stack: $bytes, interrupts: [$($irq),*]);

        #[cfg(not(target_os = "none"))]
        fn main() {
            static IRQS: &[&$crate::Interrupt] = &[$(&$irq),*];
            // The host port gives every task a coroutine stack of its own size.
            let _ = $bytes;
            $crate::port::run_with_interrupts($main, IRQS)
        }
    };
}

/// Bytes of task 0's stack (the [`firmware!`] main's) on the board built for, unless the
/// firmware gives `main_stack`: 8 KiB where RAM is plenty, less on small boards (the
/// micro:bit's 16 KiB). The host port ignores it.
#[cfg(target_os = "none")]
pub const MAIN_STACK_BYTES: usize = __board::MAIN_STACK_BYTES;
/// Bytes of task 0's stack on the board built for (the host port ignores it).
#[cfg(not(target_os = "none"))]
pub const MAIN_STACK_BYTES: usize = 8192;

/// Bytes that fit a spawned task's stack on the board built for, for firmware that does not
/// need more (`static STACK: Stack<TASK_STACK_BYTES> = Stack::new();`, as `jostle new`'s
/// program writes): 4 KiB where RAM is plenty, less on small boards. The host port gives
/// every task a coroutine stack of its own size.
#[cfg(target_os = "none")]
pub const TASK_STACK_BYTES: usize = __board::TASK_STACK_BYTES;
/// Bytes that fit a spawned task's stack (the host port ignores the size).
#[cfg(not(target_os = "none"))]
pub const TASK_STACK_BYTES: usize = 4096;

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
