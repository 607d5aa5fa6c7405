//! `report.html`: one self-contained file (no scripts, no external resources) that opens
//! offline and reads top-down as a person wants it: what failed first (the findings: every
//! failing run's signature, with the timeline of its first run), then the predicted bugs
//! (each unconfirmed one with a line saying why), each confirmed bug with its timeline. A
//! timeline is a table, one row per step and one lane per task or interrupt handler
//! (`timeline.rs`), so it wraps instead of clipping at any length and fits 1280 px. The
//! markup is well-formed XML (XHTML), so any XML parser can check it.

mod timeline;

use crate::output::report::{Bug, Failure, Mark, Report, Shrunk, xml};
use crate::trace::failure::one_line;
use std::fmt::Write;
use timeline::Timeline;

/// The style sheet. Long words (paths, commands, messages) may wrap anywhere: that also
/// shrinks their column's minimum width, so no table is wider than the page; short words
/// (kinds, verdicts) wrap only between words.
const STYLE: &str = "\
body{font-family:'DejaVu Sans',Arial,sans-serif;color:#222;max-width:1200px;margin:1.2em auto;padding:0 1em;line-height:1.4}\
h1{font-size:1.5em;margin:0 0 .3em}h2{font-size:1.25em;margin:1.6em 0 .5em;border-bottom:2px solid #ddd}\
h3{font-size:1.05em;margin:1.4em 0 .3em}p{margin:.35em 0}\
table{border-collapse:collapse;max-width:100%}\
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;font-size:90%;overflow-wrap:break-word}\
th{background:#f3f3f3}td.wrap,p,h1,h2,h3{overflow-wrap:anywhere}\
code{font-family:'DejaVu Sans Mono',monospace;font-size:88%;overflow-wrap:anywhere}\
.id{color:#666;font-weight:normal}\
tr.harmful>td,tr.failure>td{background:#fde2e2}tr.real>td,tr.suspected>td{background:#fff0d0}\
tr.unconfirmed>td{color:#666}tr.why>td{color:#444;background:#fafafa;font-size:85%;border-top:none;overflow-wrap:anywhere}\
.legend{font-size:85%;color:#444}\
table.tl{width:100%;margin:.4em 0 1em}\
table.tl td,table.tl th{border:none;border-bottom:1px solid #eee;padding:1px 6px;overflow-wrap:anywhere}\
table.tl th{border-bottom:1px solid #bbb}\
table.tl th.lane,table.tl td.lane{text-align:center}\
table.tl td.live{background-image:linear-gradient(#c8c8d8,#c8c8d8);background-repeat:no-repeat;background-position:center;background-size:2px 100%}\
table.tl th.irq{color:#5a3d8a}table.tl td.n{text-align:right;color:#666;width:3em}\
table.tl td.var,table.tl td.src{font-family:'DejaVu Sans Mono',monospace;font-size:82%;overflow-wrap:anywhere}\
.op{display:inline-block;font-family:'DejaVu Sans Mono',monospace;font-size:88%;background:#eef0fa;border:1px solid #99a;border-radius:9px;padding:0 5px;overflow-wrap:anywhere}\
.irq .op{background:#f1ebfa;border-color:#a28bc8}\
.op.hl,.irq .op.hl{background:#d22;border-color:#a00;color:#fff;font-weight:bold}\
tr.hl>td{background-color:#fde8e8}tr.gap>td{color:#888;font-style:italic;text-align:center}\
tr.verdict>td{font-weight:bold;border-top:2px solid #bbb}\
tr.verdict.failure>td{background:#fde2e2;color:#900}tr.verdict.real>td{background:#fff0d0}";

