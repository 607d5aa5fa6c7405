//! `scripts/racebench` end to end on a subset of racebench 2.1's cases (the full 31 run
//! outside CI): it builds the ports and the tool, runs a campaign per case, maps each confirmed
//! triple back to the C lines and scores it, and ends with its summary line.

mod common;

use common::*;

/// The cases CI runs: a chained unmask (001: a handler enables the source main masked).
const CASES: &str = "1";
/// Each case's bugs cell.
const EXPECTED: &[(&str, &str)] = &[("svp_simple_001", "1/1")];
/// The start of the summary line: bugs found of those labelled in these cases.
const SUMMARY: &str = "racebench: bugs 1/1, false alarms ";

/// The per-case row of `case` in the script's table: (bugs, false alarms) cells.
fn cells<'a>(stdout: &'a str, case: &str) -> (&'a str, &'a str) {
    let row = stdout
        .lines()
        .find(|l| l.starts_with(case))
        .unwrap_or_else(|| panic!("no row {case}: {stdout}"));
    let mut words = row.split_whitespace().skip(1);
    (words.next().unwrap(), words.next().unwrap())
}

#[test]
fn the_benchmark_scores_confirmed_triples_against_the_labels() {
    let stdout = bench_script("racebench", &["--cases", CASES, "--budget", "1000"]);
    // Every planted bug of these cases is confirmed; false alarms are counted, whatever
    // their number (some are reachable under the benchmark's own firing model).
    for &(case, bugs) in EXPECTED {
        assert_eq!(cells(&stdout, case).0, bugs, "{stdout}");
    }
    let last = stdout.lines().last().unwrap();
    assert!(last.starts_with(SUMMARY), "{stdout}");
    assert!(last.contains(", score "), "{last}");
}
