//! Cortex-M port: one stack per task, a real context switch ([`arch`]), events as defmt
//! frames. All of the port's `unsafe` is in this module.
//!
//! The kernel state is a single global touched only by the running task (the scheduler runs
//! on the stack of the task that reached the scheduling point), so no locking is needed.
//! References into it are never held across a switch.

mod arch;
mod boot;
#[cfg(feature = "critical-section-impl")]
mod cs;
mod fault;
mod framework;
mod guard;
mod nvic;
mod systick;
mod vectors;
mod watchdog;

use super::{CANARY, CANARY_WORDS};
use crate::config::{MAX_ARGS, MAX_FIRING_BOUNDS, SERVED};
use crate::event::IRQ_CONTEXT;
use crate::event::{Event, Verdict};
use crate::interrupt::Interrupt;
use crate::op::Op;
use crate::sched::irq::{HandlerNext, IrqSource, MAX_IRQS};
use crate::sched::{Core, Next, Sink};
use crate::task::{MAX_TASKS, TaskId};
use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::panic::{Location, PanicInfo};

pub use fault::{FaultContext, report_hard_fault};

/// Does the CPU limit the main stack (ARMv8-M mainline's MSPLIM; `guard::main_stack`)? The
/// HardFault handler's assembly then lifts the limit first.
#[doc(hidden)]
pub const MAIN_STACK_LIMIT: bool = cfg!(jostle_stack_limit);
pub use framework::{
    HandlerEntry, adopt, idle, irq_enter_active, irq_exit_active, name_context, next_poll,
    poll_enter, poll_exit, prio_mask, register_irq, register_polled, return_addresses, set_firing,
    settle, source_of, source_priority,
};
pub use systick::{MAX_QUIET_TICKS, adopt_systick, set_waiting};
pub use watchdog::start as start_idle_watchdog;

struct DefmtSink;

impl Sink for DefmtSink {
    #[inline]
    fn emit(&mut self, event: &Event) {
        kernel_logs(|| event.emit_defmt());
    }
}

/// Set while the kernel itself writes defmt frames. A defmt logger that takes a critical
/// section per frame (`defmt-rtt`, and the QEMU board's logger likewise) then only masks
/// interrupts: the kernel's own frames are no scheduling points, while a task's log is
/// one (`CsEnter`/`CsExit`) on every board alike.
static KERNEL_LOGGING: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Is the kernel writing a frame (see [`KERNEL_LOGGING`])?
fn kernel_logging() -> bool {
    KERNEL_LOGGING.load(core::sync::atomic::Ordering::Relaxed)
}

/// Runs `f`, which writes the kernel's frames.
fn kernel_logs(f: impl FnOnce()) {
    use core::sync::atomic::Ordering::Relaxed;
    // Load and store, no swap: ARMv6-M has no compare-and-swap (and only this core writes).
    let outer = KERNEL_LOGGING.load(Relaxed);
    KERNEL_LOGGING.store(true, Relaxed);
    f();
    KERNEL_LOGGING.store(outer, Relaxed);
}

/// From here on the run ends: every frame is the kernel's.
fn ending() {
    KERNEL_LOGGING.store(true, core::sync::atomic::Ordering::Relaxed);
}

/// `repr(C)`, what every scheduling point reads first (see [`Core`]'s layout).
#[repr(C)]
struct Kernel {
    current: TaskId,
    /// Whether the MPU or the stack limit guards the tasks' stacks (else the canary is
    /// checked at every switch).
    guarded: bool,
    core: Core<DefmtSink>,
    /// Saved stack pointer of each stopped task.
    sp: [u32; MAX_TASKS],
    /// Each task's stack: lowest address and size.
    stacks: [(usize, usize); MAX_TASKS],
    args: crate::fixed::Vec<u32, MAX_ARGS>,
    /// The declared test this run runs (`Config::test`).
    test: u32,
    /// How often the sources registered at run time may fire on their own, per line
    /// (`Config::firing_bounds`).
    firing_bounds: crate::fixed::Vec<crate::config::FiringBound, MAX_FIRING_BOUNDS>,
    /// What the board gave [`start_with_host`] (or [`adopt`]).
    boot: Boot,
    /// The NVIC line of each interrupt source (index = the core's source number): the
    /// declared ones first, then those registered as the run goes ([`register_irq`]).
    lines: crate::fixed::Vec<u16, MAX_IRQS>,
    /// The source the kernel is firing (`framework::NOT_FIRING`: none), so that a handler
    /// entered through the vector table knows whether the kernel fired it.
    firing: u8,
    /// This run's index among the block's runs per boot, their number, and the block's
    /// checksum (which tags the state kept across the reset between runs).
    run: u32,
    runs: u32,
    crc: u32,
}