/// The HTML report.
pub fn render(report: &Report) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n");
    let _ = writeln!(
        h,
        "<title>Jostle report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>",
        xml(&report.firmware.fingerprint)
    );
    let _ = writeln!(
        h,
        "<h1>Jostle campaign: {}</h1>",
        xml(&report.firmware.fingerprint)
    );
    let failed = report.failed().count();
    let _ = writeln!(
        h,
        "<p class=\"summary\"><b>{failed} failure{}</b>, {} suspected livelock{}; {} predicted bug{}, {} real, {} harmful. {} Phase I runs, {} Phase II runs, {} search runs; stopped: {}.</p>",
        plural(failed as u64),
        report.failures.len() - failed,
        plural((report.failures.len() - failed) as u64),
        report.bugs.len(),
        plural(report.bugs.len() as u64),
        report.confirmed().count(),
        report.bugs.iter().filter(|b| b.harmful > 0).count(),
        report.runs.phase1,
        report.runs.phase2,
        report.runs.search,
        xml(&report.stopped),
    );
    findings(&mut h, report);
    candidates(&mut h, report);
    h.push_str("</body>\n</html>\n");
    h
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The findings, first: every failing (or starving) run's signature, then each one's
/// first run step by step.
fn findings(h: &mut String, report: &Report) {
    h.push_str("<h2 id=\"findings\">Findings: failing runs</h2>\n");
    if report.failures.is_empty() {
        h.push_str("<p>No run failed.</p>\n");
        return;
    }
    h.push_str("<table class=\"findings\">\n<tr><th>verdict</th><th>message</th><th>site</th><th>runs</th><th>first seed</th><th>relation to the predicted bugs</th></tr>\n");
    for f in &report.failures {
        let _ = writeln!(
            h,
            "<tr class=\"{}\"><td><a href=\"#failure-{}\">{}</a>{}</td><td class=\"wrap\">{}</td><td><code>{}</code></td><td>{}</td><td>{} ({})</td><td class=\"wrap\">{}</td></tr>",
            if f.is_failure() {
                "failure"
            } else {
                "suspected"
            },
            xml(&f.id),
            xml(&f.verdict),
            if f.is_failure() { "" } else { " (suspected)" },
            xml(&one_line(&f.example)),
            xml(super::short_site(&f.site)),
            f.count,
            f.first.seed,
            xml(&f.first.strategy),
            xml(&f.relation())
        );
    }
    h.push_str("</table>\n");
    for f in &report.failures {
        failure_section(h, f);
    }
}

fn failure_section(h: &mut String, f: &Failure) {
    let _ = writeln!(
        h,
        "<h3 id=\"failure-{}\">{}: {} <span class=\"id\">{} {}</span></h3>",
        xml(&f.id),
        xml(&f.verdict),
        xml(&one_line(&f.example)),
        xml(&f.class),
        xml(&f.id)
    );
    let _ = writeln!(
        h,
        "<p>At <code>{}</code>: {} run{} ({} in Phase I, {} in search); {}.</p>",
        xml(&f.site),
        f.count,
        plural(f.count),
        f.phase1,
        f.search,
        xml(&f.relation())
    );
    let _ = writeln!(
        h,
        "<p>Replay its first run (seed {}, {}): <code>{}</code></p>",
        f.first.seed,
        xml(&f.first.strategy),
        xml(&f.first.command)
    );
    let at = if f.site.is_empty() {
        String::new()
    } else {
        format!(" at {}", timeline::short_site(&f.site))
    };
    let timeline = |id: String, marks| Timeline {
        id,
        marks,
        marked: "the failure",
        verdict: format!("verdict: {} — {}{at}", f.verdict, one_line(&f.example)),
        failed: f.is_failure(),
    };
    if let Some(s) = &f.shrunk {
        shrunk_part(h, s, |marks| {
            timeline(format!("timeline-failure-shrunk-{}", f.id), marks)
        });
    }
    if f.timeline.is_empty() {
        h.push_str("<p>No timeline (a run stopped by a limit is not replayed, or the campaign stopped first).</p>\n");
        return;
    }
    timeline(format!("timeline-failure-{}", f.id), &f.timeline).render(h);
}

