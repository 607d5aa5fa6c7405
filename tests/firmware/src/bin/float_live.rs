//! Float values live across scheduling points, in tasks and in interrupt handlers: every
//! result must be exact, bit for bit the same as the same computation made without any
//! scheduling point, on every core (soft-float on the M0 and M3, the FPU's registers on the
//! M4F, M7 and M33) and on the host port. Any difference panics.
//!
//! - Two spawned tasks and the main task run [`workload`], a dozen `f32` and four `f64`
//!   accumulators live across a scheduling point per round (where another task may run, or a
//!   handler fire).
//! - Two interrupt sources, the more urgent nesting in the other at its scheduling point, run
//!   the workload too.
//! - With an FPU: each task and handler holds a pattern of its own in s16–s31 across a
//!   scheduling point (the callee-saved float registers the context switch must keep), and
//!   each spawned task runs with a rounding mode and flush-to-zero setting of its own in
//!   FPSCR (which the switch must keep per task, and a handler's floating-point context must
//!   not see or change).
//!
//! `--arg 0`: rounds of the workload per task (default 6).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

static PROGRESS: Shared<u32> = Shared::new(0);
static A_STACK: Stack<2048> = Stack::new();
static B_STACK: Stack<2048> = Stack::new();

/// The less urgent source (priority 2) and the more urgent one, which may fire at the first's
/// scheduling points.
static TICK: Interrupt = Interrupt::spontaneous(3, 2, 3, tick);
static BURST: Interrupt = Interrupt::spontaneous(4, 1, 3, burst);

/// `rounds` rounds of float arithmetic, `point` between rounds; the bits of every
/// accumulator, folded.
#[inline(never)]
fn workload(seed: f32, rounds: u32, point: &dyn Fn()) -> u64 {
    let mut a = [0f32; 12];
    for (i, v) in a.iter_mut().enumerate() {
        *v = seed * (i as f32 + 1.5);
    }
    let mut d = [f64::from(seed); 4];
    for r in 0..rounds {
        let x = r as f32 + 0.25;
        for (i, v) in a.iter_mut().enumerate() {
            *v = *v * 1.000_123 + x / (i as f32 + 3.0);
        }
        for (j, w) in d.iter_mut().enumerate() {
            *w = *w * 0.999_87 + f64::from(a[j * 3]) / 7.0;
        }
        point();
    }
    let mut digest = 0u64;
    for v in a {
        digest = digest.rotate_left(7) ^ u64::from(v.to_bits());
    }
    for w in d {
        digest = digest.rotate_left(13) ^ w.to_bits();
    }
    digest
}

/// The workload with a scheduling point per round, checked against the same without any.
#[track_caller]
fn checked_workload(seed: f32, rounds: u32) {
    let reference = workload(seed, rounds, &|| {});
    let live = workload(seed, rounds, &|| {
        PROGRESS.update(|p| p + 1);
    });
    assert_eq!(
        live, reference,
        "float results changed across scheduling points"
    );
}

fn tick() {
    checked_workload(0.75, 2);
    fpu::callee_saved_survive(0x71C4);
}

fn burst() {
    checked_workload(-3.5, 2);
    fpu::callee_saved_survive(0xB0B5);
}

fn task_a() {
    fpu::with_own_fpscr(fpu::ROUND_UP_FLUSH, || {
        fpu::callee_saved_survive(0xA);
    });
    checked_workload(1.25, arg_or(0, 6));
}

fn task_b() {
    fpu::with_own_fpscr(fpu::ROUND_TO_ZERO_DEFAULT_NAN, || {
        fpu::callee_saved_survive(0xB);
    });
    checked_workload(2.5e-3, arg_or(0, 6));
}

fn main_task() {
    TICK.enable();
    BURST.enable();
    let a = spawn(&A_STACK, task_a);
    let b = spawn(&B_STACK, task_b);
    checked_workload(-17.0, arg_or(0, 6));
    fpu::callee_saved_survive(0x0);
    a.join();
    b.join();
}

firmware!(main_task, interrupts: [TICK, BURST]);