struct Global {
    started: UnsafeCell<bool>,
    /// Where a finished task's stack pointer is thrown away.
    scratch_sp: UnsafeCell<u32>,
}

// SAFETY: exactly one task runs at a time and no interrupt handler touches the kernel except
// the fault handlers, which end the run.
unsafe impl Sync for Global {}

static GLOBAL: Global = Global {
    started: UnsafeCell::new(false),
    scratch_sp: UnsafeCell::new(0),
};

/// The kernel's state, written whole when a run starts (so never read uninitialised).
struct KernelCell(UnsafeCell<MaybeUninit<Kernel>>);

// SAFETY: as for `Global`.
unsafe impl Sync for KernelCell {}

/// In `.uninit`: startup does not zero these few KiB on every warm restart between runs,
/// only for the run's start to overwrite them.
#[unsafe(link_section = ".uninit.JOSTLE_KERNEL")]
static KERNEL: KernelCell = KernelCell(UnsafeCell::new(MaybeUninit::uninit()));

/// Whether this image left a whole [`Kernel`] in [`KERNEL`] ([`kernel_owner`]), so that
/// the next run of the boot restarts it in place ([`Kernel::restart`]) instead of building
/// one.
struct OwnerCell(UnsafeCell<u32>);

// SAFETY: as for `Global`.
unsafe impl Sync for OwnerCell {}

#[unsafe(link_section = ".uninit.JOSTLE_KERNEL_OWNER")]
static KERNEL_OWNER: OwnerCell = OwnerCell(UnsafeCell::new(0));

/// The owner word of a kernel started by this image (the kernel's size stands for its
/// layout: RAM may survive a reflash). With a run index above 0, which only the previous
/// run of this boot leaves (`boot::set_next_run`), it says the kernel in `.uninit` is whole.
fn kernel_owner() -> u32 {
    0x4B52_4E4C ^ core::mem::size_of::<Kernel>() as u32
}

impl Kernel {
    /// Writes a kernel with no run at `this`, field by field (see `Core::init_at_rest`: a
    /// whole kernel built on the boot stack and moved into place took some 6 KiB of it).
    ///
    /// # Safety
    /// `this` is valid for writes of a `Kernel`.
    #[inline(never)]
    unsafe fn init_at_rest(this: *mut Kernel, boot: Boot) {
        // SAFETY: per the contract, each field through its own place. (A field added to
        // `Kernel` stops the build in `restart`'s pattern: add its line here.)
        unsafe {
            Core::init_at_rest(&raw mut (*this).core, DefmtSink);
            (&raw mut (*this).current).write(0);
            (&raw mut (*this).guarded).write(false);
            (&raw mut (*this).sp).write([0; MAX_TASKS]);
            (&raw mut (*this).stacks).write([(0, 0); MAX_TASKS]);
            (&raw mut (*this).args).write(crate::fixed::Vec::new());
            (&raw mut (*this).test).write(0);
            (&raw mut (*this).firing_bounds).write(crate::fixed::Vec::new());
            (&raw mut (*this).boot).write(boot);
            (&raw mut (*this).lines).write(crate::fixed::Vec::new());
            (&raw mut (*this).firing).write(framework::NOT_FIRING);
            (&raw mut (*this).run).write(0);
            (&raw mut (*this).runs).write(0);
            (&raw mut (*this).crc).write(0);
        }
    }

    /// Run `run` of `config` on the kernel the last run of this boot left (or a new one at
    /// rest): every field set again, as a new one would be, without building one and
    /// copying it into place.
    fn restart(&mut self, config: &crate::config::Config, run: u32, crc: u32, boot: Boot) {
        // Named field by field, with no `..`: a field added to `Kernel` must be set here (and
        // in `init_at_rest`).
        let Kernel {
            core,
            // `prepare` writes a task's entries before anything reads them (a spawn's
            // `is_live` test passes over the stale ones).
            sp: _,
            stacks: _,
            current,
            guarded,
            args,
            test,
            firing_bounds,
            boot: was_boot,
            lines,
            firing,
            run: was_run,
            runs,
            crc: was_crc,
        } = self;
        core.restart(config, run_index(config, run));
        *current = 0;
        // SAFETY: before the first task, in privileged thread mode.
        *guarded = unsafe { guard::guard_init() };
        args.clear();
        let _ = args.extend_from_slice(&config.args);
        *test = config.test;
        firing_bounds.clone_from(&config.firing_bounds);
        *was_boot = boot;
        *lines = boot.irqs.iter().map(|q| q.irq).collect();
        *firing = framework::NOT_FIRING;
        *was_run = run;
        *runs = config.runs;
        *was_crc = crc;
    }
}

