//! One decoded run: its events, resolved sites, verdict and panic report, and the queries
//! the engine asks of it (was the target made real, was it harmful, the interleaving's
//! digest). How a run is printed is `output::run_print`; how a transport's raw stream
//! becomes a run is that transport's own decoder, which ends in [`RunOutcome::from_items`].

use crate::error::JostleError;
use crate::trace::decode::Item;
use crate::trace::elf::{Firmware, SiteLoc, Sites};
use crate::trace::symbols::Symbols;
use jostle_kernel::event::{NO_TASK, WaitKind};
use jostle_kernel::{Config, Event, Verdict};
use serde::Serialize;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// How a run ended, as the host sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The kernel gave a verdict.
    Verdict(Verdict),
    /// The wall-clock limit was hit (the firmware never ended).
    Timeout,
    /// The board stopped answering the probe mid-run (the run is marked; a campaign goes
    /// on).
    TargetLost,
}

impl Outcome {
    /// Name in JSON and reports.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Verdict(v) => v.name(),
            Outcome::Timeout => "timeout",
            Outcome::TargetLost => "target_lost",
        }
    }

    /// Exit code of `jostle run`: the verdict's, 17 for a timeout, 18 for a lost target.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Verdict(v) => v.exit_code(),
            Outcome::Timeout => 17,
            Outcome::TargetLost => 18,
        }
    }
}

/// Which port ran the firmware.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Port {
    /// QEMU `mps2-an385`.
    Qemu,
    /// The host port (tasks as coroutines, many runs per process).
    Host,
    /// A board behind a debug probe (defmt over RTT).
    Probe,
}

/// A panic report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PanicReport {
    /// The task.
    pub task: u8,
    /// Where it panicked.
    pub site: Option<SiteLoc>,
    /// The message, if the panic handler had one.
    pub message: Option<String>,
}

/// Names of a run's memory locations and locks.
#[derive(Clone, Debug, Default)]
pub struct Locations {
    /// By location id (a device's address; the host port's number in the run).
    pub names: HashMap<u32, String>,
    /// The host port's locations: bytes from its anchor static ([`Item::Location`]).
    pub offsets: HashMap<u32, i64>,
}

/// The memory location or lock an event names, if any.
pub fn location_of(ev: &Event) -> Option<u32> {
    let mut ev = *ev;
    location_mut(&mut ev).map(|a| *a)
}

/// The memory location or lock an event names, to rename it.
pub fn location_mut(ev: &mut Event) -> Option<&mut u32> {
    match ev {
        Event::Read { a, .. }
        | Event::Write { a, .. }
        | Event::Update { a, .. }
        | Event::AtomicLoad { a, .. }
        | Event::AtomicStore { a, .. }
        | Event::AtomicRmw { a, .. }
        | Event::CasFailed { a, .. }
        | Event::RealRace { a, .. }
        | Event::Unserializable { a, .. } => Some(a),
        Event::Starved { a, .. } if *a != 0 => Some(a),
        Event::Acquire { l, .. }
        | Event::Release { l, .. }
        | Event::AtomicityViolation { l, .. }
        | Event::DeadlockConfirmed { l, .. } => Some(l),
        Event::Signal { g, .. }
        | Event::Wait { g, .. }
        | Event::LostWake { g, .. }
        | Event::WakeFrom { g, .. }
        | Event::TimerFire { g, .. } => Some(g),
        Event::TaskName { a, .. } => Some(a),
        // A resource's lock (0 when the mask names none).
        Event::PrioMask { r, .. } if *r != 0 => Some(r),
        Event::Blocked { kind, on, .. }
            if *kind == WaitKind::Lock as u8 || *kind == WaitKind::Signal as u8 =>
        {
            Some(on)
        }
        _ => None,
    }
}

/// The value the event at `events[i]` read, wrote or left: the [`Event::Value`] that
/// follows it, from the same task (a value is emitted right after its access, before any
/// other scheduling point).
pub fn value_after(events: &[Event], i: usize) -> Option<String> {
    location_of(events.get(i)?)?;
    let (v, k) = Event::value_after(events, i)?;
    Some(jostle_kernel::event::ValueKind::render(k, v))
}

