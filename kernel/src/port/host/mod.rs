//! Host port: the firmware's tasks are coroutines on the process's one thread
//! ([`tasks`]), so the same firmware logic runs on a workstation, fast: one process makes
//! many runs, as one QEMU boot does.
//!
//! The configuration block is read from the file named by `JOSTLE_CONFIG` (the same bytes as
//! on the device; absent: the defaults). A block asks for `runs` consecutive seeds: each run
//! starts from a clean slate, as a reset gives the device: a new scheduler, the instrumented
//! primitives back at their initial values ([`crate::api`]'s `RunCell`), locations numbered
//! anew, the previous run's tasks abandoned. The process ends with the last run's verdict's
//! exit code.
//!
//! Events are printed to stdout one a line, rendered exactly as the device's defmt frames
//! are, so one parser serves both ports; each run's lines are written when it ends. Sites
//! are named as [`names`] says.
//!
//! A task's panic ends its run: the hook records it (`J panic-msg`, `TaskPanic`), and with
//! `panic = "unwind"` the unwinding stops at the task's coroutine and the next run goes on in
//! this process; with `panic = "abort"` the process ends after writing the run (the host tool
//! starts the next seed in a new process).

#[cfg(feature = "critical-section-impl")]
mod cs;
mod names;
mod overflow;
mod tasks;

use crate::config::{Config, MAX_ARGS};
use crate::event::IRQ_CONTEXT;
use crate::event::{Event, Verdict};
use crate::interrupt::Interrupt;
use crate::op::Op;
use crate::sched::irq::{HandlerNext, IrqSource};
use crate::sched::{Core, Next, Sink};
use crate::task::TaskId;
use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::io::Write as _;
use std::panic::Location;
use std::sync::atomic::{AtomicU32, Ordering};

/// A run's events, rendered one a line, written out when the run ends (or when
/// [`LineSink::CHUNK`] bytes are waiting: a long run's output must reach the host's limit
/// on output, not pile up here).
struct LineSink {
    out: String,
}

impl LineSink {
    const CHUNK: usize = 64 << 10;
}

impl Sink for LineSink {
    fn emit(&mut self, event: &Event) {
        let _ = event.render(&mut self.out);
        self.out.push('\n');
        if self.out.len() >= Self::CHUNK {
            write_out(&self.out);
            self.out.clear();
        }
    }
}

/// What the contexts of a run share. One thread runs them all, in turn; no borrow of it is
/// held across a switch or across firmware code.
struct State {
    core: Core<LineSink>,
    /// The task the run loop resumes next.
    current: TaskId,
    /// The run's verdict once it has ended: scheduling points then return at once (a
    /// panicking task's destructors may still reach some while unwinding).
    ended: Option<Verdict>,
    names: names::Names,
    args: crate::fixed::Vec<u32, MAX_ARGS>,
    /// The declared test this run runs (`Config::test`).
    test: u32,
    irqs: &'static [&'static Interrupt],
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
    /// The running context: a task, or a handler (`IRQ_CONTEXT + i`) running on a task's
    /// coroutine.
    static ME: Cell<TaskId> = const { Cell::new(0) };
}

/// Runs started in this process: the epoch of the instrumented primitives' values.
static EPOCH: AtomicU32 = AtomicU32::new(0);

/// The current run's number in this process (see `RunCell`).
#[inline(always)]
pub fn epoch() -> u32 {
    EPOCH.load(Ordering::Relaxed)
}

/// Ends the process with `code`, possibly from inside a task.
fn exit(code: i32) -> ! {
    tasks::forget_all();
    std::process::exit(code)
}

/// Runs `f` on the run's state.
fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        f(s.as_mut()
            .expect("jostle: instrumented primitive used outside a run (call host::run)"))
    })
}

/// The run has ended with `verdict` (its `RunEnd` is in the stream).
fn end(st: &mut State, verdict: Verdict) {
    st.ended = Some(verdict);
}

/// Gives the thread back to the run loop for good: the run is over.
fn stop() -> ! {
    tasks::suspend();
    unreachable!("jostle: a task of a run that has ended was resumed")
}

/// Runs source `i`'s handler in place, on this task's coroutine, preempting context `by`.
fn fire(i: u8, by: TaskId) {
    let (ctx, handler) = with(|st| (st.core.irq_enter(i, by), st.irqs[i as usize].handler));
    ME.with(|m| m.set(ctx));
    handler();
    ME.with(|m| m.set(by));
    with(|st| st.core.irq_exit(i));
}

/// Fires, in place on task `me`'s coroutine, every source the core's decision `next` names,
/// until the decision names what runs next (or the run's end).
fn after_firings(me: TaskId, mut next: Next) -> Next {
    while let Next::Fire(i) = next {
        fire(i, me);
        next = with(|st| st.core.resume());
    }
    next
}

