//! `report.html` as a person sees it: a real campaign's report (rf_fig1 on the host port:
//! a failure, a harmful race, an unconfirmed candidate) rendered by headless Chromium at
//! 1280 px. A script added to a copy of the page measures the layout and reports it
//! through `--dump-dom`; the test checks the rendered page against report.json (every step
//! of every timeline present, in its task's lane, with its number, variable and source
//! line, nothing clipped, no table wider than the page, the verdict last, a "why not
//! confirmed" line per unconfirmed candidate, the findings first) and writes a screenshot
//! into the report directory (`target/jostle-e2e/browser/jostle-report/report.png`). The
//! same page with a timeline far longer and wider than any example's must hold too.
//!
//! Chromium is required: `scripts/setup` installs it (CI runs it), so a missing browser is
//! a failure, not a skip. `JOSTLE_DOCS_SCREENSHOT=1` also copies the screenshot to
//! `docs/report.png` (the README's picture).

use crate::common;

use common::*;
use jostle_host_tools::output::html;
use jostle_host_tools::output::report::{Mark, Report, Shrunk};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The page width the report must read at.
const WIDTH: u32 = 1280;

/// Measures the rendered page and appends the figures, as JSON, in `pre#jostle-measure`.
const MEASURE: &str = r#"<script>
(function () {
  var page = document.documentElement, width = page.clientWidth;
  // Is an element's content cut off, or does it reach past the page's right edge?
  function clipped(el) {
    var r = el.getBoundingClientRect();
    return el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1 ||
      r.left < 0 || r.right > width + 0.5;
  }
  function inside(inner, outer) {
    var a = inner.getBoundingClientRect(), b = outer.getBoundingClientRect();
    return a.left >= b.left - 0.5 && a.right <= b.right + 0.5 &&
      a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
  }
  var out = {
    scrollWidth: page.scrollWidth, clientWidth: width, height: page.scrollHeight,
    wide: [], timelines: [], why: [],
    findings: document.getElementById('findings').getBoundingClientRect().top,
    candidates: document.getElementById('candidates').getBoundingClientRect().top
  };
  document.querySelectorAll('table').forEach(function (t) {
    if (t.getBoundingClientRect().right > width + 0.5 || t.scrollWidth > t.clientWidth + 1)
      out.wide.push(t.id || t.className);
  });
  document.querySelectorAll('table.tl').forEach(function (t) {
    var legend = t.previousElementSibling;
    var rows = t.querySelectorAll('tr');
    var tl = {
      id: t.id,
      legend: !!legend && legend.className === 'legend' && legend.textContent.length > 0,
      lanes: Array.from(t.querySelectorAll('th.lane')).map(function (th) { return th.textContent; }),
      verdictLast: rows[rows.length - 1].classList.contains('verdict'),
      verdict: rows[rows.length - 1].textContent,
      steps: []
    };
    t.querySelectorAll('tr.step').forEach(function (tr) {
      var lanes = Array.from(tr.querySelectorAll('td.lane'));
      var lane = lanes.findIndex(function (td) { return td.querySelector('.op'); });
      var op = lane < 0 ? null : lanes[lane].querySelector('.op');
      var cells = [tr.querySelector('td.n'), tr.querySelector('td.var'), tr.querySelector('td.src')];
      tl.steps.push({
        n: cells[0].textContent, title: tr.getAttribute('title') || '', lane: lane,
        op: op ? op.textContent : '', hl: tr.classList.contains('hl') && !!op && op.classList.contains('hl'),
        variable: cells[1].textContent, source: cells[2].textContent,
        clipped: !op || clipped(op) || !inside(op, lanes[lane]) || cells.some(clipped),
        visible: !!op && op.getBoundingClientRect().width > 0,
        px: op ? parseFloat(getComputedStyle(op).fontSize) : 0
      });
    });
    out.timelines.push(tl);
  });
  document.querySelectorAll('tr.why').forEach(function (tr) {
    out.why.push({ id: tr.id, text: tr.textContent, clipped: clipped(tr.cells[0]) });
  });
  var pre = document.createElement('pre');
  pre.id = 'jostle-measure';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
</body>"#;

/// The Chromium binary; its absence fails the test (CI installs it through scripts/setup).
fn chromium() -> PathBuf {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/bin")])
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file());
    found.unwrap_or_else(|| {
        panic!(
            "chromium is missing: the report's browser test needs it. Run scripts/setup (as root it installs it), or `sudo apt-get install chromium`"
        )
    })
}

/// Headless Chromium on `page` at `WIDTH` x `height` with `args`, in a fresh profile,
/// killed after two minutes; its standard output. (Output goes through files: a pipe
/// nobody reads while waiting would fill and stall the browser.)
fn chrome(page: &Path, height: u32, args: &[&str]) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let (stdout, stderr) = (scratch.path().join("out"), scratch.path().join("err"));
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.path().join("profile").display()
        ))
        .arg(format!("--window-size={WIDTH},{height}"))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .expect("chromium starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium did not finish within 2 minutes on {}",
                page.display()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        status.success(),
        "chromium failed on {}: {}",
        page.display(),
        std::fs::read_to_string(&stderr).unwrap_or_default()
    );
    std::fs::read_to_string(&stdout).unwrap()
}

