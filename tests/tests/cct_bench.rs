//! `scripts/cct-bench` end to end on a five-subject subset of the SURW paper's table (the
//! full 38 × 20 trials run outside CI): it builds the subjects and the tool, runs each
//! configuration's trials to their first failing run, prints the table with the published
//! figures beside ours, and ends with its summary line.

mod common;

use common::*;

#[test]
fn the_benchmark_runs_a_subset_end_to_end_and_ends_with_its_summary_line() {
    let stdout = bench_script(
        "cct-bench",
        &[
            "--trials",
            "2",
            "--configs",
            "campaign,pos",
            "--subjects",
            "deadlock01,account,wronglock,reorder_3,twostage",
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
    }
    let last = stdout.lines().last().unwrap();
    // These five are found by every configuration within the budget.
    assert!(
        last.starts_with("cct: campaign solved 5/5 in 2/2 trials; median runs to first bug "),
        "{last}"
    );
    assert!(last.ends_with("; pos 5/5; surw n/a"), "{last}");
}