/// Everything known about one run.
#[derive(Debug)]
pub struct RunOutcome {
    /// The port.
    pub port: Port,
    /// The configuration the run was given.
    pub config: Config,
    /// The kernel events, in order.
    pub events: Vec<Event>,
    /// Sites resolved to source.
    pub sites: Sites,
    /// Memory locations and locks named from the image's symbols.
    pub locations: Locations,
    /// The firmware's own log lines.
    pub logs: Vec<String>,
    /// What the application printed on QEMU's standard output (its frames on a channel of
    /// their own): `hprintln!`, a panic handler's message.
    pub app_output: String,
    /// The verdict (`None` if the stream ended without one: see `error`).
    pub outcome: Option<Outcome>,
    /// Scheduling steps (from the `RunEnd` event).
    pub steps: u32,
    /// The panic, if the verdict is `panic`.
    pub panic: Option<PanicReport>,
    /// The process exit code.
    pub exit_code: Option<i32>,
    /// A stream problem: the events before it are still here.
    pub error: Option<JostleError>,
    /// defmt frames (or lines) decoded.
    pub frames: usize,
    /// Tasks named by the firmware (`TaskName`: an Embassy task's function), by task id.
    pub task_names: HashMap<u8, String>,
    /// Where each lost wake-up's sleeper waits (`file:line:col`), by its wake-up signal.
    pub wait_sites: HashMap<u32, String>,
    /// Where each wake came from (`WakeFrom`), by the event's index.
    pub wake_sites: HashMap<usize, String>,
}

/// A task's name from the symbol of the object it was named after (`TaskName`), and its
/// instance `i` (`0xFF`: the only one): an Embassy task pool (`app::consumer::POOL`) gives
/// its function's name (`consumer`, `consumer[1]`), `main` for `#[embassy_executor::main]`;
/// any other symbol its last path segment.
pub fn task_name(symbol: &str, i: u8) -> String {
    let symbol = symbol.split('+').next().unwrap_or(symbol);
    let mut segments = symbol.rsplit("::");
    let last = segments.next().unwrap_or(symbol);
    let name = if last == "POOL" {
        segments.next().unwrap_or(last)
    } else {
        last
    };
    let name = name.strip_prefix("__embassy_").unwrap_or(name);
    if i == 0xFF {
        name.to_owned()
    } else {
        format!("{name}[{i}]")
    }
}

