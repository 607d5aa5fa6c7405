//! How a run is shown: the interleaving (one line per scheduling event), the verdict line,
//! and `--json` (one object per event, then the summary object).

use crate::trace::run::{Outcome, RunOutcome, is_step, operation};
use jostle_kernel::config::Rejection;
use jostle_kernel::event::{IRQ_CONTEXT, NO_TASK, WaitKind};
use jostle_kernel::sched::time::NO_SOURCE;
use jostle_kernel::{Event, Verdict};
use serde::Serialize;
use std::io::Write;

impl RunOutcome {
    /// Prints the interleaving (one line per scheduling event) and the verdict.
    pub fn print_human(&self, out: &mut impl Write) -> std::io::Result<()> {
        // The task column fits the tasks' names (`consumer`), at least `t12`.
        let w = self.task_column();
        writeln!(
            out,
            "{:>5}  {:<w$}  {:<30}  site",
            "step", "task", "operation"
        )?;
        let full = self.config.trace == jostle_kernel::TraceLevel::Full;
        let mut step = 0u32;
        for (i, ev) in self.events.iter().enumerate() {
            let is_step = is_step(ev);
            if is_step {
                step += 1;
            }
            // A value shows on its access's line.
            if matches!(
                ev,
                Event::RunStart { .. } | Event::RunEnd { .. } | Event::Value { .. }
            ) {
                continue;
            }
            let value = self
                .value_text(i)
                .map_or(String::new(), |v| format!(" = {v}"));
            let step_col = if is_step && full {
                step.to_string()
            } else {
                "-".into()
            };
            let task = ev.task().map_or("-".into(), |t| self.task_label(t));
            let site = self.event_site(i);
            writeln!(
                out,
                "{step_col:>5}  {task:<w$}  {:<30}  {}",
                describe(
                    ev,
                    |s| super::short_site(&self.site_text(s)).to_owned(),
                    |a| self.location_text(a),
                ) + &value,
                super::short_site(&site)
            )?;
        }
        for log in &self.logs {
            writeln!(out, "log: {log}")?;
        }
        for line in self.app_output.lines() {
            writeln!(out, "app: {line}")?;
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
                ": task {} panicked at {}",
                self.task_label(p.task),
                p.site.as_ref().map_or("?".into(), |s| s.to_string())
            );
            if let Some(m) = &p.message {
                line += &format!(": {m}");
            }
        }
        if outcome == Outcome::Verdict(Verdict::AppFailure) {
            line += ": the application exited reporting failure";
            if let Some(code) = self.exit_code {
                line += &format!(" (exit code {code})");
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
                Event::StackOverflow { t, depth, size } if t >= IRQ_CONTEXT && t != NO_TASK => {
                    line += &format!(
                        ": the handler of interrupt source {} overflowed the {size}-byte main stack (depth {depth} when caught)",
                        t - IRQ_CONTEXT
                    );
                }
                Event::StackOverflow { t, depth, size } => {
                    line += &format!(
                        ": task t{t} overflowed its {size}-byte stack (depth {depth} when caught)"
                    );
                }
                Event::HardFault {
                    t,
                    pc,
                    lr,
                    xpsr,
                    cfsr,
                    hfsr,
                    mmfar,
                    bfar,
                } => {
                    let words = crate::trace::fault::describe(cfsr, hfsr, mmfar, bfar);
                    line += &format!(
                        ": HardFault in task t{t}: {} (pc {pc:#010x}, lr {lr:#010x}, xpsr {xpsr:#010x}; cfsr {cfsr:#010x}, hfsr {hfsr:#010x}, mmfar {mmfar:#010x}, bfar {bfar:#010x})",
                        if words.is_empty() {
                            "no fault status (ARMv6-M)".to_owned()
                        } else {
                            words.join("; ")
                        }
                    );
                }
                Event::TaskLimit { t, max } => {
                    line += &format!(
                        ": task t{t} spawned past the task table's {max} slots (enable the jostle crate's tasks-16/32/64/128 feature)"
                    );
                }
                Event::Starved { t, s, a, steps } => {
                    let reads = (a != 0).then(|| self.location_text(a));
                    line += &format!(
                        ": {}",
                        crate::trace::failure::starvation_text(t, reads, steps)
                    );
                    if s != 0 {
                        line += &format!(" (last read at {})", self.site_text(s));
                    }
                }
                Event::HandlerBlocked { t, s, .. } => {
                    line += &format!(
                        ": the interrupt handler running as t{t} would block at {} (on hardware the system hangs)",
                        self.site_text(s)
                    );
                }
                _ => {}
            }
        }
        let lost = self.lost_wakes();
        if !lost.is_empty() {
            line += &format!(
                ": lost wake-up: {} and nothing can wake it",
                lost.join(", ")
            );
        }
        if outcome == Outcome::Timeout {
            line += ": the firmware never ended (wall-clock limit; partial trace above)";
        }
        line
    }

    /// Prints one JSON object per event, then the summary object.
    pub fn print_json(&self, out: &mut impl Write) -> std::io::Result<()> {
        for (i, ev) in self.events.iter().enumerate() {
            let site = ev.site().map(|s| self.site_text(s));
            let location = crate::trace::run::location_of(ev)
                .and_then(|a| self.locations.names.get(&a).cloned());
            let line = serde_json::to_string(&JsonEvent {
                event: ev,
                site,
                location,
                value: self.value_text(i),
            })?;
            writeln!(out, "{line}")?;
        }
        writeln!(out, "{}", serde_json::to_string(&self.summary())?)
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
            "args": &*self.config.args,
            "port": self.port,
            "events": self.events.len(),
            "exit_code": self.exit_code,
            "panic": self.panic,
            "error": self.error.as_ref().map(|e| e.to_string()),
        })
    }
}