/// A finding's shrunk run, shown before the recorded one: its figures against the
/// recorded run's, the command that replays it and its timeline (`timeline` makes it from
/// the marks); or why there is none.
fn shrunk_part<'a>(
    h: &mut String,
    s: &'a Shrunk,
    timeline: impl FnOnce(&'a [Mark]) -> Timeline<'a>,
) {
    match &s.replay {
        Some(r) if !s.timeline.is_empty() => {
            let _ = writeln!(
                h,
                "<p class=\"shrunk\">Shortest interleaving found: {} preemption{}, {} step{}, {} context switch{} (the recorded run: {} preemption{}, {} steps; {} run{} to shrink it). Replay it: <code>{}</code></p>",
                s.preemptions,
                plural(s.preemptions.into()),
                s.steps,
                plural(s.steps.into()),
                s.switches,
                if s.switches == 1 { "" } else { "es" },
                s.original_preemptions,
                plural(s.original_preemptions.into()),
                s.original_steps,
                s.runs,
                plural(s.runs.into()),
                xml(&r.command)
            );
            timeline(&s.timeline).render(h);
            h.push_str("<p>The recorded run:</p>\n");
        }
        _ if !s.note.is_empty() => {
            let _ = writeln!(h, "<p class=\"shrunk\">Not shrunk: {}</p>", xml(&s.note));
        }
        _ => {}
    }
}

/// The predicted bugs: the table (a "why not confirmed" line under each unconfirmed one),
/// then each confirmed bug's runs and timeline.
fn candidates(h: &mut String, report: &Report) {
    h.push_str("<h2 id=\"candidates\">Predicted bugs</h2>\n");
    if report.bugs.is_empty() {
        h.push_str("<p>No bug was predicted.</p>\n");
        return;
    }
    h.push_str("<table class=\"candidates\">\n<tr><th>kind</th><th>id</th><th>sites</th><th>predicted by</th><th>runs</th><th>confirmed</th><th>harmful</th><th>made real per run (95% CI)</th></tr>\n");
    for b in &report.bugs {
        let id = if b.confirmed > 0 {
            format!("<a href=\"#bug-{0}\">{0}</a>", xml(&b.id))
        } else {
            xml(&b.id)
        };
        let sites: Vec<String> = b
            .sites
            .iter()
            .map(|s| format!("<code>{}</code>", xml(super::short_site(s))))
            .collect();
        let _ = writeln!(
            h,
            "<tr class=\"{}\"><td>{}</td><td>{id}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            xml(&b.status),
            xml(&b.kind),
            sites.join(" "),
            xml(&b.predicted_by.join(", ")),
            b.runs,
            b.confirmed,
            b.harmful,
            xml(&b.rate_text())
        );
        if b.confirmed == 0 {
            let _ = writeln!(
                h,
                "<tr class=\"why\" id=\"why-{}\"><td colspan=\"8\">Why not confirmed: {}</td></tr>",
                xml(&b.id),
                xml(&why_unconfirmed(b, report))
            );
        }
    }
    h.push_str("</table>\n");
    for b in report.confirmed() {
        bug_section(h, report, b);
    }
}