impl RunOutcome {
    /// Assembles a run from its decoded `items` (every transport's decoder ends here):
    /// resolves sites (from `elf` when there is one), takes the verdict from `RunEnd` and
    /// checks it against how the process ended.
    pub fn from_items(
        port: Port,
        config: Config,
        items: Vec<Item>,
        elf: Option<&Firmware>,
        ending: Ending,
    ) -> RunOutcome {
        let Ending {
            exit_code,
            timed_out,
            stuck_pc,
            mut error,
            frames,
        } = ending;
        let mut sites = Sites::default();
        let mut locations = Locations::default();
        let mut events = Vec::new();
        let mut logs = Vec::new();
        let mut app_output = String::new();
        let mut panic_message = None;
        let mut panic = None;
        let mut outcome = None;
        let mut steps = 0;
        for item in items {
            match item {
                Item::Site(id, loc) => sites.insert(id, loc),
                Item::Location(id, offset) => {
                    locations.offsets.insert(id, offset);
                }
                Item::PanicMessage(m) => panic_message = Some(m),
                Item::Log(l) => logs.push(l),
                Item::AppOutput(text) => app_output.push_str(&text),
                Item::Event(ev) => {
                    match ev {
                        Event::TaskPanic { t, s } => {
                            panic = Some(PanicReport {
                                task: t,
                                site: sites.get(s, elf).cloned(),
                                message: panic_message.take(),
                            })
                        }
                        Event::RunEnd { verdict, steps: n } => {
                            steps = n;
                            outcome = Verdict::from_u8(verdict).map(Outcome::Verdict);
                        }
                        _ => {}
                    }
                    if let Some(s) = ev.site() {
                        sites.get(s, elf);
                    }
                    events.push(ev);
                }
            }
        }
        // An application framework's app ends runs itself: its own panic handler, its
        // semihosting exit (no `RunEnd`: QEMU exits with the app's code).
        let mut timed_out = timed_out;
        let mut app_ended = false;
        if let Some(elf) = elf.filter(|f| f.board.framework.is_some()) {
            let ended =
                AppEnding::read(&app_output, &logs, outcome, exit_code, timed_out).or_else(|| {
                    let pc = stuck_pc.filter(|_| timed_out && outcome.is_none())?;
                    AppEnding::spinning(&elf.function_at(pc)?)
                });
            if let Some(ending) = ended {
                if let Some(p) = ending.panic {
                    panic = Some(PanicReport {
                        task: events.iter().rev().find_map(Event::task).unwrap_or(NO_TASK),
                        site: p.0,
                        message: p.1,
                    });
                }
                if outcome.is_none() {
                    steps = events.iter().filter(|e| is_step(e)).count() as u32;
                }
                outcome = Some(Outcome::Verdict(ending.verdict));
                error = None;
                // A panic handler that spins (panic-halt) ran into the limit: the panic is
                // the verdict. The exit code is the app's, not a verdict's.
                timed_out = false;
                app_ended = true;
            }
        }
        if timed_out {
            outcome = Some(Outcome::Timeout);
        } else if error.is_none() && !app_ended {
            match outcome {
                None => {
                    error = Some(JostleError::StreamTruncated(format!(
                        "the firmware stopped without a verdict after {} events (exit code {})",
                        events.len(),
                        exit_code.map_or("none".into(), |c| c.to_string())
                    )))
                }
                Some(Outcome::Verdict(v)) if exit_code != Some(v.exit_code() as i32) => {
                    error = Some(JostleError::StreamCorrupt(format!(
                        "the stream's verdict `{}` disagrees with the firmware's exit code {}",
                        v.name(),
                        exit_code.map_or("none".into(), |c| c.to_string())
                    )))
                }
                _ => {}
            }
        }
        // A device's location is its address.
        if let Some(elf) = elf {
            for a in events.iter().filter_map(location_of) {
                if let Entry::Vacant(e) = locations.names.entry(a)
                    && let Some(name) = elf.symbols.name_of(u64::from(a))
                {
                    // A framework's resource by its user's name (RTIC's `counter`).
                    e.insert(crate::trace::framework::resource_name(&name).unwrap_or(name));
                }
            }
        }
        let mut task_names = HashMap::new();
        let mut wait_sites = HashMap::new();
        let mut wake_sites = HashMap::new();
        for (i, ev) in events.iter().enumerate() {
            match *ev {
                Event::WakeFrom { p0, p1, p2, p3, .. } => {
                    if let Some(site) = elf.and_then(|elf| elf.wait_site(&[p0, p1, p2, p3])) {
                        wake_sites.insert(i, site.to_string());
                    }
                }
                Event::TaskName { t, a, i } => {
                    if let Some(symbol) = elf.and_then(|elf| elf.symbols.name_of(u64::from(a))) {
                        task_names.insert(t, task_name(&symbol, i));
                    }
                }
                Event::ContextName { t, a, n } => {
                    if let Some(elf) = elf
                        && let Some(text) = elf
                            .read(a, n as usize)
                            .and_then(|b| std::str::from_utf8(b).ok())
                    {
                        task_names.insert(t, elf.context_name(text));
                    }
                }
                Event::LostWake {
                    s,
                    g,
                    p0,
                    p1,
                    p2,
                    p3,
                    ..
                } => {
                    let site = if s != 0 {
                        sites.known(s).map(ToString::to_string)
                    } else {
                        elf.and_then(|elf| elf.wait_site(&[p0, p1, p2, p3]))
                            .map(|l| l.to_string())
                    };
                    if let Some(site) = site {
                        wait_sites.insert(g, site);
                    }
                }
                _ => {}
            }
        }
        RunOutcome {
            port,
            config,
            events,
            sites,
            locations,
            logs,
            app_output,
            outcome,
            steps,
            panic,
            exit_code,
            error,
            frames,
            task_names,
            wait_sites,
            wake_sites,
        }
    }

