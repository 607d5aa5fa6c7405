//! Host port: one OS thread per task and a baton (a mutex and a condition variable) so that
//! exactly one runs, so the same firmware logic runs under `cargo test` and on a workstation.
//!
//! Events are printed to stdout one a line, rendered exactly as the device's defmt frames
//! are, so one parser serves both ports. A site's id is a hash of its `file:line:col`
//! ([`crate::site`]), stable across runs; each site's first use is preceded by a
//! `J site <id> <file>:<line>:<col>` line. Memory locations are interned in order of first
//! use, which makes them deterministic. The configuration block is read from the file
//! named by the `JOSTLE_CONFIG` environment variable (same bytes as on the device).

#[cfg(feature = "critical-section-impl")]
mod cs;

use crate::config::{Config, MAX_ARGS};
use crate::event::IRQ_CONTEXT;
use crate::event::{Event, Verdict};
use crate::interrupt::Interrupt;
use crate::op::Op;
use crate::sched::irq::{HandlerNext, IrqSource};
use crate::sched::{Core, Next, Sink};
use crate::task::TaskId;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::io::{BufWriter, Stdout, Write};
use std::panic::Location;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

struct LineSink {
    out: BufWriter<Stdout>,
}

impl Sink for LineSink {
    fn emit(&mut self, event: &Event) {
        let mut line = String::with_capacity(48);
        let _ = event.render(&mut line);
        let _ = writeln!(self.out, "{line}");
    }
}

struct State {
    core: Core<LineSink>,
    current: TaskId,
    sites: HashMap<(&'static str, u32, u32), u32>,
    site_ids: HashSet<u32>,
    addrs: HashMap<usize, u32>,
    args: heapless::Vec<u32, MAX_ARGS>,
    irqs: &'static [&'static Interrupt],
}

struct Baton {
    state: Mutex<State>,
    turn: Condvar,
}

static BATON: OnceLock<Baton> = OnceLock::new();

thread_local! {
    static ME: Cell<TaskId> = const { Cell::new(0) };
    /// Whether this thread holds the state lock (a panic then cannot report through it).
    static HOLDING: Cell<bool> = const { Cell::new(false) };
}

fn baton() -> &'static Baton {
    BATON
        .get()
        .expect("jostle: instrumented primitive used outside a run (call host::run)")
}

