//! `cargo test`'s side of `jostle campaign`: a firmware that declares tests
//! (`jostle::tests!`) is run test by test, each as a campaign of its own (its report in
//! `REPORT/<test>`), and the results are printed as libtest prints them, so that cargo and
//! the tools that read its output see an ordinary test binary (as embedded-test does for
//! `probe-rs run`).

use crate::cli::EXIT_INTERRUPTED;
use crate::cli::campaign::{CampaignArgs, firmware_command};
use jostle_host_tools::JostleError;
use jostle_host_tools::engine::campaign::{Budget, Campaign, Settings};
use jostle_host_tools::output::report::Report;
use jostle_kernel::Config;
use jostle_kernel::config::StrategyId;
use jostle_kernel::test_table::TestRecord;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Exit code of a test binary with a failed test (libtest's).
const EXIT_TEST_FAILED: u8 = 101;

/// Which tests to run, from libtest's command line.
#[derive(Debug, Default, PartialEq)]
struct Selection {
    /// Names containing one of these (all when empty).
    filters: Vec<String>,
    /// Names containing one of these are left out.
    skip: Vec<String>,
    /// Filters match whole names.
    exact: bool,
    /// List the tests instead of running them.
    list: bool,
    /// Run only ignored tests (none is ever ignored).
    ignored_only: bool,
}

impl Selection {
    /// libtest's options as cargo test passes them. Output and threading options are taken
    /// and change nothing (the campaigns print nothing but the result lines, and run one
    /// after another, each with `-j` workers).
    fn parse(args: &[String]) -> Result<Selection, JostleError> {
        let mut s = Selection::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let mut value = |name: &str| {
                it.next().cloned().ok_or_else(|| {
                    JostleError::Usage(format!("{name} needs a value (libtest's option)"))
                })
            };
            match arg.as_str() {
                "--exact" => s.exact = true,
                "--list" => s.list = true,
                "--ignored" => s.ignored_only = true,
                "--include-ignored" | "--nocapture" | "--show-output" | "-q" | "--quiet" => {}
                "--skip" => s.skip.push(value("--skip")?),
                "--test-threads" | "--color" | "--format" | "-Z" => {
                    value(arg)?;
                }
                a if a.starts_with("--test-threads=")
                    || a.starts_with("--color=")
                    || a.starts_with("--format=") => {}
                a if a.starts_with("--skip=") => s.skip.push(a["--skip=".len()..].to_owned()),
                a if a.starts_with('-') => {
                    return Err(JostleError::Usage(format!(
                        "`{a}`: not a test option jostle takes (filters, --exact, --skip F, --list, --ignored)"
                    )));
                }
                filter => s.filters.push(filter.to_owned()),
            }
        }
        Ok(s)
    }

    fn matches(&self, pattern: &str, name: &str) -> bool {
        if self.exact {
            pattern == name
        } else {
            name.contains(pattern)
        }
    }

    fn selects(&self, name: &str) -> bool {
        !self.ignored_only
            && (self.filters.is_empty() || self.filters.iter().any(|f| self.matches(f, name)))
            && !self.skip.iter().any(|f| self.matches(f, name))
    }
}

/// What one test's campaign ended with.
enum Verdict {
    Passed,
    /// Why it failed, for the failures section.
    Failed(String),
}