/// What only a core with an FPU has to keep: s16–s31 and FPSCR. Elsewhere these run their
/// closure and check nothing (the soft-float workload above is all there is to keep).
#[cfg(all(target_arch = "arm", target_abi = "eabihf"))]
mod fpu {
    use super::PROGRESS;

    /// FPSCR's control bits: AHP, DN, FZ and RMode.
    const CONTROL: u32 = 0x07C0_0000;
    /// Round towards plus infinity, flush-to-zero.
    pub const ROUND_UP_FLUSH: u32 = (1 << 22) | (1 << 24);
    /// Round towards zero, default NaN.
    pub const ROUND_TO_ZERO_DEFAULT_NAN: u32 = (3 << 22) | (1 << 25);

    fn fpscr() -> u32 {
        let v: u32;
        // SAFETY: reads a status register.
        unsafe { core::arch::asm!("vmrs {}, fpscr", out(reg) v) };
        v
    }

    fn set_fpscr(v: u32) {
        // SAFETY: only the control bits change, and no float arithmetic runs under them
        // (the caller makes scheduling points only).
        unsafe { core::arch::asm!("vmsr fpscr, {}", in(reg) v) };
    }

    /// Runs `f` (scheduling points only, no float arithmetic) with FPSCR's control bits set to
    /// `mode`, and checks after each of several scheduling points that they still are.
    pub fn with_own_fpscr(mode: u32, f: impl FnOnce()) {
        let was = fpscr();
        set_fpscr((was & !CONTROL) | mode);
        f();
        for _ in 0..3 {
            PROGRESS.update(|p| p + 1);
            let now = fpscr() & CONTROL;
            assert_eq!(
                now, mode,
                "a task's FPSCR changed across a scheduling point"
            );
        }
        set_fpscr(was);
    }

    /// A scheduling point, called from assembly.
    extern "C" fn point() {
        PROGRESS.update(|p| p + 1);
    }

    /// Loads a pattern made from `tag` into s16–s31, makes a scheduling point (another task
    /// may run and fill them with its own, a handler may fire), and checks that they hold it.
    pub fn callee_saved_survive(tag: u32) {
        let pattern: [u32; 16] =
            core::array::from_fn(|i| tag.wrapping_mul(0x9E37_79B9) ^ (i as u32) << 24 ^ 0x3F80);
        let mut back = [0u32; 16];
        // SAFETY: r4 and r5 are callee-saved (they survive the call); s16–s31 are declared
        // clobbered, and so is what the C ABI lets a call clobber (named one by one:
        // `clobber_abi("C")` would name d16–d31, which a D16 FPU does not have).
        unsafe {
            core::arch::asm!(
                "vldmia r4, {{s16-s31}}",
                "bl {point}",
                "vstmia r5, {{s16-s31}}",
                point = sym point,
                in("r4") pattern.as_ptr(),
                in("r5") back.as_mut_ptr(),
                out("s16") _, out("s17") _, out("s18") _, out("s19") _,
                out("s20") _, out("s21") _, out("s22") _, out("s23") _,
                out("s24") _, out("s25") _, out("s26") _, out("s27") _,
                out("s28") _, out("s29") _, out("s30") _, out("s31") _,
                out("r0") _, out("r1") _, out("r2") _, out("r3") _, out("r12") _, out("lr") _,
                out("s0") _, out("s1") _, out("s2") _, out("s3") _,
                out("s4") _, out("s5") _, out("s6") _, out("s7") _,
                out("s8") _, out("s9") _, out("s10") _, out("s11") _,
                out("s12") _, out("s13") _, out("s14") _, out("s15") _,
            );
        }
        assert_eq!(back, pattern, "s16-s31 changed across a scheduling point");
    }
}

#[cfg(not(all(target_arch = "arm", target_abi = "eabihf")))]
mod fpu {
    pub const ROUND_UP_FLUSH: u32 = 0;
    pub const ROUND_TO_ZERO_DEFAULT_NAN: u32 = 0;

    pub fn with_own_fpscr(_mode: u32, f: impl FnOnce()) {
        f();
    }

    pub fn callee_saved_survive(_tag: u32) {}
}