/// The index a run reports (`RunStart`): its place among its block's runs. A served run
/// is its block's only one.
fn run_index(config: &crate::config::Config, run: u32) -> u32 {
    if config.runs == SERVED { 0 } else { run }
}

/// Ends the run with exit code `code`: resets the CPU for the next run of the boot when
/// one is left (the host reads every run from one stream), else exits. A served boot's
/// next run is the block the host sends; from a fault handler a served boot exits (a
/// system reset would bring back the boot's first block).
///
/// # Safety
/// The kernel must be started.
unsafe fn finish(code: u8) -> ! {
    ending();
    // SAFETY: per the contract; the run is over, nothing else touches the kernel.
    unsafe {
        let k = kernel();
        // Startup code writes all of RAM again, the guarded stack included.
        guard::guard_off();
        // Thread mode: a task (on the process stack), or a framework's main adopted as
        // task 0 (on the main stack, `adopt`); either restarts in place.
        let from_task = cortex_m::peripheral::SCB::vect_active()
            == cortex_m::peripheral::scb::VectActive::ThreadMode;
        let vtor = (*cortex_m::peripheral::SCB::PTR).vtor.read();
        if (*k).runs == SERVED {
            if from_task && let Some(next_block) = (*k).boot.next_block {
                // `event::side::AWAITING_BLOCK`: the host may send the block (a boot that
                // exits instead leaves it its exit code to check the verdict against).
                defmt::println!("J awaiting-block");
                defmt::flush();
                let mut block = [0u8; crate::config::BLOCK_LEN];
                if next_block(&mut block) {
                    boot::serve(&block);
                    arch::restart(vtor);
                }
            }
        } else if (*k).run + 1 < (*k).runs {
            boot::set_next_run((*k).crc, (*k).run + 1);
            defmt::flush();
            // From a task: restart the program in place (fast under QEMU). From a fault
            // handler: a real system reset, which also leaves the exception.
            if from_task {
                arch::restart(vtor);
            }
            cortex_m::peripheral::SCB::sys_reset();
        }
        boot::consume_ram_block();
        defmt::flush();
        ((*k).boot.exit)(code)
    }
}

fn started() -> bool {
    // SAFETY: written once before any task runs.
    unsafe { *GLOBAL.started.get() }
}

/// The kernel, which must have been started.
///
/// # Safety
/// Callers must not hold the reference across a context switch.
unsafe fn kernel() -> *mut Kernel {
    KERNEL.0.get() as *mut Kernel
}

/// Starts a run: reads the configuration block, then runs `main` as task 0 on `stack`.
/// `exit` ends the run with a process exit code (semihosting exit under QEMU).
///
/// A refused configuration block emits `ConfigRejected` and exits before any task runs.
pub fn start<const BYTES: usize>(
    main: fn(),
    stack: &'static crate::stack::Stack<BYTES>,
    exit: fn(u8) -> !,
) -> ! {
    start_with_interrupts(main, stack, exit, &[])
}

/// [`start`], with the firmware's interrupt sources (see `sched::irq`).
pub fn start_with_interrupts<const BYTES: usize>(
    main: fn(),
    stack: &'static crate::stack::Stack<BYTES>,
    exit: fn(u8) -> !,
    irqs: &'static [&'static Interrupt],
) -> ! {
    start_with_host(main, stack, exit, irqs, None)
}

/// Reads the next run's configuration block from the host into the buffer (a served boot,
/// [`SERVED`]); `false` when the host's input has ended.
pub type NextBlock = fn(&mut [u8; crate::config::BLOCK_LEN]) -> bool;

/// What the board gives the kernel for the whole boot.
#[derive(Clone, Copy)]
struct Boot {
    /// Ends the boot with a process exit code.
    exit: fn(u8) -> !,
    /// The declared interrupt sources (index = the core's source number).
    irqs: &'static [&'static Interrupt],
    /// Where a served boot's next block comes from (`None`: the board has no channel from
    /// the host, and a served boot ends after its first run).
    next_block: Option<NextBlock>,
}