    /// The site shown for `events[i]`: its own, or where a wake came from.
    pub fn event_site(&self, i: usize) -> String {
        match self.events[i] {
            Event::WakeFrom { .. } => self.wake_sites.get(&i).cloned().unwrap_or_default(),
            ev => ev.site().map(|s| self.site_text(s)).unwrap_or_default(),
        }
    }

    /// Task `t` as shown: its name when the firmware named it (`consumer`), else `t3`.
    pub fn task_label(&self, t: u8) -> String {
        match self.task_names.get(&t) {
            Some(name) => name.clone(),
            None => format!("t{t}"),
        }
    }

    /// The width of a task column: the longest task name, at least 4.
    pub fn task_column(&self) -> usize {
        self.task_names
            .values()
            .map(String::len)
            .max()
            .unwrap_or(0)
            .max(4)
    }

    /// Each lost wake-up of the run, as "task T waits at file:line:col", in event order.
    pub fn lost_wakes(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match *e {
                Event::LostWake { t, g, .. } => {
                    let who = if t == NO_TASK {
                        self.location_text(g)
                    } else {
                        self.task_label(t)
                    };
                    let at = self
                        .wait_sites
                        .get(&g)
                        .cloned()
                        .unwrap_or_else(|| "an unknown place".into());
                    Some(format!("task {who} waits at {at}"))
                }
                _ => None,
            })
            .collect()
    }

    /// The name of memory location or lock `a` (`app::Z`, `app::BUF+4`), or its id in hex.
    pub fn location_text(&self, a: u32) -> String {
        match self.locations.names.get(&a) {
            Some(name) => name.clone(),
            None => format!("{a:#010x}"),
        }
    }

    /// The value the access at `events[i]` read, wrote or left (`7`, `-1`, `true`), when
    /// the run traced it: the [`Event::Value`] right after it, of the same task.
    pub fn value_text(&self, i: usize) -> Option<String> {
        value_after(&self.events, i)
    }

    /// Names the host port's locations from its executable's symbols.
    pub fn name_locations(&mut self, symbols: &Symbols) {
        let Locations { names, offsets } = &mut self.locations;
        for (&id, &offset) in offsets.iter() {
            if let Some(name) = symbols.name_from_anchor(offset) {
                names.insert(id, name);
            }
        }
        // Tasks named after a static (an Embassy task's pool): its location's id here.
        for ev in &self.events {
            if let Event::TaskName { t, a, i } = *ev
                && let Some(symbol) = names.get(&a)
            {
                self.task_names.insert(t, task_name(symbol, i));
            }
        }
    }

    /// Names where the host port's lost wake-ups wait and where its wakes come from:
    /// `resolve` turns return addresses (as the firmware kept them) into `file:line:col`.
    /// On the device the ELF resolves them as the run is read; a host-port executable's
    /// line information is read only when a run has such an event.
    pub fn name_code_sites(&mut self, resolve: impl Fn(&[u32]) -> Option<String>) {
        for (i, ev) in self.events.iter().enumerate() {
            match *ev {
                Event::WakeFrom { p0, p1, p2, p3, .. }
                    if p0 != 0 && !self.wake_sites.contains_key(&i) =>
                {
                    if let Some(site) = resolve(&[p0, p1, p2, p3]) {
                        self.wake_sites.insert(i, site);
                    }
                }
                Event::LostWake {
                    s: 0,
                    g,
                    p0,
                    p1,
                    p2,
                    p3,
                    ..
                } if p0 != 0 && !self.wait_sites.contains_key(&g) => {
                    if let Some(site) = resolve(&[p0, p1, p2, p3]) {
                        self.wait_sites.insert(g, site);
                    }
                }
                _ => {}
            }
        }
    }

    /// The site of `id` as `file:line:col`, or its raw id.
    pub fn site_text(&self, id: u32) -> String {
        match self.sites.known(id) {
            Some(loc) => loc.to_string(),
            None => format!("site#{id:#x}"),
        }
    }

    /// The scheduling decisions as (task, site, operation kind), comparable across ports.
    pub fn decisions(&self) -> Vec<(u8, String, &'static str)> {
        self.events
            .iter()
            .filter(|e| is_step(e))
            .map(|e| {
                let site = e.site().map(|s| self.site_text(s)).unwrap_or_default();
                (e.task().unwrap_or(NO_TASK), site, operation(e))
            })
            .collect()
    }

    /// Was a targeted bug made real (a `RealRace`, `AtomicityViolation`, `Unserializable`
    /// or `DeadlockConfirmed` event)? Under DrFinder, whose aim is a race hidden behind a lock
    /// hand-off, also: the happens-before detector finds the targeted race (any race when
    /// untargeted) in the trace (full trace level needed).
    pub fn confirmed(&self) -> bool {
        self.events.iter().any(|e| self.is_targeted_finding(e))
            || (self.config.strategy == jostle_kernel::config::StrategyId::DrFinder
                && self.happened_race())
    }

    /// Is `ev` a finding about this run's target? The kernel reports `RealRace` and
    /// `AtomicityViolation` only for targeted breakpoints, but a deadlock whatever the
    /// strategy: it confirms a targeted cycle only when every blocked acquire is one of the
    /// cycle's (a race-targeted run that deadlocks elsewhere confirms nothing). An
    /// untargeted run counts any finding (SURW's breakpoints aim at no bug, nor do a
    /// schedule's entries).
    pub fn is_targeted_finding(&self, ev: &Event) -> bool {
        use jostle_kernel::targets::{role, role_of};
        let bps = &self.config.breakpoints;
        match *ev {
            Event::RealRace { .. }
            | Event::AtomicityViolation { .. }
            | Event::Unserializable { .. } => true,
            Event::DeadlockConfirmed { .. }
                if bps.iter().all(|b| {
                    matches!(
                        role_of(b.aux),
                        role::INTERESTING
                            | role::WEIGHT
                            | role::SWITCH
                            | role::FIRE_AT
                            | role::POLL_AT
                    )
                }) =>
            {
                true
            }
            Event::DeadlockConfirmed { .. } => {
                let acquire = |s: u32| {
                    bps.iter()
                        .any(|b| role_of(b.aux) == role::ACQUIRE && b.site == s)
                };
                self.events.iter().all(|e| match *e {
                    Event::DeadlockConfirmed { s, .. } => acquire(s),
                    _ => true,
                })
            }
            _ => false,
        }
    }

    /// Digest of this run's interleaving: FNV-1a 64 over each executed step's task,
    /// operation and `file:line:col` (so a rebuild that keeps the sources gives the same).
    pub fn schedule_digest(&self) -> String {
        let mut text = String::new();
        for e in self.events.iter().filter(|e| is_step(e)) {
            let site = e.site().map(|s| self.site_text(s)).unwrap_or_default();
            text += &format!("{} {} {site}\n", e.task().unwrap_or(0), operation(e));
        }
        format!("{:016x}", jostle_checker::fnv1a64(text.as_bytes()))
    }

    /// Does the happens-before detector find, in this run's trace, the race the run targets
    /// (its race breakpoints), or any race when it targets none? Needs the full trace.
    pub fn happened_race(&self) -> bool {
        // The kernel's own reading of the race breakpoints (the pair's two sides).
        let targets = jostle_kernel::targets::Targets::new(&self.config.breakpoints);
        jostle_checker::hb::detect(&self.events).iter().any(|pair| {
            let (a, b) = pair.sites();
            !targets.race || targets.is_pair(a, b)
        })
    }

    /// Did a failure (panic, stack overflow, fault, deadlock, starvation) follow a
    /// confirmation? Such a bug is harmful; a confirmed bug the run survives may be benign.
    pub fn harmful(&self) -> bool {
        let Some(first) = self.events.iter().position(|e| self.is_targeted_finding(e)) else {
            return false;
        };
        self.events[first..].iter().any(|e| {
            matches!(
                e,
                Event::TaskPanic { .. } | Event::StackOverflow { .. } | Event::HardFault { .. }
            )
        }) || matches!(
            self.outcome,
            Some(Outcome::Verdict(Verdict::Deadlock | Verdict::Starvation))
        )
    }
}