/// Runs the selected tests of `path`, prints libtest's lines, returns the exit code (0, 101,
/// or 130 when Ctrl-C stopped it).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_tests(
    args: &CampaignArgs,
    path: &Path,
    tests: &[TestRecord],
    base: Config,
    budget: Budget,
    portfolio: Vec<(StrategyId, u32)>,
    jobs: usize,
    stop: &Arc<AtomicBool>,
) -> Result<u8, JostleError> {
    let selection = Selection::parse(&args.test_args)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let io = |e| JostleError::io("writing the output", e);
    if selection.list {
        for t in tests.iter().filter(|t| selection.selects(t.name())) {
            writeln!(out, "{}: test", t.name()).map_err(io)?;
        }
        return Ok(0);
    }
    let chosen: Vec<&TestRecord> = tests
        .iter()
        .filter(|t| selection.selects(t.name()))
        .collect();
    let filtered_out = tests.len() - chosen.len();
    let started = std::time::Instant::now();
    let plural = if chosen.len() == 1 { "" } else { "s" };
    writeln!(out, "\nrunning {} test{plural}", chosen.len()).map_err(io)?;
    let runner = args.via.runner(path.to_owned(), args.timeout)?;
    let mut failures: Vec<(&str, String)> = Vec::new();
    let mut passed = 0;
    for test in &chosen {
        let expectation = if test.should_find() {
            " - should find"
        } else {
            ""
        };
        write!(out, "test {}{expectation} ... ", test.name()).map_err(io)?;
        out.flush().map_err(io)?;
        let report_dir = args.out.join(test.name());
        let settings = Settings {
            phase1_runs: args.phase1_runs,
            runs_per_candidate: args.runs_per_candidate,
            jobs,
            budget: if test.budget > 0 {
                Budget::Runs(u64::from(test.budget))
            } else {
                budget
            },
            seed: args.seed,
            base: Config {
                test: test.index,
                step_limit: if test.step_limit > 0 {
                    test.step_limit
                } else {
                    base.step_limit
                },
                ..base.clone()
            },
            shard: (0, 1),
            options: jostle_checker::Options::default(),
            max_rounds: args.max_rounds,
            firmware_command: firmware_command(&args.firmware, path, &args.via, Some(test.name())),
            report_dir: report_dir.clone(),
            livelock_bound: args.livelock_bound,
            portfolio: portfolio.clone(),
            // A test that must find a bug is done at its first failing run.
            until_failure: args.until_failure || test.should_find(),
            shrink: !args.no_shrink,
        };
        let mut campaign = Campaign::new(&*runner, settings, stop.clone());
        let result = campaign.run(&|_| {});
        let report = campaign.report().clone();
        if stop.load(Ordering::SeqCst) {
            writeln!(out, "interrupted").map_err(io)?;
            return Ok(EXIT_INTERRUPTED);
        }
        let verdict = match result {
            Ok(()) => judge(test, &report, &report_dir),
            // Nothing tested is the test's failure; anything else stops the binary (a
            // missing QEMU is no test's fault), with its own exit code.
            Err(JostleError::NothingTested(why)) => {
                Verdict::Failed(format!("nothing was tested: {why}"))
            }
            Err(e) => return Err(e),
        };
        match verdict {
            Verdict::Passed => {
                writeln!(out, "ok").map_err(io)?;
                passed += 1;
            }
            Verdict::Failed(why) => {
                writeln!(out, "FAILED").map_err(io)?;
                failures.push((test.name(), why));
            }
        }
    }
    if !failures.is_empty() {
        writeln!(out, "\nfailures:\n").map_err(io)?;
        for (name, why) in &failures {
            writeln!(out, "---- {name} stdout ----\n{why}\n").map_err(io)?;
        }
        writeln!(out, "failures:").map_err(io)?;
        for (name, _) in &failures {
            writeln!(out, "    {name}").map_err(io)?;
        }
    }
    let result = if failures.is_empty() { "ok" } else { "FAILED" };
    writeln!(
        out,
        "\ntest result: {result}. {passed} passed; {} failed; 0 ignored; 0 measured; {filtered_out} filtered out; finished in {:.2}s\n",
        failures.len(),
        started.elapsed().as_secs_f64()
    )
    .map_err(io)?;
    Ok(if failures.is_empty() {
        0
    } else {
        EXIT_TEST_FAILED
    })
}

/// Did the test's campaign end as the test expects? A test passes when it finds nothing,
/// or, `#[should_find]`, when it finds a failing run or a harmful bug.
fn judge(test: &TestRecord, report: &Report, dir: &Path) -> Verdict {
    let runs = report.runs.total();
    let found = report.any_failure();
    match (test.should_find(), found) {
        (false, false) | (true, true) => Verdict::Passed,
        (true, false) => Verdict::Failed(format!(
            "expected a bug, found none in {runs} runs (report: {})",
            dir.display()
        )),
        (false, true) => Verdict::Failed(findings(report, dir)),
    }
}

/// The findings of a report as the campaign's own output gives them (each failure with its
/// shortest run and replay commands), then the harmful bugs' replay commands.
fn findings(report: &Report, dir: &Path) -> String {
    let mut text = Vec::new();
    let _ = report.print_failures(&mut text);
    let mut text = String::from_utf8_lossy(&text).into_owned();
    for b in report.bugs.iter().filter(|b| b.harmful > 0) {
        let replay = b.first_harmful.as_ref().map_or("", |r| r.command.as_str());
        text += &format!("harmful {} {}: {replay}\n", b.kind, b.id);
    }
    text + &format!("report: {}", dir.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Selection, JostleError> {
        Selection::parse(&args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn libtests_options_select_tests_as_libtest_does() {
        let s = parse(&[
            "lock",
            "--skip",
            "dead",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .unwrap();
        assert!(s.selects("counter_under_a_lock") && s.selects("opposite_lock_orders"));
        assert!(!s.selects("lock_deadlocks") && !s.selects("lost_update"));
        let exact = parse(&["--exact", "lost_update"]).unwrap();
        assert!(exact.selects("lost_update") && !exact.selects("lost_update_2"));
        assert!(!parse(&["--ignored"]).unwrap().selects("any"));
        assert!(parse(&["--list"]).unwrap().list);
        assert!(matches!(parse(&["--bogus"]), Err(JostleError::Usage(_))));
        assert!(matches!(parse(&["--skip"]), Err(JostleError::Usage(_))));
    }
}
