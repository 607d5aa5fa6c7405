//! `jostle bench` prints its rows, each beside its goal: the host port against a shuttle
//! baseline (here a stand-in that prints the baseline's format), the kernel's costs, the
//! restart between runs of a boot and the kernel's footprint.

use crate::common;

use common::*;
use std::os::unix::fs::PermissionsExt;

/// `jostle bench` with `args` (and the tests' target directory): its output, once it has
/// exited 0.
fn bench(args: &[&str]) -> String {
    let out = std::process::Command::new(jostle())
        .current_dir(workspace())
        .arg("bench")
        .args(args)
        .arg("--target-dir")
        .arg(target_dir())
        .output()
        .expect("jostle runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The number before `word` on the line that starts with `prefix`.
fn figure(text: &str, prefix: &str, word: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in:\n{text}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == word)
        .unwrap_or_else(|| panic!("no `{word}` in `{line}`"));
    words[at - 1]
        .trim_end_matches('x')
        .parse()
        .unwrap_or_else(|_| panic!("no number before `{word}` in `{line}`"))
}

#[test]
#[ignore = "benchmark subset: scripts/test --all (and CI) runs it"]
fn bench_prints_the_host_port_against_shuttle_and_the_kernels_costs_beside_their_goals() {
    let dir = tempfile::tempdir().unwrap();
    // shuttle-baseline's `throughput` output, at 1,000 runs/s a program.
    let baseline = dir.path().join("shuttle-baseline");
    std::fs::write(
        &baseline,
        "#!/bin/sh\nfor p in rf_fig1 rf_fig2 af_fig2 deadlock hidden; do\n  printf '%s\\tk=20\\t1000 runs/s (random scheduler, one thread)\\n' $p\ndone\n",
    )
    .unwrap();
    std::fs::set_permissions(&baseline, std::fs::Permissions::from_mode(0o755)).unwrap();
    let shuttle = baseline.to_str().unwrap();
    let text = bench(&[
        "--only",
        "host",
        "--only",
        "kernel",
        "--host-runs",
        "400",
        "--shuttle",
        shuttle,
    ]);
    for program in [
        "rf_fig1",
        "rf_fig2",
        "af_fig2",
        "abba_deadlock",
        "hidden_order",
    ] {
        let rate: f64 = text
            .lines()
            .find(|l| l.trim_start().starts_with(program))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or_else(|| panic!("no rate for {program}:\n{text}"));
        assert!(rate > 0.0, "{text}");
    }
    // The ratio is Jostle's rate over the baseline's 1,000 runs/s.
    let rf_fig1_rate: f64 = text
        .lines()
        .find(|l| l.trim_start().starts_with("rf_fig1"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap();
    let ratio = figure(&text, "rf_fig1", ">=");
    assert!((ratio - rf_fig1_rate / 1000.0).abs() < 0.01, "{text}");
    assert!(text.contains("geometric mean"), "{text}");
    // rf_fig1's race makes most random runs panic (shuttle's own figure is 84.7 %).
    let hit = text
        .lines()
        .find(|l| l.trim_start().starts_with("rf_fig1"))
        .and_then(|l| {
            l.split_whitespace()
                .nth(2)?
                .trim_end_matches('%')
                .parse::<f64>()
                .ok()
        })
        .unwrap();
    assert!((60.0..=100.0).contains(&hit), "{text}");
    let restart = figure(&text, "restart", "instructions");
    assert!(restart > 100.0 && restart < 1e6, "{text}");
    assert!(text.contains("goal <= 5000"), "{text}");
    assert!(text.contains("footprint"), "{text}");
    assert!(text.contains("goal: point <= 50, switch <= 120"), "{text}");
    // Each point of the two-task ping-pong is timed on its own: a point that draws costs
    // more than a lone task's, and one that switches more than one that stays.
    let random = text
        .lines()
        .find(|l| l.starts_with("kernel cost  random"))
        .unwrap_or_else(|| panic!("no random row:\n{text}"));
    let after = |phrase: &str| -> f64 {
        let at = random.find(phrase).expect(phrase) + phrase.len();
        random[at..]
            .split_whitespace()
            .next()
            .and_then(|w| w.trim_end_matches(',').parse().ok())
            .unwrap_or_else(|| panic!("no number after `{phrase}` in `{random}`"))
    };
    let (alone, stays, switch) = (
        after("yield point"),
        after("point that stays"),
        after("point with switch"),
    );
    assert!(0.0 < alone && alone < stays && stays < switch, "{random}");
    // The same on every core, with the kernel's flash and RAM there.
    for core in ["M0", "M3", "M4F", "M33"] {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("core cost    {core} ")))
            .unwrap_or_else(|| panic!("no {core} row:\n{text}"));
        let at = |phrase: &str| -> f64 {
            let at = row.find(phrase).expect(phrase) + phrase.len();
            row[at..]
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let point = at("yield point");
        assert!(point > 0.0 && point < at("point with switch"), "{row}");
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("footprint    {core} "))),
            "{text}"
        );
    }
    // An Embassy task's poll step (the acquire's decision, the release executed at once,
    // the poll) beside a task's yield point: more than one point, measured for one task
    // and for two.
    let poll = figure(&text, "embassy poll  1 task", "instructions");
    assert!(poll > 4.0 * alone, "{text}");
    assert!(
        text.contains("embassy poll  2 tasks taking turns"),
        "{text}"
    );
    assert!(text.contains("goal: poll step <= 1000"), "{text}");
}

