//! `scripts/cct-bench` end to end on a five-subject subset of the SURW paper's table (the
//! full 38 × 20 trials run outside CI): it builds the subjects and the tool, runs each
//! configuration's trials to their first failing run, prints the table with the published
//! figures beside ours, and ends with its summary line; configurations run apart and saved
//! (`--save`) print the same table together (`--load`).

use crate::common;

use common::*;

#[test]
#[ignore = "benchmark subset: scripts/test --all (and CI) runs it"]
fn the_benchmark_runs_a_subset_end_to_end_and_ends_with_its_summary_line() {
    // The campaign and POS in two runs, each saving its trials; then their table together.
    let dir = tempfile::tempdir().unwrap();
    let saved = |config: &str| dir.path().join(format!("{config}.json"));
    let mut alone = Vec::new();
    for config in ["campaign", "pos"] {
        let path = saved(config);
        let stdout = bench_script(
            "cct-bench",
            &[
                "--trials",
                "2",
                "--configs",
                config,
                "--subjects",
                SUBJECTS,
                "--save",
                path.to_str().unwrap(),
            ],
        );
        alone.push(stdout.lines().last().unwrap().to_owned());
    }
    assert!(alone[0].ends_with("; pos n/a; surw n/a"), "{}", alone[0]);
    assert_eq!(alone[1], "cct: pos 5/5; surw n/a");
    let (campaign, pos) = (saved("campaign"), saved("pos"));
    let stdout = bench_script(
        "cct-bench",
        &[
            "--load",
            campaign.to_str().unwrap(),
            "--load",
            pos.to_str().unwrap(),
        ],
    );
    // One row per subject with ours and the published cells.
    for subject in [
        "CS/deadlock01 |",
        "CS/account |",
        "CS/wronglock |",
        "CS/reorder_3 |",
        "CS/twostage |",
    ] {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(subject))
            .unwrap_or_else(|| panic!("no row {subject}: {stdout}"));
        assert_eq!(row.matches(" | ").count(), 5, "{row}");
        assert!(row.contains("(20/20)"), "published cells: {row}");
        assert!(row.contains("(2/2)"), "ours: {row}");
    }
    assert_eq!(stdout.lines().filter(|l| l.starts_with("CS/")).count(), 5);
    let last = stdout.lines().last().unwrap();
    // These five are found by every configuration within the budget; the campaign's part of
    // the line is the campaign run's own.
    assert!(
        last.starts_with("cct: campaign solved 5/5 in 2/2 trials; median runs to first bug "),
        "{last}"
    );
    assert!(last.ends_with("; pos 5/5; surw n/a"), "{last}");
    assert_eq!(
        last.strip_suffix("; pos 5/5; surw n/a"),
        alone[0].strip_suffix("; pos n/a; surw n/a")
    );
    // A file --save did not write is refused in one line.
    std::fs::write(dir.path().join("bad.json"), "{}").unwrap();
    let out = std::process::Command::new(workspace().join("scripts").join("cct-bench"))
        .args(["--load", dir.path().join("bad.json").to_str().unwrap()])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a file --save wrote"), "{err}");
}

const SUBJECTS: &str = "deadlock01,account,wronglock,reorder_3,twostage";