#[derive(Serialize)]
struct JsonEvent<'a> {
    #[serde(flatten)]
    event: &'a Event,
    #[serde(skip_serializing_if = "Option::is_none")]
    site: Option<String>,
    /// The name of the memory location or lock the event names, from the image's symbols.
    #[serde(skip_serializing_if = "Option::is_none")]
    location: Option<String>,
    /// The value the access read, wrote or left, as `jostle run` shows it (`7`, `-1`,
    /// `true`, `'a'`), when traced (also an event of its own, `value`, just after).
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<String>,
}

/// The operation and its operands, for the interleaving; `site_text` names other sites
/// and `name` memory locations and locks.
pub fn describe(
    ev: &Event,
    site_text: impl Fn(u32) -> String,
    name: impl Fn(u32) -> String,
) -> String {
    // The location or lock the event names (`trace::run::location_of` lists them).
    let at = crate::trace::run::location_of(ev)
        .map(name)
        .unwrap_or_default();
    let operands = match *ev {
        Event::Spawn { child, .. } => format!(" t{child}"),
        Event::Join { child, .. } => format!(" t{child}"),
        Event::Acquire { .. } | Event::Release { .. } => format!(" lock {at}"),
        Event::LivelockRelease { steps, .. } => format!(" after {steps} steps"),
        Event::TimeAdvance { now } => format!(" to tick {now}"),
        Event::TimerFire { k, i, .. } if i != NO_SOURCE => {
            format!(" {k:#x}: requests interrupt source {i}")
        }
        Event::TimerFire { k, .. } => format!(" {k:#x}: wakes {at}"),
        Event::TaskName { i, .. } if i != NO_SOURCE => format!(" {at} (instance {i})"),
        Event::RealRace { t2, s2, .. } => {
            format!(" on {at}, first; then t{t2} at {}", site_text(s2))
        }
        Event::Unserializable { by, s2, .. } => {
            format!(" on {at}: t{by} at {} came between", site_text(s2))
        }
        Event::AtomicityViolation { by, s, .. } => format!(
            " in this block: lock {at} taken by t{by} at {} before the re-acquire",
            site_text(s)
        ),
        Event::DeadlockConfirmed { holder, .. } => {
            format!(" waits for lock {at} held by t{holder}")
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
                k if k == WaitKind::Lock as u8 => format!(" on lock {at}{holder}"),
                k if k == WaitKind::Join as u8 => format!(" joining t{on}"),
                k if k == WaitKind::Signal as u8 => format!(" on signal {at}"),
                _ => format!(" on critical section{holder}"),
            }
        }
        // Accesses, atomics, signals: the location alone.
        _ if !at.is_empty() => format!(" {at}"),
        _ => String::new(),
    };
    format!("{}{operands}", operation(ev))
}
