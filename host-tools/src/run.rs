//! One run's outcome: decoded events, resolved sites, verdict, and how to print them.

use crate::decode::{FrameDecoder, Item, parse_line};
use crate::elf::{Firmware, SiteLoc, Sites};
use crate::error::JostleError;
use crate::hostport::HostRun;
use crate::qemu::RawRun;
use jostle_kernel::config::Rejection;
use jostle_kernel::event::{NO_TASK, WaitKind};
use jostle_kernel::{Config, Event, Verdict};
use serde::Serialize;
use std::io::Write;

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
    /// The host port (OS threads).
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
    /// The firmware's own log lines.
    pub logs: Vec<String>,
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
}

impl RunOutcome {
    fn from_items(
        port: Port,
        config: Config,
        items: Vec<Item>,
        elf: Option<&Firmware>,
        ending: Ending,
    ) -> RunOutcome {
        let Ending {
            exit_code,
            timed_out,
            mut error,
            frames,
        } = ending;
        let mut sites = Sites::default();
        let mut events = Vec::new();
        let mut logs = Vec::new();
        let mut panic_message = None;
        let mut panic = None;
        let mut outcome = None;
        let mut steps = 0;
        for item in items {
            match item {
                Item::Site(id, loc) => sites.insert(id, loc),
                Item::PanicMessage(m) => panic_message = Some(m),
                Item::Log(l) => logs.push(l),
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
        if timed_out {
            outcome = Some(Outcome::Timeout);
        } else if error.is_none() {
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
        RunOutcome {
            port,
            config,
            events,
            sites,
            logs,
            outcome,
            steps,
            panic,
            exit_code,
            error,
            frames,
        }
    }

    /// Decodes a QEMU boot of `fw`.
    pub fn from_qemu(fw: &Firmware, config: Config, raw: RawRun) -> RunOutcome {
        let decoded = FrameDecoder::new(&fw.table).decode_all(&raw.stdout);
        let mut error = decoded.error;
        if error.is_none()
            && decoded.frames == 0
            && !raw.timed_out
            && raw.exit_code != Some(0)
            && !raw.stderr.trim().is_empty()
        {
            error = Some(JostleError::QemuFailed(
                raw.stderr.lines().next().unwrap_or_default().to_owned(),
            ));
        }
        Self::from_items(
            Port::Qemu,
            config,
            decoded.items,
            Some(fw),
            Ending {
                exit_code: raw.exit_code,
                timed_out: raw.timed_out,
                error,
                frames: decoded.frames,
            },
        )
    }

    /// Decodes a QEMU boot that ran several seeds (`config.runs`): one outcome per run, in
    /// order, split at each `RunStart`. Each outcome's configuration is that run's alone
    /// (seed `config.seed + k`, one run), so it replays by itself. Runs the boot did not
    /// reach (a run that never ended was killed) are absent: the caller runs them again.
    pub fn batch_from_qemu(fw: &Firmware, config: Config, raw: RawRun) -> Vec<RunOutcome> {
        let decoded = FrameDecoder::new(&fw.table).decode_all(&raw.stdout);
        let mut segments: Vec<Vec<Item>> = vec![Vec::new()];
        for item in decoded.items {
            let starts = matches!(item, Item::Event(Event::RunStart { .. }));
            if starts && segments.last().is_some_and(|s| s.iter().any(is_run_start)) {
                segments.push(Vec::new());
            }
            segments.last_mut().expect("one segment").push(item);
        }
        let n = segments.len();
        let mut error = decoded.error;
        if error.is_none()
            && decoded.frames == 0
            && !raw.timed_out
            && raw.exit_code != Some(0)
            && !raw.stderr.trim().is_empty()
        {
            error = Some(JostleError::QemuFailed(
                raw.stderr.lines().next().unwrap_or_default().to_owned(),
            ));
        }
        let mut outcomes = Vec::with_capacity(n);
        for (k, items) in segments.into_iter().enumerate() {
            let last = k + 1 == n;
            // A run before the last ended with a reset, not an exit: its exit code is the
            // one its verdict maps to.
            let exit_code = if last {
                raw.exit_code
            } else {
                items.iter().find_map(|i| match i {
                    Item::Event(Event::RunEnd { verdict, .. }) => {
                        Verdict::from_u8(*verdict).map(|v| i32::from(v.exit_code()))
                    }
                    _ => None,
                })
            };
            let run_config = Config {
                seed: config.seed.wrapping_add(k as u64),
                runs: 1,
                ..config.clone()
            };
            outcomes.push(Self::from_items(
                Port::Qemu,
                run_config,
                items,
                Some(fw),
                Ending {
                    exit_code,
                    timed_out: last && raw.timed_out,
                    error: if last { error.take() } else { None },
                    frames: decoded.frames,
                },
            ));
        }
        outcomes
    }

    /// Decodes a board's run read from RTT. The end of the run is its `RunEnd` frame (there
    /// is no exit code to cross-check); `timed_out`: silence past the limit; `lost`: the
    /// probe lost the target.
    pub fn from_rtt(
        fw: &Firmware,
        config: Config,
        bytes: &[u8],
        timed_out: bool,
        lost: bool,
    ) -> RunOutcome {
        let decoded = FrameDecoder::new(&fw.table).decode_all(bytes);
        let exit_code = decoded.items.iter().find_map(|i| match i {
            Item::Event(Event::RunEnd { verdict, .. }) => {
                Verdict::from_u8(*verdict).map(|v| i32::from(v.exit_code()))
            }
            _ => None,
        });
        let mut out = Self::from_items(
            Port::Probe,
            config,
            decoded.items,
            Some(fw),
            Ending {
                exit_code,
                timed_out: timed_out || lost,
                // A board lost in the middle of a frame leaves a partial one: the run is
                // marked lost, not the stream corrupt.
                error: if lost { None } else { decoded.error },
                frames: decoded.frames,
            },
        );
        if lost {
            out.outcome = Some(Outcome::TargetLost);
        }
        out
    }

    /// Parses a host-port run.
    pub fn from_host(config: Config, raw: HostRun) -> RunOutcome {
        let items: Vec<Item> = raw.stdout.lines().map(parse_line).collect();
        let frames = items.len();
        Self::from_items(
            Port::Host,
            config,
            items,
            None,
            Ending {
                exit_code: raw.exit_code,
                timed_out: raw.timed_out,
                error: None,
                frames,
            },
        )
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

    /// Prints the interleaving (one line per scheduling event) and the verdict.
    pub fn print_human(&self, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(
            out,
            "{:>5}  {:<4}  {:<30}  site",
            "step", "task", "operation"
        )?;
        let full = self.config.trace == jostle_kernel::TraceLevel::Full;
        let mut step = 0u32;
        for ev in &self.events {
            let is_step = is_step(ev);
            if is_step {
                step += 1;
            }
            if matches!(ev, Event::RunStart { .. } | Event::RunEnd { .. }) {
                continue;
            }
            let step_col = if is_step && full {
                step.to_string()
            } else {
                "-".into()
            };
            let task = ev.task().map_or("-".into(), |t| format!("t{t}"));
            let site = ev.site().map(|s| self.site_text(s)).unwrap_or_default();
            writeln!(
                out,
                "{step_col:>5}  {task:<4}  {:<30}  {site}",
                describe(ev, |s| self.site_text(s))
            )?;
        }
        for log in &self.logs {
            writeln!(out, "log: {log}")?;
        }
        writeln!(out, "{}", self.verdict_line())?;
        Ok(())
    }

    /// One line: the verdict and what explains it.
    pub fn verdict_line(&self) -> String {
        let Some(outcome) = self.outcome else {
            return "verdict: none (the stream ended early)".into();
        };
        let mut line = format!(
            "verdict: {} after {} steps (seed {})",
            outcome.name(),
            self.steps,
            self.config.seed
        );
        if let Some(p) = &self.panic {
            line += &format!(
                ": task t{} panicked at {}",
                p.task,
                p.site.as_ref().map_or("?".into(), |s| s.to_string())
            );
            if let Some(m) = &p.message {
                line += &format!(": {m}");
            }
        }
        for ev in &self.events {
            match *ev {
                Event::ConfigRejected { reason } => {
                    line += &format!(
                        ": {}",
                        Rejection::from_u8(reason).map_or("unknown reason", |r| r.message())
                    );
                }
                Event::StackOverflow { t, depth, size } => {
                    line += &format!(
                        ": task t{t} overflowed its {size}-byte stack (depth {depth} when caught)"
                    );
                }
                Event::HardFault { t, pc, .. } => {
                    line += &format!(": HardFault in task t{t} at pc {pc:#010x}");
                }
                _ => {}
            }
        }
        if outcome == Outcome::Timeout {
            line += ": the firmware never ended (wall-clock limit; partial trace above)";
        }
        line
    }

    /// Prints one JSON object per event, then the summary object.
    pub fn print_json(&self, out: &mut impl Write) -> std::io::Result<()> {
        for ev in &self.events {
            let site = ev.site().map(|s| self.site_text(s));
            let line = serde_json::to_string(&JsonEvent { event: ev, site })?;
            writeln!(out, "{line}")?;
        }
        writeln!(out, "{}", serde_json::to_string(&self.summary())?)
    }

    /// Was a targeted bug made real (a `RealRace`, `AtomicityViolation` or
    /// `DeadlockConfirmed` event)? Under DrFinder, whose aim is a race hidden behind a lock
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
    /// untargeted run counts any finding.
    pub fn is_targeted_finding(&self, ev: &Event) -> bool {
        use jostle_kernel::targets::{role, role_of};
        let bps = &self.config.breakpoints;
        match *ev {
            Event::RealRace { .. } | Event::AtomicityViolation { .. } => true,
            Event::DeadlockConfirmed { .. } if bps.is_empty() => true,
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

    /// Did a failure (panic, stack overflow, fault) follow a confirmation? Such a bug is
    /// harmful; a confirmed bug the run survives may be benign.
    pub fn harmful(&self) -> bool {
        let Some(first) = self.events.iter().position(|e| self.is_targeted_finding(e)) else {
            return false;
        };
        self.events[first..].iter().any(|e| {
            matches!(
                e,
                Event::TaskPanic { .. } | Event::StackOverflow { .. } | Event::HardFault { .. }
            )
        }) || matches!(self.outcome, Some(Outcome::Verdict(Verdict::Deadlock)))
    }

    /// The summary object of `--json`.
    pub fn summary(&self) -> serde_json::Value {
        serde_json::json!({
            "summary": true,
            "verdict": self.outcome.map(|o| o.name()),
            "confirmed": self.confirmed(),
            "harmful": self.harmful(),
            "seed": self.config.seed,
            "steps": self.steps,
            "strategy": self.config.strategy,
            "trace": self.config.trace,
            "args": self.config.args.as_slice(),
            "port": self.port,
            "events": self.events.len(),
            "exit_code": self.exit_code,
            "panic": self.panic,
            "error": self.error.as_ref().map(|e| e.to_string()),
        })
    }
}

/// How the process behind a run ended.
struct Ending {
    exit_code: Option<i32>,
    timed_out: bool,
    error: Option<JostleError>,
    frames: usize,
}

#[derive(Serialize)]
struct JsonEvent<'a> {
    #[serde(flatten)]
    event: &'a Event,
    #[serde(skip_serializing_if = "Option::is_none")]
    site: Option<String>,
}

fn is_run_start(item: &Item) -> bool {
    matches!(item, Item::Event(Event::RunStart { .. }))
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
    )
}

/// Is this event a targeted bug made real (a confirmation)?
pub fn is_finding(ev: &Event) -> bool {
    matches!(
        ev,
        Event::RealRace { .. } | Event::AtomicityViolation { .. } | Event::DeadlockConfirmed { .. }
    )
}

/// The operation's name, as printed and compared across ports (the kernel's event table
/// gives it).
pub fn operation(ev: &Event) -> &'static str {
    ev.kind().name()
}

/// The operation and its operands, for the interleaving; `site_text` names other sites.
pub fn describe(ev: &Event, site_text: impl Fn(u32) -> String) -> String {
    let operands = match *ev {
        Event::Spawn { child, .. } => format!(" t{child}"),
        Event::Join { child, .. } => format!(" t{child}"),
        Event::Read { a, .. } | Event::Write { a, .. } | Event::Update { a, .. } => {
            format!(" {a:#010x}")
        }
        Event::Acquire { l, .. } | Event::Release { l, .. } => format!(" lock {l:#010x}"),
        Event::Signal { g, .. } | Event::Wait { g, .. } => format!(" {g:#010x}"),
        Event::LivelockRelease { steps, .. } => format!(" after {steps} steps"),
        Event::RealRace { t2, s2, a, .. } => {
            format!(" on {a:#010x}, first; then t{t2} at {}", site_text(s2))
        }
        Event::AtomicityViolation { l, by, s, .. } => format!(
            " in this block: lock {l:#010x} taken by t{by} at {} before the re-acquire",
            site_text(s)
        ),
        Event::DeadlockConfirmed { l, holder, .. } => {
            format!(" waits for lock {l:#010x} held by t{holder}")
        }
        Event::Blocked {
            kind, on, holder, ..
        } => {
            let holder = if holder == NO_TASK {
                String::new()
            } else {
                format!(" held by t{holder}")
            };
            match kind {
                k if k == WaitKind::Lock as u8 => format!(" on lock {on:#010x}{holder}"),
                k if k == WaitKind::Join as u8 => format!(" joining t{on}"),
                k if k == WaitKind::Signal as u8 => format!(" on signal {on:#010x}"),
                _ => format!(" on critical section{holder}"),
            }
        }
        _ => String::new(),
    };
    format!("{}{operands}", operation(ev))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jostle_kernel::config::Breakpoint;
    use jostle_kernel::targets::{aux, role};

    fn run(breakpoints: &[Breakpoint], events: Vec<Event>) -> RunOutcome {
        RunOutcome {
            port: Port::Host,
            config: Config {
                breakpoints: heapless::Vec::from_slice(breakpoints).unwrap(),
                ..Config::default()
            },
            events,
            sites: Sites::default(),
            logs: Vec::new(),
            outcome: Some(Outcome::Verdict(Verdict::Deadlock)),
            steps: 0,
            panic: None,
            exit_code: Some(12),
            error: None,
            frames: 0,
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