/// Acts on the core's decision for task `me`: returns when `me` may go on.
fn go(me: TaskId, next: Next) {
    match after_firings(me, next) {
        Next::Run(t) if t == me => {}
        Next::Run(t) => {
            with(|st| st.current = t);
            tasks::suspend();
        }
        Next::End(v) => {
            with(|st| end(st, v));
            stop()
        }
        Next::Fire(_) => unreachable!("firings are done"),
    }
}

/// Reads the configuration named by `JOSTLE_CONFIG`: absent variable means the default.
fn read_config() -> Result<Config, Event> {
    let Some(path) = std::env::var_os("JOSTLE_CONFIG") else {
        return Ok(Config::default());
    };
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!(
            "jostle: cannot read configuration block {}: {e}",
            std::path::Path::new(&path).display()
        );
        exit(2)
    });
    match Config::decode(&bytes) {
        Ok(c) => Ok(c.unwrap_or_default()),
        Err(r) => Err(Event::ConfigRejected { reason: r as u8 }),
    }
}

/// Runs `main` as task 0 under the configuration from `JOSTLE_CONFIG`, then exits the
/// process with the verdict's exit code. Never returns.
pub fn run(main: fn()) -> ! {
    run_with_interrupts(main, &[])
}

/// [`run`], with the firmware's interrupt sources: their handlers are called in place when
/// the scheduler fires them, with the same decisions as on the device.
pub fn run_with_interrupts(main: fn(), irqs: &'static [&'static Interrupt]) -> ! {
    crate::interrupt::check_declared(irqs.len());
    let config = match read_config() {
        Ok(c) => c,
        Err(rejected) => {
            let mut text = String::new();
            let _ = rejected.render(&mut text);
            text.push('\n');
            let _ = Event::RunEnd {
                verdict: Verdict::ConfigRejected as u8,
                steps: 0,
            }
            .render(&mut text);
            text.push('\n');
            write_out(&text);
            exit(Verdict::ConfigRejected.exit_code() as i32)
        }
    };
    std::panic::set_hook(Box::new(panic_hook));
    overflow::install();
    let mut carried = Carried::default();
    let mut last = Verdict::Pass;
    for run in 0..config.runs.max(1) {
        let mut run_config = config.clone();
        run_config.seed = config.seed.wrapping_add(u64::from(run));
        (last, carried) = one_run(&run_config, run, main, irqs, carried);
    }
    exit(last.exit_code() as i32)
}

/// What one run of a process hands the next: the process's names and the output buffer.
#[derive(Default)]
struct Carried {
    names: names::Names,
    out: String,
}

/// Run `run` of this process's block, from a clean slate; its lines are written out when it
/// ends. Returns its verdict, and what the next run takes over.
fn one_run(
    config: &Config,
    run: u32,
    main: fn(),
    irqs: &'static [&'static Interrupt],
    carried: Carried,
) -> (Verdict, Carried) {
    let Carried { mut names, mut out } = carried;
    let epoch = EPOCH.fetch_add(1, Ordering::Relaxed) + 1;
    names.start_run(epoch);
    out.clear();
    let mut core = Core::new(config, run, LineSink { out });
    let sources: Vec<IrqSource> = irqs.iter().map(|q| q.source).collect();
    core.declare_irqs(&sources);
    STATE.with(|s| {
        *s.borrow_mut() = Some(State {
            core,
            current: 0,
            ended: None,
            names,
            args: config.args.clone(),
            test: config.test,
            irqs,
        })
    });
    tasks::create(0, move || {
        let next = with(|st| st.core.decide());
        go(0, next);
        main();
        task_exit(0);
    });
    let verdict = loop {
        let next = with(|st| st.ended.ok_or(st.current));
        match next {
            Ok(verdict) => break verdict,
            Err(t) => {
                ME.with(|m| m.set(t));
                tasks::resume(t);
            }
        }
    };
    tasks::abandon_all();
    let st = STATE
        .with(|s| s.borrow_mut().take())
        .expect("the run's state");
    let mut core = st.core;
    let out = std::mem::take(&mut core.sink().out);
    write_out(&out);
    let carried = Carried {
        names: st.names,
        out,
    };
    (verdict, carried)
}