impl RunOutcome {
    /// The runs of one boot (or host-port process) that ran several seeds (`config.runs`):
    /// one outcome per run, in order, split at each `RunStart`. Each outcome's configuration
    /// is that run's alone (seed `config.seed + k`, one run), so it replays by itself. Runs
    /// the boot did not reach (a run that never ended was killed) are absent: the caller
    /// runs them again. `ending` is the boot's, and so the last run's; a run before the last
    /// ended with a reset, not an exit: its exit code is the one its verdict maps to.
    pub fn split_boot(
        port: Port,
        config: Config,
        items: Vec<Item>,
        elf: Option<&Firmware>,
        ending: Ending,
    ) -> Vec<RunOutcome> {
        let is_run_start = |item: &Item| matches!(item, Item::Event(Event::RunStart { .. }));
        let mut segments: Vec<Vec<Item>> = vec![Vec::new()];
        for item in items {
            if is_run_start(&item) && segments.last().is_some_and(|s| s.iter().any(is_run_start)) {
                segments.push(Vec::new());
            }
            segments.last_mut().expect("one segment").push(item);
        }
        let run_config = |k: usize| Config {
            seed: config.seed.wrapping_add(k as u64),
            runs: 1,
            ..config.clone()
        };
        // Every run but the last ended with a reset: its exit code is its verdict's.
        let last = segments.pop().expect("one segment");
        let mut outcomes = Vec::with_capacity(segments.len() + 1);
        for (k, items) in segments.into_iter().enumerate() {
            let reset = Ending {
                exit_code: verdict_exit_code(&items),
                timed_out: false,
                stuck_pc: None,
                error: None,
                frames: ending.frames,
            };
            outcomes.push(Self::from_items(port, run_config(k), items, elf, reset));
        }
        let k = outcomes.len();
        outcomes.push(Self::from_items(port, run_config(k), last, elf, ending));
        outcomes
    }
}