/// The layout of `html` as Chromium renders it at `WIDTH` px (a copy with the measuring
/// script, in `dir`).
fn measure(html: &str, dir: &Path) -> Value {
    let page = dir.join("measure.html");
    let probed = html.replacen("</body>", MEASURE, 1);
    assert_ne!(probed, html, "report.html has no </body>");
    std::fs::write(&page, probed).unwrap();
    let dom = chrome(&page, 900, &["--dump-dom"]);
    let start = dom
        .find("<pre id=\"jostle-measure\">")
        .unwrap_or_else(|| panic!("the measuring script did not run: {dom}"));
    let text = &dom[start + "<pre id=\"jostle-measure\">".len()..];
    let text = &text[..text.find("</pre>").unwrap()];
    let json = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// The checks every rendered report must pass: nothing wider than the page, every step of
/// every timeline of `report` shown whole in its lane, findings first, a reason for each
/// unconfirmed candidate.
/// The timelines a finding or bug shows, in page order: the shrunk run's, then the recorded run's.
fn shown<'a>(
    what: &str,
    id: &str,
    shrunk: &'a Option<Shrunk>,
    recorded: &'a [Mark],
    out: &mut Vec<(String, &'a [Mark])>,
) {
    if let Some(s) = shrunk.as_ref().filter(|s| !s.timeline.is_empty()) {
        out.push((format!("timeline-{what}-shrunk-{id}"), &s.timeline[..]));
    }
    if !recorded.is_empty() {
        out.push((format!("timeline-{what}-{id}"), recorded));
    }
}

fn check(report: &Report, m: &Value) {
    assert!(
        m["scrollWidth"].as_u64() <= m["clientWidth"].as_u64(),
        "the page scrolls sideways at {WIDTH} px: {} > {}",
        m["scrollWidth"],
        m["clientWidth"]
    );
    assert_eq!(
        m["wide"],
        serde_json::json!([]),
        "tables wider than the page"
    );
    assert!(
        m["findings"].as_f64() < m["candidates"].as_f64(),
        "the findings come first"
    );
    let timelines = m["timelines"].as_array().unwrap();
    // Each finding and confirmed bug: its shrunk run's timeline first, then the recorded run's.
    let mut expected: Vec<(String, &[Mark])> = Vec::new();
    for f in &report.failures {
        shown("failure", &f.id, &f.shrunk, &f.timeline, &mut expected);
    }
    for b in report.bugs.iter().filter(|b| b.confirmed > 0) {
        shown("bug", &b.id, &b.shrunk, &b.timeline, &mut expected);
    }
    assert!(!expected.is_empty(), "no timeline to check");
    assert!(
        expected.iter().any(|(id, _)| id.contains("-shrunk-")),
        "no shrunk timeline to check"
    );
    let order: Vec<&str> = timelines
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = expected.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        order, want,
        "one timeline per run shown, the shrunk one first"
    );
    for (id, marks) in &expected {
        let tl = timelines
            .iter()
            .find(|t| t["id"] == id.as_str())
            .unwrap_or_else(|| panic!("{id} is not on the page"));
        assert_eq!(tl["legend"], true, "{id}: a legend");
        assert_eq!(tl["verdictLast"], true, "{id}: the verdict ends it");
        let mut lanes: Vec<u8> = marks.iter().map(|m| m.task).collect();
        lanes.sort_unstable();
        lanes.dedup();
        let names: Vec<String> = lanes
            .iter()
            .map(|&t| {
                if t >= 0x80 {
                    format!("irq {}", t - 0x80)
                } else {
                    format!("task {t}")
                }
            })
            .collect();
        assert_eq!(tl["lanes"], serde_json::json!(names), "{id}: one lane each");
        let steps = tl["steps"].as_array().unwrap();
        assert_eq!(steps.len(), marks.len(), "{id}: every step shown");
        for (mark, s) in marks.iter().zip(steps) {
            let what = format!("{id} step {}: {s}", mark.step);
            assert_eq!(s["clipped"], false, "{what}: clipped");
            assert_eq!(s["visible"], true, "{what}: invisible");
            assert!(s["px"].as_f64() >= Some(9.0), "{what}: too small to read");
            assert_eq!(s["op"], mark.op.as_str(), "{what}");
            assert_eq!(s["hl"], mark.highlight, "{what}: marked or not");
            let lane = lanes.iter().position(|&t| t == mark.task).unwrap();
            assert_eq!(s["lane"], lane, "{what}: in its task's lane");
            let variable = if mark.value.is_empty() {
                mark.location.clone()
            } else {
                format!("{} = {}", mark.location, mark.value)
            };
            assert_eq!(
                s["variable"],
                variable.as_str(),
                "{what}: variable and value"
            );
            let title = s["title"].as_str().unwrap();
            assert!(
                title.starts_with("step ") || title.starts_with("end of the run"),
                "{what}: a title"
            );
            assert!(
                title.contains(&mark.site) && title.contains(&mark.location),
                "{what}: the title names the source line and the variable"
            );
            let source = s["source"].as_str().unwrap();
            match mark.site.rsplit(':').nth(1) {
                Some(line) => assert!(
                    source.ends_with(&format!(":{line}")),
                    "{what}: the source line beside it"
                ),
                None => assert_eq!(source, "", "{what}"),
            }
            // Numbered as replay numbers steps, from 1; the run's ending has no number.
            let n = s["n"].as_str().unwrap();
            assert!(
                n == (mark.step + 1).to_string() || (n == "·" && title.starts_with("end")),
                "{what}: numbered"
            );
        }
    }
    let why = m["why"].as_array().unwrap();
    let unconfirmed: Vec<String> = report
        .bugs
        .iter()
        .filter(|b| b.confirmed == 0)
        .map(|b| format!("why-{}", b.id))
        .collect();
    let ids: Vec<&str> = why.iter().map(|w| w["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids, unconfirmed,
        "a \"why not confirmed\" line per unconfirmed one"
    );
    for w in why {
        assert!(
            w["text"]
                .as_str()
                .unwrap()
                .starts_with("Why not confirmed: ")
                && w["clipped"] == false,
            "{w}"
        );
    }
}

/// The report of a short campaign on rf_fig1 (host port), made once per test process in
/// `target/jostle-e2e/browser` (kept after the test, screenshot included). Built by package
/// and binary from inside the workspace, so its replay commands read as a user's would.
fn campaign() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = target_dir().join("browser");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut args = vec!["campaign", "-p", "jostle-examples", "--bin", "rf_fig1"];
        args.extend(["--host", "--out", "jostle-report", "-j", "2"]);
        let out = Command::new(jostle())
            .current_dir(&dir)
            .env("JOSTLE_TARGET_DIR", target_dir())
            .args(&args)
            .output()
            .expect("jostle runs");
        assert!(
            dir.join("jostle-report").join("report.html").exists(),
            "no report: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir.join("jostle-report")
    })
}