/// For a board whose boots get their first block from the host the way every served block
/// comes (descriptor `config=stdin`: its RAM block is a static the host cannot write before
/// the boot): reads one with `next_block` into the RAM block when none is there. A warm
/// restart finds the block the last run was given, and reads nothing.
pub fn take_first_block(next_block: NextBlock) {
    if !boot::ram_block_present() {
        let mut block = [0u8; crate::config::BLOCK_LEN];
        if next_block(&mut block) {
            boot::write_ram_block(&block);
        }
    }
}

/// Reads the boot's configuration block and starts its run on the kernel: the one the last
/// run of this boot left in `.uninit` (a warm restart), or one written there at rest. A
/// refused block ends the boot with `ConfigRejected` before anything runs.
///
/// # Safety
/// Thread mode, before anything refers to the kernel.
#[inline(never)]
unsafe fn begin(boot: Boot) {
    let mut config = crate::config::Config::default();
    let crc = match boot::read_config(&mut config) {
        Ok(crc) => crc,
        Err(reason) => {
            ending();
            Event::ConfigRejected {
                reason: reason as u8,
            }
            .emit_defmt();
            end_unstarted(Verdict::ConfigRejected, boot.exit)
        }
    };
    let run = boot::batch_index(crc, config.runs);
    config.seed = config.seed.wrapping_add(u64::from(run_index(&config, run)));
    // SAFETY: per the contract.
    unsafe {
        let owner = KERNEL_OWNER.0.get();
        let k = kernel();
        if run == 0 || owner.read_volatile() != kernel_owner() {
            Kernel::init_at_rest(k, boot);
            owner.write_volatile(kernel_owner());
        }
        (*k).restart(&config, run, crc, boot);
        *GLOBAL.started.get() = true;
    }
}

/// [`start_with_interrupts`], on a board that can read blocks from the host as the runs
/// go: a block with `runs` [`SERVED`] has the board read each next run's block with
/// `next_block`, so that one boot serves any number of runs.
pub fn start_with_host<const BYTES: usize>(
    main: fn(),
    stack: &'static crate::stack::Stack<BYTES>,
    exit: fn(u8) -> !,
    irqs: &'static [&'static Interrupt],
    next_block: Option<NextBlock>,
) -> ! {
    crate::interrupt::check_declared(irqs.len());
    if !nvic::init(irqs) {
        panic!("no more distinct interrupt priorities than the NVIC implements");
    }
    let (base, size) = stack.region();
    // SAFETY: single-threaded boot; nothing else refers to the kernel yet.
    unsafe {
        begin(Boot {
            exit,
            irqs,
            next_block,
        });
        prepare(0, base, size, main);
        let k = kernel();
        let sources: crate::fixed::Vec<IrqSource, MAX_IRQS> =
            irqs.iter().map(|q| q.source).collect();
        (*k).core.declare_irqs(&sources);
        let mut next = (*k).core.decide();
        while let Next::Fire(i) = next {
            fire(i);
            next = (*k).core.resume();
        }
        match next {
            Next::Run(t) => {
                (*k).current = t;
                let sp = (*k).sp[t as usize];
                if (*k).guarded && !guard::owns_guard(t) {
                    guard::guard((*k).stacks[t as usize].0);
                }
                // The vector table's first word: the boot stack's top, for the handlers.
                let vtor = (*cortex_m::peripheral::SCB::PTR).vtor.read();
                let msp = (vtor as *const u32).read_volatile();
                arch::enter(sp, msp, guard::limit((*k).stacks[t as usize].0))
            }
            Next::End(v) => finish(v.exit_code()),
            Next::Fire(_) => unreachable!(),
        }
    }
}

/// Lays out task `t`'s stack: canary at the bottom, first frame at the top.
///
/// # Safety
/// `base..base+size` must be memory owned by this task from now on.
unsafe fn prepare(t: TaskId, base: *mut u8, size: usize, entry: fn()) {
    // SAFETY: per the contract; the kernel exists.
    unsafe {
        let k = kernel();
        let words = base as *mut u32;
        for i in 0..CANARY_WORDS {
            words.add(i).write_volatile(CANARY);
        }
        let top = ((base as usize + size) & !7) as *mut u32;
        (*k).sp[t as usize] = arch::initial_frame(top, entry);
        (*k).stacks[t as usize] = (base as usize, size);
        if (*k).guarded && guard::owns_guard(t) {
            guard::guard_own(t, base as usize);
        }
    }
}

