// The application, shared by its two binaries (`include!`d: each brings its own panic
// handler).

use cortex_m_semihosting::{debug, hprintln};
use jostle_kernel::{Shared, Stack};

// The application's framework (a shim would say `rtic` or `embassy`): it ends runs itself.
jostle_kernel::board_descriptor!(framework = "test");

static COUNT: Shared<u32> = Shared::new(0);
static STACK: Stack<4096> = Stack::new();

fn worker() {
    COUNT.update(|v| v + 1);
}

fn main_task() {
    let t = jostle_kernel::spawn(&STACK, worker);
    COUNT.update(|v| v + 1);
    t.join();
    hprintln!("the app says: count = {}", COUNT.read());
    match jostle_kernel::arg_or(0, 0) {
        1 => debug::exit(debug::EXIT_SUCCESS),
        2 => debug::exit(debug::EXIT_FAILURE),
        3 => panic!("the app gave up at count {}", COUNT.read()),
        _ => {}
    }
}

jostle_board_mps2_an385::entry!(main_task);