/// The PNG's width and height (from its header).
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is not a PNG",
        path.display()
    );
    let word = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (word(16), word(20))
}

#[test]
fn the_report_reads_in_a_browser_at_1280_px() {
    let dir = campaign();
    let report = Report::read(dir).unwrap();
    assert!(report.failed().next().is_some(), "rf_fig1 fails (ERROR1)");
    assert!(report.confirmed().next().is_some(), "a bug is confirmed");
    assert!(report.bugs.iter().any(|b| b.confirmed == 0), "one is not");
    assert!(
        report
            .failures
            .iter()
            .flat_map(|f| &f.timeline)
            .any(|m| m.op == "read" && m.value == "1"),
        "ERROR1's timeline shows z read as 1"
    );
    let page = dir.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let m = measure(&html, scratch.path());
    check(&report, &m);

    // The whole page, as a person sees it at 1280 px.
    let height = m["height"].as_u64().unwrap().clamp(600, 16_000) as u32;
    let png = dir.join("report.png");
    chrome(&page, height, &[&format!("--screenshot={}", png.display())]);
    assert_eq!(png_size(&png), (WIDTH, height));
    if std::env::var_os("JOSTLE_DOCS_SCREENSHOT").is_some() {
        std::fs::copy(&png, workspace().join("docs").join("report.png")).unwrap();
    }
}

#[test]
fn a_long_wide_timeline_is_neither_clipped_nor_wider_than_the_page() {
    let dir = campaign();
    let mut report = Report::read(dir).unwrap();
    // Far past any example: 300 steps over 12 tasks and 3 handlers, with names and paths
    // long and unbroken.
    let long = "app::a_module_with_a_rather_long_name::THE_STATIC_WITH_AN_EXTREMELY_LONG_NAME_THAT_NEVER_BREAKS+1024";
    let ops = [
        "read",
        "write",
        "acquire",
        "atomic-rmw",
        "irq-enter",
        "cas-failed",
    ];
    let marks: Vec<Mark> = (0..300u64)
        .map(|i| {
            let k = i as usize;
            Mark {
                step: i,
                task: if k % 5 == 4 { 0x80 + (k % 3) as u8 } else { (k % 12) as u8 },
                op: ops[k % ops.len()].into(),
                site: format!(
                    "/home/someone/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/a_dependency_with_a_long_name-0.8.0/src/deeply/nested/module_{k}.rs:{}:17",
                    100 + k
                ),
                location: long.into(),
                value: if k.is_multiple_of(3) { format!("{}", -(k as i64)) } else { String::new() },
                highlight: k.is_multiple_of(37),
                task_name: String::new(),
            }
        })
        .collect();
    let failure = report.failures.first_mut().unwrap();
    failure.timeline = marks;
    failure.example = "x".repeat(400);
    let bug = report.bugs.iter_mut().find(|b| b.confirmed == 0).unwrap();
    bug.sites = vec![format!("src/{}.rs:1:1", "very_long_file_name_".repeat(12))];
    // Kept beside the report, for a look when this fails.
    let page = dir.parent().unwrap().join("long.html");
    let html = html::render(&report);
    std::fs::write(&page, &html).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let m = measure(&html, scratch.path());
    check(&report, &m);
}