/// Entry of every task (called by the trampoline with the entry function's address).
extern "C" fn task_entry(entry: usize) -> ! {
    // SAFETY: the trampoline passes the `fn()` that `initial_frame` stored.
    let entry: fn() = unsafe { core::mem::transmute::<usize, fn()>(entry) };
    entry();
    // SAFETY: the kernel is running this task; no reference is held across the switch.
    unsafe {
        let k = kernel();
        let me = (*k).current;
        if !(*k).guarded {
            check_canary(me);
        }
        let next = (*k).core.exit(me);
        // The guard stays up through the kernel's exit path; only the last switch away
        // runs unguarded, so that another task may be given this stack.
        if (*k).guarded {
            guard::unguard(me);
        }
        go(GLOBAL.scratch_sp.get(), next);
    }
    loop {
        core::hint::spin_loop();
    }
}

/// Acts on the core's decision: keep running, switch (saving into `save`), or end the run.
///
/// # Safety
/// Must be called by the running task with no reference into the kernel alive.
unsafe fn go(save: *mut u32, mut next: Next) {
    // SAFETY: per the contract.
    unsafe {
        let k = kernel();
        while let Next::Fire(i) = next {
            fire(i);
            next = (*k).core.resume();
        }
        match next {
            Next::Fire(_) => {}
            Next::Run(t) if t == (*k).current => {}
            Next::Run(t) => switch_task(save, t),
            Next::End(v) => finish(v.exit_code()),
        }
    }
}

/// Switches from the running task (saving into `save`) to task `t`, another one.
///
/// # Safety
/// As for [`go`].
#[inline(always)]
unsafe fn switch_task(save: *mut u32, t: TaskId) {
    // SAFETY: per the contract.
    unsafe {
        let k = kernel();
        // The MPU guards every stack: the first tasks' with regions of their own, set
        // when they were laid out; a later task's with the shared region, moved here (on
        // ARMv8-M PSPLIM too, loaded by the switch). Without either, the canary is checked whenever a task is switched out (and at
        // its end).
        if (*k).guarded {
            if !guard::owns_guard(t) {
                guard::guard((*k).stacks[t as usize].0);
            }
        } else {
            check_canary((*k).current);
        }
        (*k).current = t;
        let next_sp = (*k).sp[t as usize];
        arch::switch_stack(save, next_sp, (*k).stacks[t as usize].0);
    }
}

/// Ends the run with a stack overflow if task `t`'s canary was overwritten. Inlined: without
/// an MPU (the micro:bit's Cortex-M0) it runs at every switch, eight loads and compares; the
/// report is out of line.
///
/// # Safety
/// The kernel must be running.
#[inline(always)]
unsafe fn check_canary(t: TaskId) {
    // SAFETY: the stack region was recorded by `prepare`.
    unsafe {
        let base = (*kernel()).stacks[t as usize].0;
        // Unrolled (a loop over the words stays a loop on ARMv6-M: five instructions a word).
        let w = &*(base as *const [u32; CANARY_WORDS]);
        let changed = (w[0] ^ CANARY)
            | (w[1] ^ CANARY)
            | (w[2] ^ CANARY)
            | (w[3] ^ CANARY)
            | (w[4] ^ CANARY)
            | (w[5] ^ CANARY)
            | (w[6] ^ CANARY)
            | (w[7] ^ CANARY);
        if changed != 0 {
            canary_broken(t);
        }
    }
}

/// Reports task `t`'s overwritten canary and ends the run.
///
/// # Safety
/// As for [`check_canary`].
#[cold]
#[inline(never)]
unsafe fn canary_broken(t: TaskId) -> ! {
    // SAFETY: per the contract.
    unsafe {
        let k = kernel();
        let (base, size) = (*k).stacks[t as usize];
        ending();
        let sp: u32;
        core::arch::asm!("mov {}, sp", out(reg) sp);
        let depth = (base + size).saturating_sub(sp as usize) as u32;
        Event::StackOverflow {
            t,
            depth,
            size: size as u32,
        }
        .emit_defmt();
        (*k).core.abort(Verdict::StackOverflow);
        finish(Verdict::StackOverflow.exit_code())
    }
}

