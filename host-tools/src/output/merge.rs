//! Shard reports (`campaign --shard I/N`) combined into the report of the whole campaign.

use super::report::{Bug, Failure, REPORT_SCHEMA, Replay, Report, Settings};
use crate::error::JostleError;
use std::collections::{BTreeMap, BTreeSet};

/// Combines shard reports of one campaign (same firmware and settings) into one: runs and
/// counts add up, the first confirming and harmful runs are the lowest-indexed ones, so the
/// merge of all shards equals what one unsharded campaign reports for the same candidates.
pub fn merge(reports: &[Report]) -> Result<Report, JostleError> {
    let Some(first) = reports.first() else {
        return Err(JostleError::Usage(
            "jostle merge needs at least one report".into(),
        ));
    };
    let mut out = Report {
        schema_version: REPORT_SCHEMA,
        firmware: first.firmware.clone(),
        settings: first.settings.clone(),
        stopped: "done".into(),
        ..Report::default()
    };
    out.runs.phase1 = first.runs.phase1;
    out.runs.phase1_verdicts = first.runs.phase1_verdicts.clone();
    let mut bugs: BTreeMap<(String, String), Bug> = BTreeMap::new();
    let mut failures: BTreeMap<String, Failure> = BTreeMap::new();
    let count = first.shards.first().map_or(1, |s| s[1]);
    let mut seen = BTreeSet::new();
    // Reports of other campaigns first: their shard numbers mean nothing together.
    for (k, r) in reports.iter().enumerate().skip(1) {
        if r.firmware.fingerprint != first.firmware.fingerprint {
            return Err(JostleError::BadReport(format!(
                "report {} is of another firmware ({}) than report 1 ({}): only shards of one campaign merge",
                k + 1,
                r.firmware.fingerprint,
                first.firmware.fingerprint
            )));
        }
        if r.settings != first.settings {
            return Err(JostleError::BadReport(format!(
                "report {} is of a campaign with other settings than report 1 ({}): only shards of one campaign merge",
                k + 1,
                settings_differ(&first.settings, &r.settings)
            )));
        }
    }
    for r in reports {
        for s in &r.shards {
            if s[1] != count {
                return Err(JostleError::BadReport(format!(
                    "shard {}/{} does not belong with shards of {count}",
                    s[0], s[1]
                )));
            }
            if !seen.insert(s[0]) {
                return Err(JostleError::BadReport(format!(
                    "shard {}/{count} is given twice",
                    s[0]
                )));
            }
        }
        out.shards.extend(r.shards.iter().copied());
        if r.stopped != "done" {
            out.stopped = r.stopped.clone();
        }
        // Every shard runs all of Phase I (so that all predict the same): count it once.
        if r.runs.phase1 != first.runs.phase1
            || r.runs.phase1_verdicts != first.runs.phase1_verdicts
        {
            return Err(JostleError::BadReport(format!(
                "shard {:?} saw another Phase I than shard {:?}",
                r.shards, first.shards
            )));
        }
        out.runs.phase2 += r.runs.phase2;
        // Search runs are sliced by shard (each block of seeds has one shard): added.
        out.runs.search += r.runs.search;
        for (v, n) in &r.runs.search_verdicts {
            *out.runs.search_verdicts.entry(v.clone()).or_default() += n;
        }
        out.timing.wall_seconds = out.timing.wall_seconds.max(r.timing.wall_seconds);
        out.timing.shrink_seconds = out.timing.shrink_seconds.max(r.timing.shrink_seconds);
        out.timing.jobs += r.timing.jobs;
        for f in &r.failures {
            match failures.get_mut(&f.id) {
                None => {
                    failures.insert(f.id.clone(), f.clone());
                }
                Some(m) => merge_failure(m, f),
            }
        }
        for b in &r.bugs {
            match bugs.get_mut(&(b.kind.clone(), b.id.clone())) {
                None => {
                    bugs.insert((b.kind.clone(), b.id.clone()), b.clone());
                }
                Some(m) => merge_bug(m, b),
            }
        }
    }
    out.shards.sort_unstable();
    if out.stopped == "done" && seen.len() < count as usize {
        // Counts of the shards given only: say so rather than pass for the whole campaign.
        out.stopped = "incomplete".into();
    }
    out.bugs = bugs.into_values().collect();
    out.failures = failures.into_values().collect();
    out.sort_failures();
    for b in &mut out.bugs {
        b.settle();
        // The timeline of the run the merged bug names (its first harmful, else first
        // confirming run), from the shard that made that run.
        let shown = b.first_harmful.as_ref().or(b.first_confirmed.as_ref());
        let from = reports
            .iter()
            .flat_map(|r| &r.bugs)
            .filter(|o| o.kind == b.kind && o.id == b.id)
            .find(|o| o.first_harmful.as_ref().or(o.first_confirmed.as_ref()) == shown);
        b.timeline = from.map(|o| o.timeline.clone()).unwrap_or_default();
        // Its shrunk run too: shrunk from that run.
        b.shrunk = from.and_then(|o| o.shrunk.clone());
    }
    // Every shard shrinks the findings it saw: the merge counts the runs of the shrinks it
    // keeps, one per finding, as the unsharded campaign makes them.
    let kept = out.bugs.iter().map(|b| &b.shrunk);
    let kept = kept.chain(out.failures.iter().map(|f| &f.shrunk));
    out.runs.shrink = kept.flatten().map(|s| u64::from(s.runs)).sum();
    let made = out.runs.made();
    out.timing.runs_per_second = made as f64 / out.timing.wall_seconds.max(1e-9);
    Ok(out)
}