/// The exit code of the verdict in `items`' `RunEnd`: a run the process outlived (a reset
/// between the runs of a boot, or a served boot that goes on) has none of its own.
pub fn verdict_exit_code(items: &[Item]) -> Option<i32> {
    items.iter().find_map(|i| match i {
        Item::Event(Event::RunEnd { verdict, .. }) => {
            Verdict::from_u8(*verdict).map(|v| i32::from(v.exit_code()))
        }
        _ => None,
    })
}

/// How an application that owns `main` (RTIC, Embassy) ended a run that the kernel did not:
/// its panic handler wrote `panicked at FILE:LINE:COL:` and the message (on QEMU's standard
/// output, or as a defmt log line before faulting), or it left through semihosting (QEMU's
/// exit code is the app's: 0 a pass, anything else a failure).
struct AppEnding {
    verdict: Verdict,
    /// Where and why, when it panicked.
    panic: Option<(Option<SiteLoc>, Option<String>)>,
}

impl AppEnding {
    fn read(
        app_output: &str,
        logs: &[String],
        outcome: Option<Outcome>,
        exit_code: Option<i32>,
        timed_out: bool,
    ) -> Option<AppEnding> {
        let kernel_verdict = match outcome {
            Some(Outcome::Verdict(v)) => Some(v),
            _ => None,
        };
        // A panic handler that faults after its message (panic-probe's `udf`) or exits
        // (panic-semihosting's `exit`) panicked all the same; one that spins (panic-halt)
        // is a timeout, told apart only by its message.
        let panicked = std::iter::once(app_output)
            .chain(logs.iter().map(String::as_str))
            .find_map(parse_panic);
        match (panicked, kernel_verdict) {
            (Some(p), None | Some(Verdict::HardFault)) => Some(AppEnding {
                verdict: Verdict::Panic,
                panic: Some(p),
            }),
            (_, Some(_)) => None,
            (None, None) if timed_out => None,
            (None, None) => exit_code.map(|code| AppEnding {
                verdict: if code == 0 {
                    Verdict::Pass
                } else {
                    Verdict::AppFailure
                },
                panic: None,
            }),
        }
    }
}

