//! One timeline of `report.html`: a table with one row per step (numbered as `jostle
//! replay` numbers them, from 1) and one lane per task, then per interrupt handler; each
//! step's operation sits in its lane, its variable and source line beside it, its full
//! location in the row's `title` (shown on hover). Rows wrap rather than clip, so a
//! timeline of any length or width of names reads at 1280 px; the last row is the verdict.

use crate::output::report::{Mark, xml};
use jostle_kernel::event::{IRQ_CONTEXT, NO_TASK};
use std::fmt::Write;

/// Operations that are not steps but how the run ended: `timelines.rs` appends them after
/// the last step, numbered like the step that would have come next.
const ENDINGS: [&str; 7] = [
    "panic",
    "blocked",
    "stack-overflow",
    "hardfault",
    "handler-blocked",
    "starved",
    "lost-wake",
];

/// A timeline to render.
pub(super) struct Timeline<'a> {
    /// The table's HTML id.
    pub id: String,
    /// The steps, in order.
    pub marks: &'a [Mark],
    /// What the highlighted steps are, for the legend.
    pub marked: &'a str,
    /// The last row's text.
    pub verdict: String,
    /// Did the run fail (the verdict row is red, else amber)?
    pub failed: bool,
}

impl Timeline<'_> {
    pub(super) fn render(&self, h: &mut String) {
        // Task ids sort below handler contexts, so tasks come first, then handlers.
        let mut lanes: Vec<u8> = self.marks.iter().map(|m| m.task).collect();
        lanes.sort_unstable();
        lanes.dedup();
        // Tasks the firmware named (an Embassy task's function) go by their names.
        let names: std::collections::HashMap<u8, &str> = self
            .marks
            .iter()
            .filter(|m| !m.task_name.is_empty())
            .map(|m| (m.task, m.task_name.as_str()))
            .collect();
        let handlers = lanes.iter().any(|&t| is_handler(t));
        let _ = writeln!(
            h,
            "<p class=\"legend\">Rows are steps, numbered as <code>jostle replay</code> numbers them; lanes are tasks{}. <span class=\"op\">read</span> a step; <span class=\"op hl\">write</span> {}; hover a row for its full source location. The last row is the verdict.</p>",
            if handlers {
                " and interrupt handlers"
            } else {
                ""
            },
            xml(self.marked)
        );
        let _ = write!(
            h,
            "<table class=\"tl\" id=\"{}\">\n<tr><th class=\"n\">step</th>",
            xml(&self.id)
        );
        // Lanes share up to 72 % of the width (at most 12 % each), the variable and source
        // line the rest: a percentage, unlike a fixed width, never makes the table wider
        // than the page however many lanes there are.
        let share = (72.0 / lanes.len().max(1) as f64).min(12.0);
        for &t in &lanes {
            let _ = write!(
                h,
                "<th class=\"lane{}\" style=\"width:{share:.2}%\" title=\"{}\">{}</th>",
                if is_handler(t) { " irq" } else { "" },
                lane_title(t, &names),
                lane_name(t, &names)
            );
        }
        h.push_str("<th class=\"var\">variable</th><th class=\"src\">source line</th></tr>\n");
        let span = lanes.len() + 2;
        // The next step (0-based) a row would show: a jump is a gap of steps not shown.
        let mut next = 0;
        let live = lifetimes(self.marks, &lanes);
        for (m, live) in self.marks.iter().zip(live) {
            let end = ENDINGS.contains(&m.op.as_str());
            if m.step > next {
                let missing = if m.step == next + 1 {
                    format!("step {} not shown", m.step)
                } else {
                    format!("steps {}–{} not shown", next + 1, m.step)
                };
                let _ = writeln!(
                    h,
                    "<tr class=\"gap\"><td class=\"n\">…</td><td colspan=\"{span}\">{missing}</td></tr>"
                );
            }
            next = if end { m.step } else { m.step + 1 };
            let what = if m.location.is_empty() {
                m.op.clone()
            } else {
                format!("{} {}", m.op, m.location)
            };
            let title = format!(
                "{} · {} · {what}{}",
                if end {
                    "end of the run".to_owned()
                } else {
                    format!("step {}", m.step + 1)
                },
                lane_name(m.task, &names),
                if m.site.is_empty() {
                    String::new()
                } else {
                    format!(" · {}", m.site)
                }
            );
            let _ = write!(
                h,
                "<tr class=\"step{}{}\" title=\"{}\"><td class=\"n\">{}</td>",
                if m.highlight { " hl" } else { "" },
                if end { " end" } else { "" },
                xml(&title),
                if end {
                    "·".to_owned()
                } else {
                    (m.step + 1).to_string()
                }
            );
            for (&t, live) in lanes.iter().zip(live) {
                let class = format!(
                    "lane{}{}",
                    if is_handler(t) { " irq" } else { "" },
                    if live { " live" } else { "" }
                );
                if t == m.task {
                    let _ = write!(
                        h,
                        "<td class=\"{class}\"><span class=\"op{}\">{}</span></td>",
                        if m.highlight { " hl" } else { "" },
                        xml(&m.op)
                    );
                } else {
                    let _ = write!(h, "<td class=\"{class}\"></td>");
                }
            }
            let value = if m.value.is_empty() {
                String::new()
            } else {
                format!(" <span class=\"val\">= {}</span>", xml(&m.value))
            };
            let _ = writeln!(
                h,
                "<td class=\"var\">{}{value}</td><td class=\"src\">{}</td></tr>",
                xml(&m.location),
                xml(&short_site(&m.site))
            );
        }
        let _ = writeln!(
            h,
            "<tr class=\"verdict {}\"><td class=\"n\">end</td><td colspan=\"{span}\">{}</td></tr>\n</table>",
            if self.failed { "failure" } else { "real" },
            xml(&self.verdict)
        );
    }
}