/// The settings in which `b` differs from `a`, as `name a vs b`.
fn settings_differ(a: &Settings, b: &Settings) -> String {
    let (a, b) = (serde_json::json!(a), serde_json::json!(b));
    let differ: Vec<String> = a
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| b.get(k.as_str()) != Some(v))
        .map(|(k, v)| format!("{k} {v} vs {}", b[k.as_str()]))
        .collect();
    differ.join(", ")
}

/// Adds another shard's runs of one failure signature: Phase I once (every shard makes
/// it), Phase II runs added; the first run is the earliest in the unsharded order.
/// Refuses to write the merge into the directory of one of its `inputs` (report
/// directories or `report.json` files): it would overwrite a shard's report with the merge.
pub fn check_output(
    inputs: &[std::path::PathBuf],
    out: &std::path::Path,
) -> Result<(), JostleError> {
    let dir_of = |p: &std::path::Path| {
        if p.is_dir() {
            Some(p.to_owned())
        } else {
            p.parent().map(|d| {
                if d.as_os_str().is_empty() {
                    ".".into()
                } else {
                    d.to_owned()
                }
            })
        }
    };
    // An output directory that does not exist yet is no input's.
    let Ok(out_dir) = out.canonicalize() else {
        return Ok(());
    };
    for input in inputs {
        let same = dir_of(input)
            .and_then(|d| d.canonicalize().ok())
            .is_some_and(|d| d == out_dir);
        if same {
            return Err(JostleError::Usage(format!(
                "--out {}: {} is one of the reports being merged; write the merge to another directory",
                out.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

fn merge_failure(into: &mut Failure, other: &Failure) {
    into.count += other.count - other.phase1;
    into.search += other.search;
    for (c, n) in &other.during {
        *into.during.entry(c.clone()).or_default() += n;
    }
    for (c, n) in &other.after_confirming {
        *into.after_confirming.entry(c.clone()).or_default() += n;
    }
    if other.order < into.order {
        into.order = other.order;
        into.first = other.first.clone();
        into.example.clone_from(&other.example);
        into.timeline.clone_from(&other.timeline);
        into.shrunk.clone_from(&other.shrunk);
    }
}

fn merge_bug(into: &mut Bug, other: &Bug) {
    for a in &other.attempts {
        match into.attempts.iter_mut().find(|x| x.strategy == a.strategy) {
            Some(x) => {
                x.runs += a.runs;
                x.confirmed += a.confirmed;
                x.harmful += a.harmful;
                for (k, n) in &a.verdicts {
                    *x.verdicts.entry(k.clone()).or_default() += n;
                }
                for (k, n) in &a.panics {
                    *x.panics.entry(k.clone()).or_default() += n;
                }
            }
            None => into.attempts.push(a.clone()),
        }
    }
    for analysis in &other.predicted_by {
        if !into.predicted_by.contains(analysis) {
            into.predicted_by.push(analysis.clone());
        }
    }
    into.predicted_by.sort();
    if into.skipped.is_none() {
        into.skipped.clone_from(&other.skipped);
    }
    let earlier = |a: &Option<Replay>, b: &Option<Replay>| match (a, b) {
        (Some(x), Some(y)) => y.index < x.index,
        (None, Some(_)) => true,
        _ => false,
    };
    if earlier(&into.first_confirmed, &other.first_confirmed) {
        into.first_confirmed = other.first_confirmed.clone();
    }
    if earlier(&into.first_harmful, &other.first_harmful) {
        into.first_harmful = other.first_harmful.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::report::tests::bug;
    use crate::output::report::{Mark, RunCounts};

    #[test]
    fn the_merge_is_not_written_over_one_of_its_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("shard-0"), dir.path().join("shard-1"));
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        std::fs::write(b.join("report.json"), "{}").unwrap();
        let inputs = vec![a.clone(), b.join("report.json")];
        for out in [
            a.clone(),
            b.clone(),
            a.join("."),
            b.join("..").join("shard-1"),
        ] {
            let e = check_output(&inputs, &out).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(
                e.to_string().contains("is one of the reports being merged"),
                "{e}"
            );
        }
        check_output(&inputs, &dir.path().join("merged")).unwrap();
        check_output(&inputs, dir.path()).unwrap();
    }

    #[test]
    fn merge_adds_counts_and_keeps_the_earliest_run() {
        let shard = |i: u32, bugs: Vec<Bug>| Report {
            schema_version: REPORT_SCHEMA,
            shards: vec![[i, 2]],
            stopped: "done".into(),
            runs: RunCounts {
                phase1: 3,
                phase2: 10,
                ..RunCounts::default()
            },
            bugs,
            ..Report::default()
        };
        let a = shard(0, vec![bug("a", 5, 2, Some(4)), bug("b", 5, 0, None)]);
        let b = shard(1, vec![bug("a", 5, 3, Some(1))]);
        let m = merge(&[a.clone(), b]).unwrap();
        assert_eq!(m.shards, vec![[0, 2], [1, 2]]);
        assert_eq!((m.runs.phase1, m.runs.phase2), (3, 20));
        let a_bug = &m.bugs[0];
        assert_eq!((a_bug.runs, a_bug.confirmed), (10, 5));
        assert_eq!(a_bug.first_confirmed.as_ref().unwrap().index, 1);
        assert_eq!(a_bug.probability[0], 0.5);
        assert_eq!(m.bugs[1].status, "unconfirmed");
        let mut other = a;
        other.firmware.fingerprint = "x@1".into();
        assert!(merge(&[m, other]).is_err());
    }

    #[test]
    fn merge_refuses_repeated_or_foreign_shards_and_marks_missing_ones() {
        let shard = |i: u32, n: u32| Report {
            shards: vec![[i, n]],
            stopped: "done".into(),
            bugs: vec![bug("a", 5, 1, Some(i as u64))],
            ..Report::default()
        };
        let e = merge(&[shard(0, 3), shard(0, 3)]).unwrap_err();
        assert_eq!(e.exit_code(), 31);
        assert!(e.to_string().contains("given twice"), "{e}");
        assert!(merge(&[shard(0, 3), shard(1, 2)]).is_err());
        // Two unsharded reports of different firmware: refused for what they are.
        let mut other = shard(0, 1);
        other.firmware.fingerprint = "fw2@2".into();
        let e = merge(&[shard(0, 1), other]).unwrap_err();
        assert_eq!(e.exit_code(), 31);
        assert!(
            e.to_string()
                .contains("report 2 is of another firmware (fw2@2)"),
            "{e}"
        );
        let mut seeded = shard(1, 3);
        seeded.settings.seed = 7;
        let e = merge(&[shard(0, 3), seeded]).unwrap_err();
        assert!(e.to_string().contains("seed 0 vs 7"), "{e}");
        assert_eq!(
            merge(&[shard(0, 3), shard(2, 3)]).unwrap().stopped,
            "incomplete"
        );
        assert_eq!(
            merge(&[shard(0, 3), shard(1, 3), shard(2, 3)])
                .unwrap()
                .stopped,
            "done"
        );
    }

    #[test]
    fn merge_shows_the_timeline_of_the_run_it_names() {
        // Shard 0 confirmed first (index 0) but shard 1 has the only harmful run: the merged
        // bug names shard 1's harmful run, so it shows shard 1's timeline.
        let mark = |op: &str| Mark {
            op: op.into(),
            ..Mark::default()
        };
        let mut a = bug("a", 5, 2, Some(0));
        a.timeline = vec![mark("from shard 0")];
        let mut b = bug("a", 5, 2, Some(7));
        b.attempts[0].harmful = 1;
        b.first_harmful = b.first_confirmed.clone();
        b.timeline = vec![mark("from shard 1")];
        let report = |i: u32, bug: Bug| Report {
            shards: vec![[i, 2]],
            stopped: "done".into(),
            bugs: vec![bug],
            ..Report::default()
        };
        let m = merge(&[report(0, a), report(1, b)]).unwrap();
        assert_eq!(m.bugs[0].first_confirmed.as_ref().unwrap().index, 0);
        assert_eq!(m.bugs[0].first_harmful.as_ref().unwrap().index, 7);
        assert_eq!(m.bugs[0].timeline, vec![mark("from shard 1")]);
    }
}