/// The state, locked; the guard records that this thread holds it.
struct Held(Option<MutexGuard<'static, State>>);

impl std::ops::Deref for Held {
    type Target = State;
    fn deref(&self) -> &State {
        self.0.as_ref().expect("held")
    }
}

impl std::ops::DerefMut for Held {
    fn deref_mut(&mut self) -> &mut State {
        self.0.as_mut().expect("held")
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.0.is_some() {
            HOLDING.with(|h| h.set(false));
        }
    }
}

fn lock() -> Held {
    let guard = baton().state.lock().unwrap_or_else(|p| p.into_inner());
    HOLDING.with(|h| h.set(true));
    Held(Some(guard))
}

/// Waits on the baton's condition variable (the lock is released meanwhile).
fn wait(mut st: Held) -> Held {
    let guard = st.0.take().expect("held");
    HOLDING.with(|h| h.set(false));
    let guard = baton().turn.wait(guard).unwrap_or_else(|p| p.into_inner());
    HOLDING.with(|h| h.set(true));
    Held(Some(guard))
}

/// Flushes the event stream and ends the process with `code`.
fn finish(state: &mut Held, code: u8) -> ! {
    let _ = state.core.sink().out.flush();
    std::process::exit(code as i32)
}

/// Runs source `i`'s handler in place, on this thread, preempting context `by`.
fn fire(mut st: Held, i: u8, by: TaskId) -> Held {
    let ctx = st.core.irq_enter(i, by);
    let handler = st.irqs[i as usize].handler;
    drop(st);
    ME.with(|m| m.set(ctx));
    handler();
    ME.with(|m| m.set(by));
    let mut st = lock();
    st.core.irq_exit(i);
    st
}

/// Acts on the core's decision for task `me`: returns when `me` may run again.
fn go(mut st: Held, me: TaskId, mut next: Next) {
    while let Next::Fire(i) = next {
        st = fire(st, i, me);
        next = st.core.resume();
    }
    match next {
        Next::Fire(_) => {}
        Next::Run(t) => {
            st.current = t;
            if t != me {
                baton().turn.notify_all();
                while st.current != me {
                    st = wait(st);
                }
            }
        }
        Next::End(v) => finish(&mut st, v.exit_code()),
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
        std::process::exit(2)
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
    let config = match read_config() {
        Ok(c) => c,
        Err(rejected) => {
            let mut out = std::io::stdout().lock();
            let mut line = String::new();
            let _ = rejected.render(&mut line);
            line.push('\n');
            let _ = Event::RunEnd {
                verdict: Verdict::ConfigRejected as u8,
                steps: 0,
            }
            .render(&mut line);
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
            std::process::exit(Verdict::ConfigRejected.exit_code() as i32)
        }
    };
    let sink = LineSink {
        out: BufWriter::new(std::io::stdout()),
    };
    let state = State {
        core: Core::new(&config, 0, sink),
        current: 0,
        sites: HashMap::new(),
        site_ids: HashSet::new(),
        addrs: HashMap::new(),
        args: config.args.clone(),
        irqs,
    };
    if BATON
        .set(Baton {
            state: Mutex::new(state),
            turn: Condvar::new(),
        })
        .is_err()
    {
        eprintln!("jostle: host::run called twice in one process");
        std::process::exit(2)
    }
    std::panic::set_hook(Box::new(panic_hook));
    ME.with(|m| m.set(0));
    let mut st = lock();
    let sources: Vec<IrqSource> = irqs.iter().map(|q| q.source).collect();
    st.core.declare_irqs(&sources);
    let next = st.core.decide();
    go(st, 0, next);
    main();
    task_exit(0);
    // Task 0 ended but others run: this thread waits for the process to end.
    loop {
        std::thread::park();
    }
}

fn task_exit(me: TaskId) {
    let mut st = lock();
    let mut next = st.core.exit(me);
    while let Next::Fire(i) = next {
        st = fire(st, i, me);
        next = st.core.resume();
    }
    match next {
        Next::Fire(_) => {}
        Next::Run(t) => {
            st.current = t;
            baton().turn.notify_all();
        }
        Next::End(v) => finish(&mut st, v.exit_code()),
    }
}

/// The running task stops before `op`; returns when it has been chosen and `op` executed.
pub fn point(op: Op) {
    let me = ME.with(|m| m.get());
    let mut st = lock();
    if me >= IRQ_CONTEXT {
        // A handler: more urgent sources may fire first, then the operation executes.
        let mut next = st.core.handler_point(me, op);
        loop {
            match next {
                HandlerNext::Run => return,
                HandlerNext::Fire(j) => {
                    st = fire(st, j, me);
                    next = st.core.handler_resume(me);
                }
                HandlerNext::End(v) => finish(&mut st, v.exit_code()),
            }
        }
    }
    let next = st.core.point(me, op);
    go(st, me, next);
}

/// The running task performed the compare-and-swap at `s` on `a` (see `Core::cas_outcome`).
pub fn cas_done(s: u32, a: u32, ord: u8, failure_ord: u8, ok: bool) {
    let me = ME.with(|m| m.get());
    lock().core.cas_outcome(me, s, a, ord, failure_ord, ok);
}

/// Reserves a task id and starts its thread, which waits for its first turn.
pub fn spawn(_region: (*mut u8, usize), entry: fn()) -> TaskId {
    let mut st = lock();
    let Some(id) = st.core.reserve() else {
        let me = st.current;
        let verdict = st.core.task_limit(me);
        finish(&mut st, verdict.exit_code())
    };
    drop(st);
    let thread = std::thread::Builder::new()
        .name(format!("jostle-task-{id}"))
        .spawn(move || {
            ME.with(|m| m.set(id));
            {
                let mut st = lock();
                while st.current != id {
                    st = wait(st);
                }
            }
            entry();
            task_exit(id);
        });
    if let Err(e) = thread {
        panic!("spawn: cannot start a thread: {e}");
    }
    id
}

/// A site's id: [`crate::site::host_site_id`]; the first use prints its definition.
pub fn site(loc: &'static Location<'static>) -> u32 {
    intern_site(&mut lock(), loc.file(), loc.line(), loc.column())
}

/// Interns (file, line, column), printing `J site` when it is new. Two locations with the
/// same hash (never seen; 32 bits) would give the later one the next free id, which the
/// `J site` line records, so the trace stays exact.
fn intern_site(st: &mut State, file: &'static str, line: u32, col: u32) -> u32 {
    if let Some(id) = st.sites.get(&(file, line, col)) {
        return *id;
    }
    let mut id = crate::site::host_site_id(file, line, col);
    while st.site_ids.contains(&id) {
        id = id.wrapping_add(1).max(1);
    }
    st.site_ids.insert(id);
    st.sites.insert((file, line, col), id);
    let _ = writeln!(st.core.sink().out, "J site {id} {file}:{line}:{col}");
    id
}

/// The index of a declared source (firmware passes its sources to `firmware!`).
pub fn irq_index(q: &'static Interrupt) -> u8 {
    let st = lock();
    match st.irqs.iter().position(|d| std::ptr::eq(*d, q)) {
        Some(i) => i as u8,
        None => {
            drop(st);
            panic!("an interrupt source not declared in firmware!(.., interrupts: [..])")
        }
    }
}

/// A memory location's or lock's id: interned in order of first use.
pub fn addr(p: *const ()) -> u32 {
    let mut st = lock();
    let n = st.addrs.len() as u32 + 1;
    *st.addrs.entry(p as usize).or_insert(n)
}

/// Is a run going on (the kernel started)?
#[cfg_attr(not(feature = "critical-section-impl"), allow(dead_code))]
fn running() -> bool {
    BATON.get().is_some()
}

/// Does the running context hold the critical section?
#[cfg_attr(not(feature = "critical-section-impl"), allow(dead_code))]
fn holds_cs() -> bool {
    let me = ME.with(|m| m.get());
    lock().core.holds_cs(me)
}

/// The running task.
pub fn current() -> TaskId {
    ME.with(|m| m.get())
}

/// Firmware argument `i`.
pub fn arg(i: usize) -> Option<u32> {
    lock().args.get(i).copied()
}

fn panic_hook(info: &std::panic::PanicHookInfo<'_>) {
    let me = ME.with(|m| m.get());
    let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = info.payload().downcast_ref::<String>() {
        s.clone()
    } else {
        String::from("Box<dyn Any>")
    };
    let msg = msg.replace('\n', " ");
    // A panic inside the port while this thread holds the lock cannot report through it;
    // any other thread holds it only for a moment (a woken task checking its turn).
    if HOLDING.with(|h| h.get()) {
        eprintln!("jostle: panic inside the kernel: {msg}");
        std::process::exit(Verdict::Panic.exit_code() as i32)
    }
    let mut st = lock();
    let s = match info.location() {
        Some(loc) => {
            // The hook's location is not `'static` by type; the process ends right after,
            // so keeping one copy of its file name for the site table costs nothing.
            let file: &'static str = match st.sites.keys().find(|k| k.0 == loc.file()) {
                Some(k) => k.0,
                None => Box::leak(loc.file().to_owned().into_boxed_str()),
            };
            intern_site(&mut st, file, loc.line(), loc.column())
        }
        None => 0,
    };
    let _ = writeln!(st.core.sink().out, "J panic-msg {msg}");
    st.core.sink().emit(&Event::TaskPanic { t: me, s });
    st.core.abort(Verdict::Panic);
    finish(&mut st, Verdict::Panic.exit_code())
}