/// Runs `f` with the running task's stack guard (a no-access MPU region) lifted: for a
/// board whose output goes through the CPU's view of memory, as QEMU's semihosting does.
/// (ARMv8-M's read-only guards stay up: reading through them is allowed.)
///
/// QEMU reads a semihosting call's parameter block and buffer as a debugger would, but
/// through the MPU, translating each 1 KiB page by its *first* address: when a task's stack
/// starts on a page boundary, its 32-byte guard denies the whole page, and a `SYS_WRITE`
/// whose parameter block (on the task's stack) lies in that page fails. The logger then
/// drops the frame: CCT `twostage` at tasks-128 (two 2 KiB stacks at 0x2000_0000 and
/// 0x2000_0800, more than 1 KiB deep in the scheduler) lost 16 of its 24 task events.
/// `f` must reach no scheduling point (a logger's write, inside its critical section).
///
/// Only while a guard starts a page ([`guard::page_guarded`]): a guard elsewhere in a page
/// denies the call nothing, and turning the MPU off and on around every frame flushed QEMU's
/// translations twice per frame (at full trace some 40 % of a run's cost).
pub fn unguarded<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: `guarded` is read only once the kernel is started (before, the MPU is off);
    // it is true only when `guard_init` found an MPU or a stack limit.
    if started() && unsafe { (*kernel()).guarded } && guard::page_guarded() {
        // SAFETY: as above; `f` switches no task (the caller's contract).
        unsafe { guard::unguarded(f) }
    } else {
        f()
    }
}

/// Fires source `i`: its handler runs (on the main stack, as a real exception) before this
/// returns.
fn fire(i: u8) {
    // SAFETY: the source table is set before the first decision and never changes; no
    // reference outlives a call.
    unsafe {
        let k = kernel();
        let irq = framework::line(i);
        let before = (*k).core.irq_entries();
        if systick::is_systick(irq) {
            systick::tick(i);
        } else {
            (*k).firing = i;
            nvic::fire(irq);
            (*k).firing = framework::NOT_FIRING;
        }
        if (*k).core.irq_entries() == before {
            // The NVIC did not take the exception: deciding again would fire it forever.
            panic!("interrupt line {} did not preempt when fired", irq);
        }
    }
}

/// Runs the handler of IRQ line `irqn` (the board's `DefaultHandler`, through
/// [`crate::exception_handlers!`]): its entry, the handler, its exit. A line the firmware
/// did not declare is disabled and ignored.
pub fn dispatch_irq(irqn: i16) {
    if !started() || irqn < 0 {
        return;
    }
    // SAFETY: handler mode; the kernel's state is only touched by the running context,
    // which this handler is until it returns; no reference outlives a call.
    unsafe {
        let k = kernel();
        nvic::disable(irqn as u16);
        let Some(i) = (*k).boot.irqs.iter().position(|q| q.irq == irqn as u16) else {
            // Not a declared source: a line registered at run time has its handler in the
            // vector table, so it does not come here.
            return;
        };
        let by = (*k).current;
        (*k).current = (*k).core.irq_enter(i as u8, by);
        ((*k).boot.irqs[i].handler)();
        (*k).core.irq_exit(i as u8);
        (*k).current = by;
    }
}

/// The index of a declared source (firmware passes its sources to `firmware!`).
pub fn irq_index(q: &'static Interrupt) -> u8 {
    // SAFETY: read-only access to the table set at start.
    let irqs = unsafe { (*kernel()).boot.irqs };
    match irqs.iter().position(|d| core::ptr::eq(*d, q)) {
        Some(i) => i as u8,
        None => panic!("an interrupt source not declared in firmware!(.., interrupts: [..])"),
    }
}

/// A handler's scheduling point: more urgent sources may fire first; the operation then
/// executes at once.
fn handler_point(ctx: TaskId, op: Op) {
    // SAFETY: handler mode, the running context; no reference outlives a call.
    unsafe {
        let k = kernel();
        let mut next = (*k).core.handler_point(ctx, op);
        loop {
            match next {
                HandlerNext::Run => return,
                HandlerNext::Fire(j) => {
                    fire(j);
                    next = (*k).core.handler_resume(ctx);
                }
                HandlerNext::End(v) => finish(v.exit_code()),
            }
        }
    }
}

/// The running task stops before `op`; returns when it has been chosen and `op` executed.
pub fn point(op: Op) {
    // SAFETY: called from task code; the kernel is started (primitives are only reachable
    // from tasks); the pointer is not held across the switch inside `go`.
    unsafe {
        let k = kernel();
        let me = (*k).current;
        if me >= IRQ_CONTEXT {
            return handler_point(me, op);
        }
        // The lean path's commonest case inline (nobody else may run: go on); the pick,
        // the switch and the general loop out of line, so that this saves few registers.
        if !(*k).core.lean_gate(&op) {
            general_point(me, op);
        } else if !(*k).core.lean_alone() {
            lean_point(me, op);
        }
    }
}