/// Why a candidate stayed unconfirmed, from what the report holds: whether it was targeted
/// at all, how many runs of which strategy were made, how they ended, and how unlikely a
/// confirmation is given that many runs (the Wilson bound), so a reader can tell "never
/// tried" from "tried hard, probably a false alarm".
pub fn why_unconfirmed(b: &Bug, report: &Report) -> String {
    if let Some(why) = &b.skipped {
        return format!("not targeted: {why}.");
    }
    if b.runs == 0 {
        return match report.stopped.as_str() {
            "budget" => "never tried: the run budget ran out first.",
            "interrupted" => "never tried: the campaign was interrupted first.",
            "failure" => "never tried: the campaign stopped at the first failing run.",
            "rounds" => "never tried: predicted in the last round the campaign allowed.",
            "error" => "never tried: the campaign stopped on an error first.",
            "incomplete" => "never tried in the shards merged (some shards are missing).",
            _ => "never tried.",
        }
        .into();
    }
    let tried: Vec<String> = b
        .attempts
        .iter()
        .filter(|a| a.runs > 0)
        .map(|a| {
            // Each verdict's count, a panic's with its messages.
            let ends: Vec<String> = a
                .verdicts
                .iter()
                .map(|(v, n)| {
                    let messages: Vec<String> = a
                        .panics
                        .iter()
                        .map(|(m, n)| format!("\u{201c}{}\u{201d} {n}", one_line(m)))
                        .collect();
                    if v == "panic" && !messages.is_empty() {
                        format!("{v} {n}: {}", messages.join(", "))
                    } else {
                        format!("{v} {n}")
                    }
                })
                .collect();
            format!(
                "{} {} run{}{}",
                a.runs,
                a.strategy,
                plural(a.runs),
                if ends.is_empty() {
                    String::new()
                } else {
                    format!(" (ended: {})", ends.join(", "))
                }
            )
        })
        .collect();
    let mut why = format!(
        "no run made it real: {}. If it is real, one such run makes it real with probability at most {:.2} (95%)",
        tried.join("; "),
        b.probability[2]
    );
    let planned = u64::from(report.settings.runs_per_candidate);
    if report.stopped != "done" && b.attempts.first().is_some_and(|a| a.runs < planned) {
        let _ = write!(
            why,
            "; the campaign stopped ({}) before its {planned} runs were made",
            report.stopped
        );
    }
    why.push('.');
    why
}

