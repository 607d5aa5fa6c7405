//! What a run that went wrong shows, whatever found it: its signature. Runs with the same
//! signature are one finding: the verdict kind, a site that does not depend on which task
//! got there (the panic's, the blocked acquires', the handler's), and the panic message with
//! its numbers masked (`left: 3` and `left: 4` are the same assertion).
//!
//! Failures (panic, deadlock, stack overflow, HardFault, a handler that would block, a task
//! that starves) are bugs. A run stopped by the step limit or the wall clock is a *suspected*
//! livelock or starvation: reported, kept apart from the failures. A run in which the
//! strategy held a task back until the livelock bound released it is neither: the
//! starvation was the strategy's.

use crate::trace::run::{Outcome, RunOutcome};
use jostle_kernel::event::{IRQ_CONTEXT, NO_TASK};
use jostle_kernel::{Event, Verdict};

/// Failure, or suspected livelock / starvation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// The run failed: a bug.
    Failure,
    /// The run did not end, or a task starved: maybe a bug.
    Suspected,
}

impl Class {
    /// Name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Class::Failure => "failure",
            Class::Suspected => "suspected",
        }
    }
}

/// The signature of a failing (or suspect) run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// Failure or suspected.
    pub class: Class,
    /// The verdict (`panic`, `deadlock`, ..., `starvation`; `step_limit`, `timeout`).
    pub verdict: String,
    /// Where: `file:line:col` (several, space-separated, for a deadlock), or empty.
    pub site: String,
    /// The message with numbers masked (`N`).
    pub message: String,
    /// The message as this run had it.
    pub example: String,
}

impl Signature {
    /// The finding's id: 16 hex digits of FNV-1a 64 over class, verdict, site and message.
    pub fn id(&self) -> String {
        let text = format!(
            "{}\n{}\n{}\n{}",
            self.class.name(),
            self.verdict,
            self.site,
            self.message
        );
        format!("{:016x}", jostle_checker::fnv1a64(text.as_bytes()))
    }
}

/// The signature of `run`, or `None` when it passed without a task starving (or ended in a
/// way that is not the firmware's: a lost target, a refused configuration, the task limit).
pub fn signature(run: &RunOutcome) -> Option<Signature> {
    let site_of = |s: u32| run.site_text(s);
    let failure = |verdict: &str, site: String, example: String| {
        Some(Signature {
            class: Class::Failure,
            verdict: verdict.to_owned(),
            site,
            message: mask_numbers(&example),
            example,
        })
    };
    let verdict = match run.outcome? {
        Outcome::Verdict(v) => v,
        Outcome::Timeout => return suspected("timeout", "the firmware never ended".into()),
        Outcome::TargetLost => return None,
    };
    match verdict {
        Verdict::Panic => {
            let p = run.panic.as_ref();
            let site = p
                .and_then(|p| p.site.as_ref())
                .map_or_else(String::new, ToString::to_string);
            let message = p
                .and_then(|p| p.message.clone())
                .unwrap_or_else(|| "(no message)".into());
            failure("panic", site, message)
        }
        Verdict::Deadlock => {
            let mut sites: Vec<String> = run
                .events
                .iter()
                .filter_map(|e| match *e {
                    Event::Blocked { s, .. } => Some(site_of(s)),
                    _ => None,
                })
                .collect();
            sites.sort();
            sites.dedup();
            let n = sites.len();
            failure(
                "deadlock",
                sites.join(" "),
                format!("{n} tasks blocked for ever"),
            )
        }
        Verdict::StackOverflow => {
            let overflow = run.events.iter().find_map(|e| match *e {
                Event::StackOverflow { t, size, .. } => Some((t, size)),
                _ => None,
            });
            failure(
                "stack_overflow",
                String::new(),
                match overflow {
                    None => "a task overflowed its stack".into(),
                    // ARMv8-M's MSPLIM: a handler on the main stack.
                    Some((t, s)) if t >= IRQ_CONTEXT && t != NO_TASK => {
                        format!("a handler overflowed the main stack of {s} bytes")
                    }
                    Some((_, s)) => format!("a task overflowed its stack of {s} bytes"),
                },
            )
        }
        Verdict::HardFault => {
            let words = run.events.iter().find_map(|e| match *e {
                Event::HardFault {
                    pc,
                    cfsr,
                    hfsr,
                    mmfar,
                    bfar,
                    ..
                } => Some((pc, crate::trace::fault::describe(cfsr, hfsr, mmfar, bfar))),
                _ => None,
            });
            let (site, words) = match words {
                Some((pc, w)) => (format!("pc {pc:#010x}"), w.join("; ")),
                None => (String::new(), String::new()),
            };
            let words = if words.is_empty() {
                "HardFault".to_owned()
            } else {
                words
            };
            // The fault's own address is part of what it is: not masked.
            Some(Signature {
                class: Class::Failure,
                verdict: "hard_fault".into(),
                site,
                message: words.clone(),
                example: words,
            })
        }
        Verdict::HandlerBlocked => {
            let site = run
                .events
                .iter()
                .find_map(|e| match *e {
                    Event::HandlerBlocked { s, .. } => Some(site_of(s)),
                    _ => None,
                })
                .unwrap_or_default();
            failure(
                "handler_blocked",
                site,
                "an interrupt handler would block (on hardware the system hangs)".into(),
            )
        }
        Verdict::AppFailure => failure(
            "app_failure",
            String::new(),
            match run.exit_code {
                Some(code) => {
                    format!("the application exited reporting failure (exit code {code})")
                }
                None => "the application exited reporting failure".into(),
            },
        ),
        Verdict::Starvation => {
            let (site, example) = run
                .events
                .iter()
                .find_map(|e| match *e {
                    Event::Starved { t, s, a, steps } => Some((
                        if s == 0 { String::new() } else { site_of(s) },
                        starvation_text(t, (a != 0).then(|| run.location_text(a)), steps),
                    )),
                    _ => None,
                })
                .unwrap_or_else(|| (String::new(), "a task starves".into()));
            failure("starvation", site, example)
        }
        Verdict::LostWake => {
            let waits = run.lost_wakes();
            let mut sites: Vec<String> = run.wait_sites.values().cloned().collect();
            sites.sort();
            sites.dedup();
            failure(
                "lost_wake",
                sites.join(" "),
                format!("lost wake-up: {} and nothing can wake it", waits.join(", ")),
            )
        }
        Verdict::StepLimit => suspected(
            "step_limit",
            format!(
                "the run reached the step limit of {}",
                run.config.step_limit
            ),
        ),
        // A postponed task released by the livelock bound was held back by the strategy:
        // on the firmware's own scheduler it would have run. Not a finding.
        Verdict::Pass | Verdict::ConfigRejected | Verdict::TaskLimit => None,
    }
}