/// The running task executes the release or signal `op` at once, with no decision before it
/// (`Core::execute_now`: it commutes with every other context's operation); in a handler,
/// a point as any other.
#[inline(never)]
pub fn execute_now(op: Op) {
    // SAFETY: as in `point`.
    unsafe {
        let me = (*kernel()).current;
        if me >= IRQ_CONTEXT {
            return handler_point(me, op);
        }
        let next = (*kernel()).core.execute_now(me, op);
        switch_to(me, next);
    }
}

/// The running task stops before a yield at site `s`; returns when it has been chosen and
/// the yield executed. [`point`]'s split for yields (`Core::yield_point`): a yield is lean
/// under every strategy, also one that sees yields, without a test on accesses' path. The
/// site alone crosses the calls out of line (the operation is made there), so that the
/// inline path stores nothing.
pub fn yield_point(s: u32) {
    // SAFETY: as in `point`.
    unsafe {
        let k = kernel();
        let me = (*k).current;
        if me >= IRQ_CONTEXT {
            return handler_point(me, Op::Yield { s });
        }
        if !(*k).core.yield_gate(&Op::Yield { s }) {
            general_point(me, Op::Yield { s });
        } else if (*k).core.lean_alone() {
            (*k).core.yielded(me);
        } else {
            lean_yield_point(me, s);
        }
    }
}

/// [`yield_point`] past the gate, when other tasks may run.
#[inline(never)]
fn lean_yield_point(me: TaskId, s: u32) {
    // SAFETY: as in `point`.
    unsafe {
        let next = (*kernel()).core.lean_yield_point(me, Op::Yield { s });
        switch_to(me, next);
    }
}

/// [`point`] or [`yield_point`] when the lean gate is shut: the general loop decides.
#[inline(never)]
fn general_point(me: TaskId, op: Op) {
    // SAFETY: as in `point`.
    unsafe {
        let next = (*kernel()).core.stopped_at(me, op);
        switch_to(me, next);
    }
}

/// [`point`] past the lean gate, when other tasks may run.
#[inline(never)]
fn lean_point(me: TaskId, op: Op) {
    // SAFETY: as in `point`.
    unsafe {
        let next = (*kernel()).core.lean_point(me, op);
        switch_to(me, next);
    }
}

/// Acts on what the core decided at task `me`'s scheduling point.
///
/// # Safety
/// As for [`go`].
#[inline(always)]
unsafe fn switch_to(me: TaskId, next: Next) {
    // SAFETY: per the contract.
    unsafe {
        let save = &raw mut (*kernel()).sp[me as usize];
        match next {
            Next::Run(t) if t == me => {} // no switch
            // The lean path's switch, without `go`'s second look at the decision.
            Next::Run(t) => switch_task(save, t),
            _ => go(save, next),
        }
    }
}

/// Are values traced (`Core::values_traced`)? Asked before every access's value is
/// converted, so that below the full trace level an access pays only this load.
#[inline(always)]
pub fn values_traced() -> bool {
    // SAFETY: read by the running task; the kernel is started (accesses are only reachable
    // from tasks and handlers).
    unsafe { (*kernel()).core.values_traced() }
}

/// The running task's or handler's last access read, wrote or left `v` (of kind `k`).
pub fn value(v: u32, k: u8) {
    // SAFETY: as in `values_traced`; no reference outlives the call.
    unsafe {
        let me = (*kernel()).current;
        // Code between steps (`QUIET_CONTEXT`) makes no events.
        if me != crate::sched::irq::QUIET_CONTEXT {
            (*kernel()).core.value(me, v, k);
        }
    }
}

/// The running task performed the compare-and-swap at `s` on `a` (see `Core::cas_outcome`).
pub fn cas_done(s: u32, a: u32, ord: u8, failure_ord: u8, ok: bool) {
    // SAFETY: called by the running task; no reference outlives the call.
    unsafe {
        let k = kernel();
        let me = (*k).current;
        if me != crate::sched::irq::QUIET_CONTEXT {
            (*k).core.cas_outcome(me, s, a, ord, failure_ord, ok);
        }
    }
}

