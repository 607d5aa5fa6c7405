//! racebench 2.1 svp_simple_009: `p` and `q` both point at main's `local_var1`; isr_1 reads
//! through `p` between main's stores through `p` and through `q` (bug 1, W-R-W). The false
//! alarm: isr_1 re-points `m` at its own local before reading through it.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_racebench::{Isrs, idlerun, isr};

/// main's `local_var1` and `local_var2`, whose addresses escape into `p`, `q` and `m`.
static LOCAL_VAR1: Shared<i32> = Shared::new(0x01);
static LOCAL_VAR2: Shared<i32> = Shared::new(0x09);
/// isr_1's `local_var3`: a static, so that main's store through a re-pointed `m` is defined
/// (in the C it lands in a dead stack slot).
static LOCAL_VAR3: Shared<i32> = Shared::new(0);
/// Stands for the null address that `p`, `q` and `m` hold until main sets them: an isr_1
/// before that reads this cell instead of faulting.
static UNSET: Shared<i32> = Shared::new(0);

static P: Shared<&'static Shared<i32>> = Shared::new(&UNSET);
static Q: Shared<&'static Shared<i32>> = Shared::new(&UNSET);
static M: Shared<&'static Shared<i32>> = Shared::new(&UNSET);

static ISR_1: Interrupt = isr(1, isr_1);
static ISRS: Isrs = Isrs(&[&ISR_1]);

fn main_task() {
    ISRS.init();
    P.write(&LOCAL_VAR1); // @L29
    Q.write(&LOCAL_VAR1); // @L30
    P.read().write(0x02); // @L32
    Q.read().write(0x03); // @L33
    M.write(&LOCAL_VAR2); // @L35
    M.read().write(0x06); // @L37
    M.read().write(0x06); // @L38
}

fn isr_1() {
    idlerun();
    let _reader1 = P.read().read(); // @L44
    LOCAL_VAR3.write(0x08); // @L45
    M.write(&LOCAL_VAR3); // @L46
    let _reader2 = M.read().read(); // @L47
}

firmware!(main_task, interrupts: [ISR_1]);