/// Task `t` overflowed its stack (`depth` bytes below its top, of `size`): called by the
/// fault handler, on the signal stack. Writes the run's lines, the overflow and the
/// verdict, and ends the process (the faulting code cannot go on).
fn overflowed(t: TaskId, depth: usize, size: usize) -> ! {
    let overflow = Event::StackOverflow {
        t,
        depth: depth as u32,
        size: size as u32,
    };
    // The overflow may have happened inside the kernel (a task's scheduling runs on its
    // stack), with the state borrowed. The borrower never resumes: the process ends below.
    // The fault comes from a frame's first touch of the guard page, at a function's entry,
    // so the state is between two of its updates, not in the middle of one.
    // SAFETY: one thread; the interrupted borrower is abandoned for good.
    let text = STATE.with(|s| {
        unsafe { &mut *s.as_ptr() }.as_mut().map(|st| {
            // An event being written when the fault came is cut off.
            let out = &mut st.core.sink().out;
            out.truncate(out.rfind('\n').map_or(0, |i| i + 1));
            st.core.sink().emit(&overflow);
            st.core.abort(Verdict::StackOverflow);
            std::mem::take(&mut st.core.sink().out)
        })
    });
    let text = text.unwrap_or_else(|| {
        let mut text = String::new();
        for event in [
            overflow,
            Event::RunEnd {
                verdict: Verdict::StackOverflow as u8,
                steps: 0,
            },
        ] {
            let _ = event.render(&mut text);
            text.push('\n');
        }
        text
    });
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        // SAFETY: writing a live buffer to stdout; `_exit` below needs nothing of this
        // process's state (a handler must not run `exit`'s destructors).
        let n = unsafe { libc::write(1, bytes[at..].as_ptr().cast(), bytes.len() - at) };
        if n <= 0 {
            break;
        }
        at += n as usize;
    }
    // SAFETY: ends the process at once.
    unsafe { libc::_exit(i32::from(Verdict::StackOverflow.exit_code())) }
}

/// Writes `text` to stdout (a closed pipe ends the process: nobody reads the runs).
fn write_out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .is_err()
    {
        exit(2)
    }
}

/// Task `me` has ended: the core names who runs next (the coroutine then returns).
fn task_exit(me: TaskId) {
    let next = after_firings(me, with(|st| st.core.exit(me)));
    with(|st| match next {
        Next::Run(t) => st.current = t,
        Next::End(v) => end(st, v),
        Next::Fire(_) => unreachable!("firings are done"),
    });
}

/// The running task stops before a yield at site `s` (`Core::point` takes a yield's own
/// path).
pub fn yield_point(s: u32) {
    point(Op::Yield { s })
}

/// The running task stops before `op`; returns when it has been chosen and `op` executed.
pub fn point(op: Op) {
    let me = ME.with(Cell::get);
    if me >= IRQ_CONTEXT {
        // A handler: more urgent sources may fire first, then the operation executes.
        let Some(mut next) = with(|st| st.ended.is_none().then(|| st.core.handler_point(me, op)))
        else {
            return;
        };
        loop {
            match next {
                HandlerNext::Run => return,
                HandlerNext::Fire(j) => {
                    fire(j, me);
                    next = with(|st| st.core.handler_resume(me));
                }
                HandlerNext::End(v) => {
                    with(|st| end(st, v));
                    stop()
                }
            }
        }
    }
    let Some(next) = with(|st| st.ended.is_none().then(|| st.core.point(me, op))) else {
        return;
    };
    go(me, next);
}

/// The running task executes the release or signal `op` at once, with no decision before it
/// (`Core::execute_now`); in a handler, a point as any other.
pub fn execute_now(op: Op) {
    let me = ME.with(Cell::get);
    if me >= IRQ_CONTEXT {
        return point(op);
    }
    let Some(next) = with(|st| st.ended.is_none().then(|| st.core.execute_now(me, op))) else {
        return;
    };
    go(me, next);
}

/// The running task performed the compare-and-swap at `s` on `a` (see `Core::cas_outcome`).
pub fn cas_done(s: u32, a: u32, ord: u8, failure_ord: u8, ok: bool) {
    let me = ME.with(Cell::get);
    with(|st| {
        if st.ended.is_none() {
            st.core.cas_outcome(me, s, a, ord, failure_ord, ok)
        }
    });
}

/// Are values traced (`Core::values_traced`)?
pub fn values_traced() -> bool {
    with(|st| st.ended.is_none() && st.core.values_traced())
}

/// The running task's or handler's last access read, wrote or left `v` (of kind `k`).
pub fn value(v: u32, k: u8) {
    let me = ME.with(Cell::get);
    with(|st| {
        if st.ended.is_none() {
            st.core.value(me, v, k)
        }
    });
}

/// Runs `f` on the core's clock and wake-ups, with the running context (see
/// [`crate::sched::Clockwork`]); once the run has ended, returns the default.
pub fn clockwork<R: Default>(f: impl FnOnce(&mut dyn crate::sched::Clockwork, TaskId) -> R) -> R {
    let me = ME.with(Cell::get);
    with(|st| {
        if st.ended.is_none() {
            f(&mut st.core, me)
        } else {
            R::default()
        }
    })
}