/// Reserves a task id and lays out its stack; the caller then reaches the `Spawn` point.
pub fn spawn(region: (*mut u8, usize), entry: fn()) -> TaskId {
    let (base, size) = region;
    // SAFETY: called from a running task; references end before returning.
    unsafe {
        let k = kernel();
        for t in 0..MAX_TASKS {
            if (*k).stacks[t].0 == base as usize && (*k).core.is_live(t as TaskId) {
                panic!("spawn: this stack is in use by task {}", t);
            }
        }
        let Some(t) = (*k).core.reserve() else {
            ending();
            let verdict = (*k).core.task_limit((*k).current);
            finish(verdict.exit_code())
        };
        if size < (CANARY_WORDS + 32) * 4 {
            panic!("spawn: stack of {} bytes is too small", size);
        }
        prepare(t, base, size, entry);
        t
    }
}

/// A site's id: the address of its `Location` in flash (stable for one ELF).
#[inline(always)]
pub fn site(loc: &'static Location<'static>) -> u32 {
    loc as *const Location<'static> as usize as u32
}

/// A memory location's or lock's id: its address.
#[inline(always)]
pub fn addr(p: *const ()) -> u32 {
    p as usize as u32
}

/// The running task.
pub fn current() -> TaskId {
    // SAFETY: read of a plain field by the running task.
    unsafe { (*kernel()).current }
}

/// Firmware argument `i`.
pub fn arg(i: usize) -> Option<u32> {
    // SAFETY: read-only access by the running task.
    unsafe {
        let k: &Kernel = &*kernel();
        k.args.get(i).copied()
    }
}

/// The declared test this run runs (the block's `test`).
pub fn test() -> u32 {
    // SAFETY: read-only access by the running task.
    unsafe { (*kernel()).test }
}

/// Runs `f` on the core's clock and wake-ups, with the running context (see
/// [`crate::sched::Clockwork`]).
pub fn clockwork<R: Default>(f: impl FnOnce(&mut dyn crate::sched::Clockwork, TaskId) -> R) -> R {
    // SAFETY: called by the running task or handler; no reference outlives the call, and
    // `f` reaches no scheduling point (it only sees the core's clockwork).
    unsafe {
        let k = kernel();
        let me = (*k).current;
        f(&mut (*k).core, me)
    }
}

/// An input the run's seed chooses, in `0..bound`.
pub fn input(bound: u32) -> u32 {
    // SAFETY: called by the running task (or handler); nothing else touches the core now.
    unsafe { (*kernel()).core.input(bound) }
}

/// Reports a panic of the running task (call from the board's `#[panic_handler]`) and
/// ends the run with the `panic` verdict. Before the kernel starts, it just exits.
pub fn report_panic(info: &PanicInfo, exit: fn(u8) -> !) -> ! {
    ending();
    let site = match info.location() {
        Some(loc) => {
            let s = loc as *const Location<'_> as usize as u32;
            defmt::println!(
                "J site {=u32} {=str}:{=u32}:{=u32}",
                s,
                loc.file(),
                loc.line(),
                loc.column()
            );
            s
        }
        None => 0,
    };
    let mut msg = crate::fixed::String::<120>::new();
    let _ = core::fmt::write(&mut msg, format_args!("{}", info.message()));
    defmt::println!("J panic-msg {=str}", msg.as_str());
    if !started() {
        end_unstarted(Verdict::Panic, exit);
    }
    // SAFETY: the run ends here; nothing else uses the kernel afterwards.
    unsafe {
        let k = kernel();
        Event::TaskPanic {
            t: (*k).current,
            s: site,
        }
        .emit_defmt();
        (*k).core.abort(Verdict::Panic);
        finish(Verdict::Panic.exit_code())
    }
}

/// Ends a run that never reached its first scheduling step (no kernel state to report from).
fn end_unstarted(verdict: Verdict, exit: fn(u8) -> !) -> ! {
    ending();
    Event::RunEnd {
        verdict: verdict as u8,
        steps: 0,
    }
    .emit_defmt();
    exit(verdict.exit_code())
}

/// Emits every event kind once with the values of [`Event::samples`], plus the side
/// frames (the round-trip test firmware calls this).
pub fn emit_samples() {
    kernel_logs(emit_all_samples);
}

fn emit_all_samples() {
    for e in Event::samples() {
        e.emit_defmt();
    }
    defmt::println!(
        "J site {=u32} {=str}:{=u32}:{=u32}",
        0x1234_5678,
        "src/sample.rs",
        12,
        34
    );
    defmt::println!("J panic-msg {=str}", "sample message: 1 + 1 != 3");
}