fn bug_section(h: &mut String, report: &Report, b: &Bug) {
    let _ = writeln!(
        h,
        "<h3 id=\"bug-{}\">{} ({}) <span class=\"id\">{}</span></h3>",
        xml(&b.id),
        xml(&b.kind),
        xml(&b.status),
        xml(&b.id)
    );
    let sites: Vec<String> = b
        .sites
        .iter()
        .map(|s| format!("<code>{}</code>", xml(s)))
        .collect();
    let _ = writeln!(h, "<p>Sites: {}</p>", sites.join(", "));
    for a in &b.attempts {
        let verdicts: Vec<String> = a.verdicts.iter().map(|(v, n)| format!("{v} {n}")).collect();
        let _ = writeln!(
            h,
            "<p>{}: {} runs, {} confirmed, {} harmful (ended: {})</p>",
            xml(&a.strategy),
            a.runs,
            a.confirmed,
            a.harmful,
            xml(&verdicts.join(", "))
        );
    }
    // The failures it led to, linked to their findings.
    let followed: Vec<String> = report
        .failures
        .iter()
        .filter(|f| f.after_confirming.contains_key(&b.id))
        .map(|f| {
            format!(
                "<a href=\"#failure-{}\">{} {}</a>",
                xml(&f.id),
                xml(&f.verdict),
                xml(&one_line(&f.example))
            )
        })
        .collect();
    if !followed.is_empty() {
        let _ = writeln!(
            h,
            "<p>Failures that followed it: {}</p>",
            followed.join(", ")
        );
    }
    let run = b.first_harmful.as_ref().or(b.first_confirmed.as_ref());
    if let Some(r) = run {
        let _ = writeln!(
            h,
            "<p>Replay (seed {}, verdict {}): <code>{}</code></p>",
            r.seed,
            xml(&r.verdict),
            xml(&r.command)
        );
    }
    let marked = match b.kind.as_str() {
        "race" => "the racing accesses",
        "deadlock" => "the acquires of the cycle and the blocked tasks",
        _ => "the interrupted block and the access that intrudes on it",
    };
    let ended = run.map_or("?", |r| r.verdict.as_str());
    let timeline = |id: String, marks| Timeline {
        id,
        marks,
        marked,
        verdict: format!(
            "{} made real at the marked steps ({}); the run ended: {ended}",
            b.kind, b.status
        ),
        failed: b.harmful > 0,
    };
    if let Some(s) = &b.shrunk {
        shrunk_part(h, s, |marks| {
            timeline(format!("timeline-bug-shrunk-{}", b.id), marks)
        });
    }
    if b.timeline.is_empty() {
        h.push_str("<p>No timeline: the campaign stopped before replaying this run.</p>\n");
        return;
    }
    timeline(format!("timeline-bug-{}", b.id), &b.timeline).render(h);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::report::{Attempt, Replay};

    fn mark(step: u64, task: u8, op: &str, highlight: bool) -> Mark {
        Mark {
            step,
            task,
            op: op.into(),
            site: "src/bin/a<b>.rs:12:5".into(),
            location: "a::Z".into(),
            value: if op == "write" {
                "-1".into()
            } else {
                String::new()
            },
            highlight,
            task_name: String::new(),
        }
    }

    fn sample() -> Report {
        let mut real = Bug {
            id: "00000000000000aa".into(),
            kind: "race".into(),
            attempts: vec![Attempt {
                strategy: "race".into(),
                runs: 4,
                confirmed: 3,
                ..Attempt::default()
            }],
            first_confirmed: Some(Replay {
                verdict: "pass".into(),
                ..Replay::default()
            }),
            timeline: vec![
                mark(5, 0, "read", false),
                mark(6, 1, "write", true),
                mark(7, 0x80, "irq-enter", false),
                mark(8, 0, "write", true),
            ],
            ..Bug::default()
        };
        real.settle();
        let mut not = Bug {
            id: "00000000000000bb".into(),
            kind: "race".into(),
            attempts: vec![Attempt {
                strategy: "race".into(),
                runs: 50,
                verdicts: [("panic".to_owned(), 50)].into(),
                panics: [("ERROR1".to_owned(), 50)].into(),
                ..Attempt::default()
            }],
            ..Bug::default()
        };
        not.settle();
        let untried = Bug {
            id: "00000000000000cc".into(),
            kind: "deadlock".into(),
            status: "unconfirmed".into(),
            ..Bug::default()
        };
        let failure = Failure {
            id: "00000000000000ff".into(),
            class: "failure".into(),
            verdict: "panic".into(),
            site: "src/bin/a.rs:22:9".into(),
            example: "ERROR1".into(),
            count: 3,
            timeline: vec![mark(0, 0, "write", false), mark(1, 1, "panic", true)],
            ..Failure::default()
        };
        Report {
            stopped: "budget".into(),
            bugs: vec![real, not, untried],
            failures: vec![failure],
            ..Report::default()
        }
    }

    fn parse(html: &str) -> roxmltree::Document<'_> {
        let options = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        roxmltree::Document::parse_with_options(html, options).expect("well-formed")
    }

    fn class_is(n: roxmltree::Node<'_, '_>, class: &str) -> bool {
        n.attribute("class")
            .is_some_and(|c| c.split(' ').any(|c| c == class))
    }

    #[test]
    fn the_report_is_well_formed_findings_first_with_one_timeline_per_finding_and_confirmed_bug() {
        let html = render(&sample());
        let doc = parse(&html);
        let ids: Vec<&str> = doc
            .descendants()
            .filter_map(|n| n.attribute("id"))
            .collect();
        let at = |id: &str| ids.iter().position(|x| *x == id).unwrap();
        assert!(at("findings") < at("candidates"), "{ids:?}");
        let timelines: Vec<_> = doc.descendants().filter(|n| class_is(*n, "tl")).collect();
        assert_eq!(timelines.len(), 2);
        // One row per mark, each with its step number (as replay numbers them, from 1)
        // and the full site and variable in its title; the marked steps highlighted.
        let bug = timelines
            .iter()
            .find(|n| n.attribute("id") == Some("timeline-bug-00000000000000aa"))
            .unwrap();
        let steps: Vec<_> = bug.descendants().filter(|n| class_is(*n, "step")).collect();
        assert_eq!(steps.len(), 4);
        let first = steps[0].attribute("title").unwrap();
        assert!(first.starts_with("step 6 "), "{first}");
        assert!(first.contains("src/bin/a<b>.rs:12:5") && first.contains("a::Z"));
        assert_eq!(steps.iter().filter(|n| class_is(**n, "hl")).count(), 2);
        // Lanes: two tasks and the handler of source 0.
        let lanes: Vec<String> = bug
            .descendants()
            .filter(|n| n.tag_name().name() == "th" && class_is(*n, "lane"))
            .map(|n| n.text().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(lanes, ["task 0", "task 1", "irq 0"]);
        // The steps before the first shown, the legend and the verdict last.
        assert!(bug.descendants().any(|n| class_is(n, "gap")));
        let rows: Vec<_> = bug
            .descendants()
            .filter(|n| n.tag_name().name() == "tr")
            .collect();
        assert!(class_is(*rows.last().unwrap(), "verdict"));
        assert!(html.contains("class=\"legend\""));
        assert!(html.contains("a&lt;b&gt;.rs:12"));
        // A traced value beside its variable.
        assert!(html.contains("<td class=\"var\">a::Z <span class=\"val\">= -1</span></td>"));
        // The failure's own event ends its timeline, without a step number.
        let failure = timelines
            .iter()
            .find(|n| n.attribute("id") == Some("timeline-failure-00000000000000ff"))
            .unwrap();
        let end: Vec<_> = failure
            .descendants()
            .filter(|n| class_is(*n, "end"))
            .collect();
        assert_eq!(end.len(), 1);
        assert!(html.contains("verdict: panic — ERROR1 at a.rs:22"));
    }

    #[test]
    fn a_shrunk_finding_shows_its_shortest_interleaving_first_with_its_replay_command() {
        let mut r = sample();
        r.failures[0].shrunk = Some(Shrunk {
            schedule: "0:3>1".into(),
            preemptions: 1,
            switches: 1,
            steps: 2,
            original_preemptions: 3,
            original_switches: 4,
            original_steps: 9,
            original_entries: 4,
            runs: 5,
            replay: Some(Replay {
                command: "jostle replay fw --report r --bug ff --shrunk".into(),
                ..Replay::default()
            }),
            timeline: vec![mark(0, 1, "write", false), mark(1, 1, "panic", true)],
            note: String::new(),
        });
        r.bugs[0].shrunk = Some(Shrunk {
            note: "the schedule did not replay".into(),
            ..Shrunk::default()
        });
        let html = render(&r);
        let doc = parse(&html);
        let tables: Vec<&str> = doc
            .descendants()
            .filter(|n| class_is(*n, "tl"))
            .filter_map(|n| n.attribute("id"))
            .collect();
        assert_eq!(
            tables,
            [
                "timeline-failure-shrunk-00000000000000ff",
                "timeline-failure-00000000000000ff",
                "timeline-bug-00000000000000aa"
            ]
        );
        assert!(html.contains(
            "Shortest interleaving found: 1 preemption, 2 steps, 1 context switch (the recorded run: 3 preemptions, 9 steps; 5 runs to shrink it). Replay it: <code>jostle replay fw --report r --bug ff --shrunk</code>"
        ), "{html}");
        assert!(html.contains("Not shrunk: the schedule did not replay"));
    }

    #[test]
    fn each_unconfirmed_candidate_says_why() {
        let r = sample();
        let html = render(&r);
        let doc = parse(&html);
        let why: Vec<_> = doc
            .descendants()
            .filter(|n| class_is(*n, "why"))
            .map(|n| n.attribute("id").unwrap())
            .collect();
        assert_eq!(why, ["why-00000000000000bb", "why-00000000000000cc"]);
        let tried = why_unconfirmed(&r.bugs[1], &r);
        assert!(
            tried.contains(
                "no run made it real: 50 race runs (ended: panic 50: \u{201c}ERROR1\u{201d} 50)."
            ),
            "{tried}"
        );
        assert!(tried.contains("at most 0.07"), "{tried}");
        assert_eq!(
            why_unconfirmed(&r.bugs[2], &r),
            "never tried: the run budget ran out first."
        );
        let skipped = Bug {
            skipped: Some("more breakpoints than a block holds".into()),
            ..Bug::default()
        };
        assert!(why_unconfirmed(&skipped, &r).starts_with("not targeted: more breakpoints"));
    }
}