/// What a starvation's `Starved` event says: the task, what it reads (`None`: nothing),
/// and how long it spun.
pub fn starvation_text(t: u8, reads: Option<String>, steps: u32) -> String {
    let what = reads.map_or_else(String::new, |l| format!(" reading {l}"));
    format!(
        "task t{t} spins{what} and nothing can change it (every other task ended or blocked, no interrupt can fire): the same iteration for {steps} steps"
    )
}

fn suspected(verdict: &str, example: String) -> Option<Signature> {
    Some(Signature {
        class: Class::Suspected,
        verdict: verdict.to_owned(),
        site: String::new(),
        message: mask_numbers(&example),
        example,
    })
}

/// The failures (and suspected livelocks) a series of runs showed, by signature, in the
/// order first seen: what `jostle confirm` and `jostle run --runs` print beside their
/// tallies.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Seen {
    /// One entry per signature.
    pub signatures: Vec<SeenSignature>,
}

/// Runs with one signature.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SeenSignature {
    /// The signature's id.
    pub id: String,
    /// `failure` or `suspected`.
    pub class: &'static str,
    /// The verdict.
    pub verdict: String,
    /// Where.
    pub site: String,
    /// The first run's message, on one line.
    pub message: String,
    /// Runs.
    pub runs: u32,
    /// The first run's seed.
    pub first_seed: u64,
}

impl Seen {
    /// Counts `run` (nothing when it passed).
    pub fn count(&mut self, run: &RunOutcome) {
        let Some(sig) = signature(run) else { return };
        let id = sig.id();
        match self.signatures.iter_mut().find(|s| s.id == id) {
            Some(s) => s.runs += 1,
            None => self.signatures.push(SeenSignature {
                id,
                class: sig.class.name(),
                verdict: sig.verdict,
                site: sig.site,
                message: one_line(&sig.example),
                runs: 1,
                first_seed: run.config.seed,
            }),
        }
    }

    /// One line per signature: `failure panic 3 runs (first seed 7): message at site`.
    pub fn lines(&self) -> Vec<String> {
        self.signatures
            .iter()
            .map(|s| {
                format!(
                    "{} {} {} run{} (first seed {}): {}{}",
                    s.class,
                    s.verdict,
                    s.runs,
                    if s.runs == 1 { "" } else { "s" },
                    s.first_seed,
                    s.message,
                    if s.site.is_empty() {
                        String::new()
                    } else {
                        format!(" at {}", s.site)
                    }
                )
            })
            .collect()
    }
}

/// `text` on one line: runs of white space (newlines too) made one space.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` with every number (decimal, or hexadecimal after `0x`) replaced by `N` and runs
/// of white space made one space.
pub fn mask_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut space = false;
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        if c.is_ascii_digit() {
            let hex = c == '0' && chars.peek().is_some_and(|&n| n == 'x' || n == 'X');
            if hex {
                chars.next();
                while chars.peek().is_some_and(char::is_ascii_hexdigit) {
                    chars.next();
                }
            } else {
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
            }
            out.push('N');
        } else {
            out.push(c);
        }
    }
    out
}

/// Index of the event that shows the failure (the panic, the first blocked task, the fault),
/// else the run's end.
pub fn failure_event(events: &[Event]) -> Option<usize> {
    events
        .iter()
        .position(|e| {
            matches!(
                e,
                Event::TaskPanic { .. }
                    | Event::Blocked { .. }
                    | Event::StackOverflow { .. }
                    | Event::HardFault { .. }
                    | Event::HandlerBlocked { .. }
                    | Event::Starved { .. }
                    | Event::LostWake { .. }
            )
        })
        .or_else(|| {
            events
                .iter()
                .position(|e| matches!(e, Event::RunEnd { .. }))
        })
}

#[cfg(test)]
mod tests {
    use super::mask_numbers;

    #[test]
    fn numbers_are_masked_and_space_folded() {
        assert_eq!(
            mask_numbers("assertion `left == right` failed\n  left: 31\n right: 4"),
            "assertion `left == right` failed left: N right: N"
        );
        assert_eq!(mask_numbers("bad ptr 0x2000ff00 at 3"), "bad ptr N at N");
        assert_eq!(mask_numbers("order a2b"), "order aNb");
        assert_eq!(mask_numbers("count 12 != 13"), mask_numbers("count 7 != 9"));
    }
}