impl AppEnding {
    /// A run gone silent whose CPU spins in `function`: a panic handler that says nothing
    /// (`panic-halt`'s `loop {}`, inlined into the panic entry or not) or cortex-m-rt's
    /// default `HardFault`. Anywhere else the silence stays a timeout.
    fn spinning(function: &str) -> Option<AppEnding> {
        // The panic handler's symbol is `rust_begin_unwind` (`__rustc::` in v0 mangling).
        let panics = function.trim_start_matches("__rustc::") == "rust_begin_unwind"
            || function.starts_with("core::panicking::")
            || function.starts_with("panic_halt::");
        if panics {
            return Some(AppEnding {
                verdict: Verdict::Panic,
                panic: Some((
                    None,
                    Some(format!(
                        "the app's panic handler spins silently (in {function}): patch panic-halt with shims/panic-halt for the panic's site and message"
                    )),
                )),
            });
        }
        matches!(function, "HardFault" | "HardFault_").then_some(AppEnding {
            verdict: Verdict::HardFault,
            panic: None,
        })
    }
}

/// The location and message of a Rust panic report (`panicked at src/main.rs:10:5:` then
/// the message on the next line; older formats put the message first, quoted).
fn parse_panic(text: &str) -> Option<(Option<SiteLoc>, Option<String>)> {
    let at = text.find("panicked at ")?;
    let rest = &text[at + "panicked at ".len()..];
    let (head, tail) = rest.split_once('\n').unwrap_or((rest, ""));
    let head = head.trim_end().trim_end_matches(':');
    let loc = |s: &str| {
        let mut parts = s.rsplitn(3, ':');
        let col = parts.next()?.trim().parse().ok()?;
        let line = parts.next()?.trim().parse().ok()?;
        let file = parts.next()?.trim().to_owned();
        Some(SiteLoc { file, line, col })
    };
    // `panicked at 'message', src/main.rs:10:5` (before Rust 1.73).
    if let Some(quoted) = head.strip_prefix('\'')
        && let Some((message, place)) = quoted.rsplit_once("', ")
    {
        return Some((loc(place), Some(message.to_owned())));
    }
    let message = tail.lines().next().map(str::trim).filter(|m| !m.is_empty());
    Some((loc(head), message.map(str::to_owned)))
}

/// How the process (or board) behind a run ended.
pub struct Ending {
    /// The process exit code (`None` when killed, or none to give).
    pub exit_code: Option<i32>,
    /// The wall-clock limit was hit.
    pub timed_out: bool,
    /// Where the CPU was when the limit was hit, if the transport could ask (QEMU).
    pub stuck_pc: Option<u32>,
    /// A stream problem found while decoding.
    pub error: Option<JostleError>,
    /// defmt frames (or lines) decoded.
    pub frames: usize,
}

/// Does this event record an executed scheduling step?
pub fn is_step(ev: &Event) -> bool {
    matches!(
        ev,
        Event::Spawn { .. }
            | Event::TaskStart { .. }
            | Event::Join { .. }
            | Event::Read { .. }
            | Event::Write { .. }
            | Event::Update { .. }
            | Event::Acquire { .. }
            | Event::Release { .. }
            | Event::AtomicEnter { .. }
            | Event::AtomicExit { .. }
            | Event::Signal { .. }
            | Event::Wait { .. }
            | Event::CsEnter { .. }
            | Event::CsExit { .. }
            | Event::Yield { .. }
            | Event::FrameEnter { .. }
            | Event::FrameExit { .. }
            | Event::AtomicLoad { .. }
            | Event::AtomicStore { .. }
            | Event::AtomicRmw { .. }
            | Event::CasFailed { .. }
            | Event::IrqRequest { .. }
            | Event::IrqEnter { .. }
            | Event::IrqExit { .. }
            | Event::IrqMask { .. }
            | Event::PrioMask { .. }
    )
}

