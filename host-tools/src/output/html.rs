//! `report.html`: one self-contained file (no scripts, no external resources) that opens
//! offline: the summary table, then for each confirmed bug an SVG timeline of its
//! interleaving, one lane per task, each operation a mark labelled with its source line, the
//! operations that make the bug highlighted. The markup is well-formed XML (XHTML), so any
//! XML parser can check it.

use crate::output::report::{Bug, Failure, Mark, Report, xml};
use std::fmt::Write;

const STEP_PX: usize = 30;
const LANE_PX: usize = 46;
const LEFT_PX: usize = 50;
const TOP_PX: usize = 110;

/// The HTML report.
pub fn render(report: &Report) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n");
    let _ = writeln!(
        h,
        "<title>Jostle report: {}</title>",
        xml(&report.firmware.fingerprint)
    );
    h.push_str(
        "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}\
         td,th{border:1px solid #bbb;padding:3px 8px;text-align:left;font-size:90%}\
         .harmful{background:#fdd}.real{background:#ffe9c0}.unconfirmed{color:#777}\
         code{font-size:90%}svg{border:1px solid #ddd;margin:0.5em 0}</style>\n</head>\n<body>\n",
    );
    let _ = writeln!(
        h,
        "<h1>Jostle campaign: {}</h1>",
        xml(&report.firmware.fingerprint)
    );
    let _ = writeln!(
        h,
        "<p>{} Phase I runs, {} Phase II runs, {} search runs; stopped: {}; {} predicted, {} real, {} harmful.</p>",
        report.runs.phase1,
        report.runs.phase2,
        report.runs.search,
        xml(&report.stopped),
        report.bugs.len(),
        report.confirmed().count(),
        report.bugs.iter().filter(|b| b.harmful > 0).count()
    );
    h.push_str("<table>\n<tr><th>kind</th><th>id</th><th>sites</th><th>predicted by</th><th>runs</th><th>confirmed</th><th>harmful</th><th>probability (95% CI)</th></tr>\n");
    for b in &report.bugs {
        let [p, lo, hi] = b.probability;
        let _ = writeln!(
            h,
            "<tr class=\"{}\"><td>{}</td><td><a href=\"#bug-{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{p:.2} [{lo:.2}, {hi:.2}]</td></tr>",
            xml(&b.status),
            xml(&b.kind),
            xml(&b.id),
            xml(&b.id),
            xml(&b.sites.join(" ")),
            xml(&b.predicted_by.join(", ")),
            b.runs,
            b.confirmed,
            b.harmful
        );
    }
    h.push_str("</table>\n");
    failures_table(&mut h, report);
    for b in report.confirmed() {
        bug_section(&mut h, b);
    }
    for f in &report.failures {
        failure_section(&mut h, f);
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// Every failing (or starving) run's signature: what, where, how often, first seed, and
/// how it relates to the candidates.
fn failures_table(h: &mut String, report: &Report) {
    if report.failures.is_empty() {
        h.push_str("<p>No run failed.</p>\n");
        return;
    }
    h.push_str("<h2>Failures</h2>\n<table>\n<tr><th>class</th><th>verdict</th><th>id</th><th>site</th><th>message</th><th>runs</th><th>first seed</th><th>relation</th></tr>\n");
    for f in &report.failures {
        let _ = writeln!(
            h,
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td><a href=\"#failure-{}\">{}</a></td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{} ({})</td><td>{}</td></tr>",
            if f.is_failure() { "harmful" } else { "real" },
            xml(&f.class),
            xml(&f.verdict),
            xml(&f.id),
            xml(&f.id),
            xml(&f.site),
            xml(&f.example),
            f.count,
            f.first.seed,
            xml(&f.first.strategy),
            xml(&f.relation())
        );
    }
    h.push_str("</table>\n");
}

fn failure_section(h: &mut String, f: &Failure) {
    let _ = writeln!(
        h,
        "<h2 id=\"failure-{}\">{} {} ({})</h2>",
        xml(&f.id),
        xml(&f.verdict),
        xml(&f.id),
        xml(&f.class)
    );
    let _ = writeln!(
        h,
        "<p><code>{}</code> {}: {} runs ({} in Phase I); {}</p>",
        xml(&f.site),
        xml(&f.example),
        f.count,
        f.phase1,
        xml(&f.relation())
    );
    let _ = writeln!(
        h,
        "<p>Replay (seed {}, verdict {}): <code>{}</code></p>",
        f.first.seed,
        xml(&f.first.verdict),
        xml(&f.first.command)
    );
    if f.timeline.is_empty() {
        h.push_str("<p>No timeline (a run stopped by a limit is not replayed, or the campaign stopped first).</p>\n");
    } else {
        timeline_svg(h, &f.timeline);
    }
}

fn bug_section(h: &mut String, b: &Bug) {
    let _ = writeln!(
        h,
        "<h2 id=\"bug-{}\">{} {} ({})</h2>",
        xml(&b.id),
        xml(&b.kind),
        xml(&b.id),
        xml(&b.status)
    );
    let _ = writeln!(h, "<p>Sites: <code>{}</code></p>", xml(&b.sites.join("  ")));
    for a in &b.attempts {
        let verdicts: Vec<String> = a.verdicts.iter().map(|(v, n)| format!("{v} {n}")).collect();
        let _ = writeln!(
            h,
            "<p>{}: {} runs, {} confirmed, {} harmful ({})</p>",
            xml(&a.strategy),
            a.runs,
            a.confirmed,
            a.harmful,
            xml(&verdicts.join(", "))
        );
    }
    if let Some(r) = b.first_harmful.as_ref().or(b.first_confirmed.as_ref()) {
        let _ = writeln!(
            h,
            "<p>Replay (seed {}, verdict {}): <code>{}</code></p>",
            r.seed,
            xml(&r.verdict),
            xml(&r.command)
        );
    }
    if b.timeline.is_empty() {
        h.push_str("<p>No timeline: the campaign stopped before replaying this run.</p>\n");
    } else {
        timeline_svg(h, &b.timeline);
    }
}

/// The SVG timeline: x is the step, one lane per task.
fn timeline_svg(h: &mut String, marks: &[Mark]) {
    let mut tasks: Vec<u8> = marks.iter().map(|m| m.task).collect();
    tasks.sort_unstable();
    tasks.dedup();
    let lane = |t: u8| tasks.iter().position(|x| *x == t).unwrap_or(0);
    let width = LEFT_PX + (marks.len() + 1) * STEP_PX;
    let height = TOP_PX + tasks.len() * LANE_PX + 10;
    let _ = writeln!(
        h,
        "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"monospace\" font-size=\"10\">"
    );
    for (i, t) in tasks.iter().enumerate() {
        let y = TOP_PX + i * LANE_PX + LANE_PX / 2;
        let _ = writeln!(
            h,
            "<text x=\"4\" y=\"{}\" font-size=\"12\">t{t}</text><line x1=\"{LEFT_PX}\" y1=\"{y}\" x2=\"{width}\" y2=\"{y}\" stroke=\"#ccc\" />",
            y + 4
        );
    }
    for (k, m) in marks.iter().enumerate() {
        let x = LEFT_PX + k * STEP_PX + STEP_PX / 2;
        let y = TOP_PX + lane(m.task) * LANE_PX + LANE_PX / 2;
        let (fill, r) = if m.highlight {
            ("#d22", 7)
        } else {
            ("#668", 4)
        };
        // The label: the operation and its source line (file name and line only).
        let line = short_site(&m.site);
        let op = if m.location.is_empty() {
            m.op.clone()
        } else {
            format!("{} {}", m.op, m.location)
        };
        let label = if line.is_empty() {
            op.clone()
        } else {
            format!("{op} {line}")
        };
        let _ = writeln!(
            h,
            "<g class=\"mark{}\"><title>step {} t{} {} {}</title><circle cx=\"{x}\" cy=\"{y}\" r=\"{r}\" fill=\"{fill}\" /><text transform=\"translate({x},{}) rotate(-60)\"{}>{}</text></g>",
            if m.highlight { " highlight" } else { "" },
            m.step,
            m.task,
            xml(&op),
            xml(&m.site),
            TOP_PX - 6,
            if m.highlight {
                " fill=\"#d22\" font-weight=\"bold\""
            } else {
                ""
            },
            xml(&label)
        );
    }
    h.push_str("</svg>\n");
}

/// `src/bin/x.rs:12:5` → `x.rs:12`.
fn short_site(site: &str) -> String {
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
    use crate::output::report::{Attempt, Bug, Mark};

    #[test]
    fn the_report_is_well_formed_with_one_timeline_per_confirmed_bug() {
        let mark = |step, task, highlight| Mark {
            step,
            task,
            op: "write".into(),
            site: "src/bin/a<b>.rs:12:5".into(),
            location: "a::Z".into(),
            highlight,
        };
        let mut real = Bug {
            id: "00000000000000aa".into(),
            kind: "race".into(),
            attempts: vec![Attempt {
                strategy: "race".into(),
                runs: 4,
                confirmed: 3,
                ..Attempt::default()
            }],
            timeline: vec![mark(0, 0, false), mark(1, 1, true), mark(2, 0, true)],
            ..Bug::default()
        };
        real.settle();
        let mut not = Bug {
            id: "00000000000000bb".into(),
            kind: "race".into(),
            ..Bug::default()
        };
        not.settle();
        let r = Report {
            bugs: vec![real, not],
            ..Report::default()
        };
        let html = render(&r);
        let options = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        let doc = roxmltree::Document::parse_with_options(&html, options).expect("well-formed");
        let svgs: Vec<_> = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "svg")
            .collect();
        assert_eq!(svgs.len(), 1);
        let highlighted = svgs[0]
            .descendants()
            .filter(|n| n.attribute("class") == Some("mark highlight"))
            .count();
        assert_eq!(highlighted, 2);
        assert!(html.contains("a&lt;b&gt;.rs:12"));
        assert_eq!(short_site("src/bin/x.rs:12:5"), "x.rs:12");
    }
}