#[test]
#[ignore = "benchmark subset: scripts/test --all (and CI) runs it"]
fn bench_prints_served_batches_and_many_runs_beside_their_goals() {
    let text = bench(&["--only", "qemu", "--runs", "10"]);
    let batch = figure(&text, "qemu batch", "runs/s");
    assert!(batch > 0.0, "{text}");
    assert!(text.contains("goal >= 3000"), "{text}");
    // `jostle run --runs N` for N = 50 to 400: four timings, then the growth beside its goal.
    let many = text
        .lines()
        .find(|l| l.starts_with("run --runs N"))
        .unwrap_or_else(|| panic!("no `run --runs N` row:\n{text}"));
    assert_eq!(many.matches(" s,").count() + 1, 4, "{many}");
    let growth: f64 = many
        .split("took ")
        .nth(1)
        .and_then(|r| r.split('x').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no growth in `{many}`"));
    assert!(growth > 0.0 && growth < 16.0, "{many}");
    assert!(many.contains("goal: linear, ~8x"), "{many}");
}

#[test]
#[ignore = "benchmark subset: scripts/test --all (and CI) runs it"]
fn bench_prints_the_shrink_share_of_an_example_and_of_a_noisy_program_beside_its_goals() {
    let text = bench(&["--only", "shrink"]);
    for program in ["rf_fig1", "noisy_wronglock"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("shrink share {program} ")))
            .unwrap_or_else(|| panic!("no row for {program}:\n{text}"));
        let share = figure(&text, &format!("shrink share {program} "), "%");
        assert!((0.0..100.0).contains(&share), "{line}");
        assert!(line.contains("goal <= 20 %"), "{line}");
        assert!(line.contains("goal <= 1.25x)"), "{line}");
        // Every finding of rf_fig1 shrinks; of the noisy program, at least its failure.
        let (shrunk, of) = line
            .rsplit_once(" findings shrunk")
            .map(|(head, _)| {
                let words: Vec<&str> = head.split_whitespace().collect();
                (words[words.len() - 3], words[words.len() - 1])
            })
            .unwrap_or_else(|| panic!("{line}"));
        assert_ne!(shrunk, "0", "{line}");
        if program == "rf_fig1" {
            assert_eq!(shrunk, of, "{line}");
        }
    }
}
