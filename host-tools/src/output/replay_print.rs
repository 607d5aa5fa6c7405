//! The steps of a replayed run around its bug, each operation with its source line.

use crate::output::run_print::describe;
use crate::trace::failure::failure_event;
use crate::trace::run::{RunOutcome, is_step};
use jostle_kernel::Event;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Prints the steps within `context` steps of the first finding or the failure (the whole
/// run when there is neither), each with its source line when the file can be read, then the verdict.
pub fn print_around(
    outcome: &RunOutcome,
    context: usize,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let events = &outcome.events;
    let mut step_of = Vec::with_capacity(events.len());
    let mut step = 0usize;
    for e in events {
        if is_step(e) {
            step += 1;
        }
        step_of.push(step);
    }
    // Around the targeted finding, else around the failure (panic, deadlock, fault).
    let found = events
        .iter()
        .position(|e| outcome.is_targeted_finding(e))
        .or_else(|| crate::trace::failure::signature(outcome).and(failure_event(events)));
    let (from, to) = match found {
        Some(i) => (
            step_of[i].saturating_sub(context),
            step_of[i].saturating_add(context),
        ),
        None => (0, usize::MAX),
    };
    let mut sources = Sources::default();
    let w = outcome.task_column();
    writeln!(
        out,
        "{:>5}  {:<w$}  {:<34}  site",
        "step", "task", "operation"
    )?;
    for (i, (e, &s)) in events.iter().zip(&step_of).enumerate() {
        if s < from
            || s > to
            || matches!(
                e,
                Event::RunStart { .. } | Event::RunEnd { .. } | Event::Value { .. }
            )
        {
            continue;
        }
        let marker = if outcome.is_targeted_finding(e) || Some(i) == found {
            ">>"
        } else {
            "  "
        };
        let task = e.task().map_or("-".into(), |t| outcome.task_label(t));
        let site = outcome.event_site(i);
        let code = sources
            .line(&site)
            .map(|l| format!("  | {}", l.trim()))
            .unwrap_or_default();
        writeln!(
            out,
            "{marker}{:>3}  {task:<w$}  {:<34}  {}{code}",
            if is_step(e) {
                s.to_string()
            } else {
                "-".into()
            },
            describe(
                e,
                |s| super::short_site(&outcome.site_text(s)).to_owned(),
                |a| outcome.location_text(a),
            ) + &outcome
                .value_text(i)
                .map_or(String::new(), |v| format!(" = {v}")),
            super::short_site(&site)
        )?;
    }
    writeln!(out, "{}", outcome.verdict_line())
}

/// Source files read so far (a missing file is remembered as missing).
#[derive(Default)]
struct Sources {
    files: HashMap<PathBuf, Option<Vec<String>>>,
}

impl Sources {
    /// The text of `file:line:col`'s line.
    fn line(&mut self, site: &str) -> Option<String> {
        let (file, line, _) = crate::trace::space::parse_location(site)?;
        let lines = self.files.entry(PathBuf::from(file)).or_insert_with(|| {
            std::fs::read_to_string(Path::new(file))
                .ok()
                .map(|t| t.lines().map(str::to_owned).collect())
        });
        lines.as_ref()?.get(line.checked_sub(1)? as usize).cloned()
    }
}