/// Is this event a targeted bug made real (a confirmation)?
pub fn is_finding(ev: &Event) -> bool {
    matches!(
        ev,
        Event::RealRace { .. }
            | Event::AtomicityViolation { .. }
            | Event::Unserializable { .. }
            | Event::DeadlockConfirmed { .. }
    )
}

/// The operation's name, as printed and compared across ports (the kernel's event table
/// gives it).
pub fn operation(ev: &Event) -> &'static str {
    ev.kind().name()
}

#[cfg(test)]
impl RunOutcome {
    /// A run of `config` that passed in one step without events, its error `error` (for
    /// tests of what is done with runs: transports that make none, the retry).
    pub(crate) fn passed(config: Config, error: Option<JostleError>) -> RunOutcome {
        RunOutcome {
            port: Port::Host,
            config,
            events: Vec::new(),
            sites: Default::default(),
            locations: Default::default(),
            logs: Vec::new(),
            app_output: String::new(),
            outcome: Some(Outcome::Verdict(Verdict::Pass)),
            steps: 1,
            panic: None,
            exit_code: Some(0),
            error,
            frames: 0,
            task_names: Default::default(),
            wait_sites: Default::default(),
            wake_sites: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jostle_kernel::config::Breakpoint;

    #[test]
    fn a_cpu_spinning_in_a_panic_or_fault_handler_is_that_failure_and_elsewhere_a_timeout() {
        let verdict = |f: &str| AppEnding::spinning(f).map(|e| e.verdict);
        for f in [
            "__rustc::rust_begin_unwind",
            "rust_begin_unwind",
            "core::panicking::panic_fmt",
            "panic_halt::panic",
        ] {
            assert_eq!(verdict(f), Some(Verdict::Panic), "{f}");
        }
        assert_eq!(verdict("HardFault_"), Some(Verdict::HardFault));
        for f in ["app::main", "DefaultHandler_", "my_panicky_loop"] {
            assert_eq!(verdict(f), None, "{f}");
        }
    }
    use jostle_kernel::targets::{aux, role};

    fn run(breakpoints: &[Breakpoint], events: Vec<Event>) -> RunOutcome {
        RunOutcome {
            port: Port::Host,
            config: Config {
                breakpoints: jostle_kernel::fixed::Vec::from_slice(breakpoints).unwrap(),
                ..Config::default()
            },
            events,
            sites: Sites::default(),
            locations: Locations::default(),
            logs: Vec::new(),
            app_output: String::new(),
            outcome: Some(Outcome::Verdict(Verdict::Deadlock)),
            steps: 0,
            panic: None,
            exit_code: Some(12),
            error: None,
            frames: 0,
            task_names: Default::default(),
            wait_sites: Default::default(),
            wake_sites: Default::default(),
        }
    }

    #[test]
    fn a_deadlock_confirms_only_the_cycle_it_closes() {
        let deadlock = |s| Event::DeadlockConfirmed {
            t: 1,
            s,
            l: 7,
            holder: 2,
        };
        let race = [
            Breakpoint {
                site: 10,
                aux: aux(role::RACE, 0),
            },
            Breakpoint {
                site: 11,
                aux: aux(role::RACE, 1),
            },
        ];
        let cycle = [
            Breakpoint {
                site: 20,
                aux: aux(role::ACQUIRE, 0),
            },
            Breakpoint {
                site: 21,
                aux: aux(role::ACQUIRE, 1),
            },
        ];
        // A run aimed at a race that deadlocks: the race is not confirmed, nor harmful.
        let r = run(&race, vec![deadlock(20), deadlock(21)]);
        assert!(!r.confirmed() && !r.harmful());
        // Aimed at the cycle: confirmed (and harmful: the run deadlocked).
        let r = run(&cycle, vec![deadlock(20), deadlock(21)]);
        assert!(r.confirmed() && r.harmful());
        // Another cycle (an acquire that is not the target's) confirms nothing.
        let r = run(&cycle, vec![deadlock(20), deadlock(30)]);
        assert!(!r.confirmed());
        // Untargeted: any finding counts.
        assert!(run(&[], vec![deadlock(30)]).confirmed());
    }
}