/// For each row, which lanes are running (their line is drawn): a task from its `begin`
/// on (from the top when it began before the first row shown), a handler from each
/// `irq-enter` to its `irq-exit` (from the top when the first row shown is inside one).
fn lifetimes(marks: &[Mark], lanes: &[u8]) -> Vec<Vec<bool>> {
    let mut state: Vec<bool> = lanes
        .iter()
        .map(|&t| {
            let first = marks.iter().find(|m| m.task == t).map(|m| m.op.as_str());
            let start = if is_handler(t) { "irq-enter" } else { "begin" };
            first != Some(start)
        })
        .collect();
    marks
        .iter()
        .map(|m| {
            let row: Vec<bool> = lanes
                .iter()
                .zip(&mut state)
                .map(|(&t, on)| {
                    if t != m.task {
                        return *on;
                    }
                    match m.op.as_str() {
                        "begin" | "irq-enter" => *on = true,
                        // The exit's own row is still drawn.
                        "irq-exit" => {
                            *on = false;
                            return true;
                        }
                        _ => {}
                    }
                    *on
                })
                .collect();
            row
        })
        .collect()
}

/// Is context `t` an interrupt handler's (`IRQ_CONTEXT + i`)?
fn is_handler(t: u8) -> bool {
    t >= IRQ_CONTEXT && t != NO_TASK
}

/// `task 1` (its name when the firmware named it: `consumer`), or `irq 3` for the
/// handler of source 3.
fn lane_name(t: u8, names: &std::collections::HashMap<u8, &str>) -> String {
    if is_handler(t) {
        format!("irq {}", t - IRQ_CONTEXT)
    } else if let Some(name) = names.get(&t) {
        (*name).to_owned()
    } else {
        format!("task {t}")
    }
}

fn lane_title(t: u8, names: &std::collections::HashMap<u8, &str>) -> String {
    if is_handler(t) {
        format!("the handler of interrupt source {}", t - IRQ_CONTEXT)
    } else if let Some(name) = names.get(&t) {
        format!("task {t}: {name}")
    } else {
        format!("task {t}")
    }
}

/// `src/bin/x.rs:12:5` → `x.rs:12`: the row's side column (the title has it whole).
pub(super) fn short_site(site: &str) -> String {
    let mut parts = site.rsplitn(3, ':');
    let (_col, line, file) = (parts.next(), parts.next(), parts.next());
    match (file, line) {
        (Some(file), Some(line)) => {
            let name = file.rsplit('/').next().unwrap_or(file);
            format!("{name}:{line}")
        }
        _ => site.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_shorten_to_file_and_line_and_lanes_name_handlers() {
        assert_eq!(short_site("src/bin/x.rs:12:5"), "x.rs:12");
        assert_eq!(short_site(""), "");
        let names = std::collections::HashMap::from([(4, "consumer")]);
        assert_eq!(lane_name(2, &names), "task 2");
        assert_eq!(lane_name(4, &names), "consumer");
        assert_eq!(lane_name(IRQ_CONTEXT + 3, &names), "irq 3");
    }

    #[test]
    fn a_lane_is_drawn_while_its_task_or_handler_runs() {
        let mark = |task, op: &str| Mark {
            task,
            op: op.into(),
            ..Mark::default()
        };
        let h = IRQ_CONTEXT;
        let marks = [
            mark(0, "read"),
            mark(1, "begin"),
            mark(h, "irq-enter"),
            mark(h, "irq-exit"),
            mark(0, "write"),
        ];
        let live = lifetimes(&marks, &[0, 1, h]);
        let column = |i: usize| live.iter().map(|r| r[i]).collect::<Vec<_>>();
        assert_eq!(column(0), [true; 5]);
        assert_eq!(column(1), [false, true, true, true, true]);
        assert_eq!(column(2), [false, false, true, true, false]);
    }

    #[test]
    fn a_jump_in_the_steps_shows_as_a_gap_and_endings_have_no_number() {
        let mark = |step, op: &str| Mark {
            step,
            task: 0,
            op: op.into(),
            ..Mark::default()
        };
        let marks = [mark(0, "write"), mark(4, "read"), mark(9, "blocked")];
        let mut h = String::new();
        Timeline {
            id: "t".into(),
            marks: &marks,
            marked: "x",
            verdict: "v".into(),
            failed: true,
        }
        .render(&mut h);
        assert!(h.contains("steps 2–4 not shown"), "{h}");
        assert!(h.contains("steps 6–9 not shown"), "{h}");
        assert!(h.contains("title=\"end of the run · task 0 · blocked\"><td class=\"n\">·</td>"));
        assert!(h.trim_end().ends_with("</table>"));
    }
}