/// Reserves a task id and creates its coroutine, which waits for its first turn.
pub fn spawn(_region: (*mut u8, usize), entry: fn()) -> TaskId {
    let reserved = with(|st| match st.core.reserve() {
        Some(id) => Ok(id),
        None => {
            let me = st.current;
            let verdict = st.core.task_limit(me);
            end(st, verdict);
            Err(())
        }
    });
    let Ok(id) = reserved else { stop() };
    tasks::create(id, move || {
        entry();
        task_exit(id);
    });
    id
}

/// A site's id (see [`names`]); its first use in a run prints its definition.
pub fn site(loc: &'static Location<'static>) -> u32 {
    with(|st| name_site(st, loc))
}

fn name_site(st: &mut State, loc: &Location<'_>) -> u32 {
    let (id, first) = st.names.site(loc);
    if first {
        let out = &mut st.core.sink().out;
        let _ = writeln!(
            out,
            "J site {id} {}:{}:{}",
            loc.file(),
            loc.line(),
            loc.column()
        );
    }
    id
}

/// The index of a declared source (firmware passes its sources to `firmware!`).
pub fn irq_index(q: &'static Interrupt) -> u8 {
    match with(|st| st.irqs.iter().position(|d| std::ptr::eq(*d, q))) {
        Some(i) => i as u8,
        None => panic!("an interrupt source not declared in firmware!(.., interrupts: [..])"),
    }
}

/// The static the host port measures locations from: statics keep their link-time
/// distances in a position-independent executable, so the host tool finds a location's
/// symbol at this symbol's address plus the offset.
#[unsafe(no_mangle)]
#[used]
pub static JOSTLE_HOST_ANCHOR: u8 = 0;

/// A memory location's or lock's id: numbered in order of first use in the run, whose
/// first use prints its offset from [`JOSTLE_HOST_ANCHOR`].
pub fn addr(p: *const ()) -> u32 {
    with(|st| {
        let (id, first) = st.names.addr(p as usize);
        if first {
            let anchor = core::ptr::addr_of!(JOSTLE_HOST_ANCHOR) as isize;
            let offset = (p as isize).wrapping_sub(anchor);
            let _ = writeln!(st.core.sink().out, "J addr {id} {offset}");
        }
        id
    })
}

/// Is a run going on (the kernel started)?
#[cfg_attr(not(feature = "critical-section-impl"), allow(dead_code))]
fn running() -> bool {
    STATE.with(|s| s.try_borrow().is_ok_and(|s| s.is_some()))
}

/// Does the running context hold the critical section?
#[cfg_attr(not(feature = "critical-section-impl"), allow(dead_code))]
fn holds_cs() -> bool {
    let me = ME.with(Cell::get);
    with(|st| st.core.holds_cs(me))
}

/// The running task.
pub fn current() -> TaskId {
    ME.with(Cell::get)
}

/// Firmware argument `i`.
pub fn arg(i: usize) -> Option<u32> {
    with(|st| st.args.get(i).copied())
}

/// The declared test this run runs (the block's `test`).
pub fn test() -> u32 {
    with(|st| st.test)
}

/// An input the run's seed chooses, in `0..bound`.
pub fn input(bound: u32) -> u32 {
    with(|st| st.core.input(bound))
}

fn panic_hook(info: &std::panic::PanicHookInfo<'_>) {
    let me = ME.with(Cell::get);
    let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = info.payload().downcast_ref::<String>() {
        s.clone()
    } else {
        String::from("Box<dyn Any>")
    };
    let msg = msg.replace('\n', " ");
    // A panic while the state is borrowed is the kernel's own, not the firmware's: it
    // cannot be reported through the state.
    let recorded = STATE.with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            return false;
        };
        let Some(st) = s.as_mut() else { return false };
        if st.ended.is_some() {
            // A destructor panicked while a task unwound after the run's end.
            return true;
        }
        let site = info.location().map_or(0, |loc| name_site(st, loc));
        let out = &mut st.core.sink().out;
        let _ = writeln!(out, "J panic-msg {msg}");
        st.core.sink().emit(&Event::TaskPanic { t: me, s: site });
        st.core.abort(Verdict::Panic);
        end(st, Verdict::Panic);
        true
    });
    if !recorded {
        eprintln!("jostle: panic inside the kernel: {msg}");
        exit(Verdict::Panic.exit_code() as i32)
    }
    if cfg!(panic = "abort") {
        // No unwinding to stop at the task: this run is the process's last.
        let text = STATE.with(|s| {
            s.borrow_mut()
                .as_mut()
                .map(|st| std::mem::take(&mut st.core.sink().out))
        });
        write_out(&text.unwrap_or_default());
        exit(Verdict::Panic.exit_code() as i32)
    }
}
