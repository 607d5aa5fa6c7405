//! Replay: the recorded run of a reported bug, configured again for the image about to run,
//! and the check that the replay reproduces it. The interleaving around the bug is printed
//! by `output::replay_print`.

use crate::engine::campaign::replay_config;
use crate::error::JostleError;
use crate::output::report::{Bug, Failure, Replay, Report};
use crate::trace::run::RunOutcome;
use crate::trace::space::{SiteSpace, parse_location};
use crate::transport::Transport;
use jostle_kernel::{Config, TraceLevel};

/// What a report names by an id: a predicted bug or a failure's signature.
#[derive(Clone, Debug)]
pub enum Finding {
    /// A candidate bug.
    Bug(Bug),
    /// Runs that failed (or starved) with one signature.
    Failure(Failure),
}

impl Finding {
    /// `race`, `atomicity`, ... for a bug; the verdict (`panic`, ...) for a failure.
    pub fn kind(&self) -> &str {
        match self {
            Finding::Bug(b) => &b.kind,
            Finding::Failure(f) => &f.verdict,
        }
    }

    /// Its id in the report.
    pub fn id(&self) -> &str {
        match self {
            Finding::Bug(b) => &b.id,
            Finding::Failure(f) => &f.id,
        }
    }

    /// Its shrunk run (the campaign's shortest schedule for it), if it has one.
    pub fn shrunk_run(&self) -> Result<&Replay, JostleError> {
        let shrunk = match self {
            Finding::Bug(b) => b.shrunk.as_ref(),
            Finding::Failure(f) => f.shrunk.as_ref(),
        };
        shrunk.and_then(|s| s.replay.as_ref()).ok_or_else(|| {
            let why = shrunk
                .map(|s| s.note.as_str())
                .filter(|n| !n.is_empty())
                .unwrap_or("the report has no shrunk run for it");
            JostleError::BadReport(format!("{} {}: {why}", self.kind(), self.id()))
        })
    }
}

/// The bug or failure `id` of `report` and the run to replay (a bug's first harmful run,
/// else its first confirming one; a failure's first run).
pub fn find_finding<'r>(
    report: &'r Report,
    id: &str,
) -> Result<(Finding, &'r Replay), JostleError> {
    if let Some(f) = report.failures.iter().find(|f| f.id == id) {
        return Ok((Finding::Failure(f.clone()), &f.first));
    }
    let bug =
        report.bugs.iter().find(|b| b.id == id).ok_or_else(|| {
            JostleError::BadReport(format!("no bug or failure {id} in the report"))
        })?;
    let replay = bug
        .first_harmful
        .as_ref()
        .or(bug.first_confirmed.as_ref())
        .ok_or_else(|| {
            JostleError::BadReport(format!(
                "bug {id} was never confirmed: there is no run to replay"
            ))
        })?;
    Ok((Finding::Bug(bug.clone()), replay))
}

/// The `file:line:col`s the report gives for `finding` and its run `r`: its sites, the sites
/// of the run's breakpoints, and those of its timeline's steps.
fn locations<'a>(finding: &'a Finding, r: &'a Replay) -> Vec<&'a str> {
    let (sites, timeline): (&[String], _) = match finding {
        Finding::Bug(b) => (&b.sites, &b.timeline),
        Finding::Failure(f) => (&[], &f.timeline),
    };
    let mut all: Vec<&str> = sites
        .iter()
        .map(String::as_str)
        .chain(r.breakpoints.iter().map(|b| b.location.as_str()))
        .chain(timeline.iter().map(|m| m.site.as_str()))
        .filter(|l| parse_location(l).is_some())
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// Refuses (exit 31) to replay `finding` on `transport`'s image, which is not the report's,
/// when a site the report gives for it is not in the image: the report was made on another
/// firmware (or on a build where that code moved), and its run cannot be found again here.
/// On the host port site ids are hashes of their `file:line:col`, so there is nothing to
/// look up.
fn check_belongs(
    report: &Report,
    finding: &Finding,
    r: &Replay,
    transport: &dyn Transport,
) -> Result<(), JostleError> {
    let SiteSpace::Elf(fw) = transport.space() else {
        return Ok(());
    };
    for location in locations(finding, r) {
        let (file, line, col) = parse_location(location).expect("filtered");
        if fw.find_site(file, line, col).is_empty() {
            return Err(JostleError::BadReport(format!(
                "the report ({}) belongs to another firmware: its {} {} names {location}, which is not in {}; replay it with the firmware the campaign ran",
                report.firmware.fingerprint,
                finding.kind(),
                finding.id(),
                transport.path().display()
            )));
        }
    }
    Ok(())
}

/// The full-trace configuration that replays `finding`'s run `r` on `transport`'s image: site
/// ids as recorded when the image is the report's, else found again from each breakpoint's
/// `file:line:col`. A report of another firmware is refused (exit 31): a site it gives for
/// the finding is not in this image.
pub fn config_for(
    report: &Report,
    finding: &Finding,
    r: &Replay,
    transport: &dyn Transport,
) -> Result<Config, JostleError> {
    let same =
        crate::engine::predict::fingerprint(transport.path())? == report.firmware.fingerprint;
    if !same {
        check_belongs(report, finding, r, transport)?;
    }
    let base = Config {
        trace: TraceLevel::Full,
        ..Config::default()
    };
    let space = transport.space();
    let resolve = |location: &str| space.ids(location);
    let config = if same {
        replay_config(r, &base, None)?
    } else {
        replay_config(r, &base, Some(&resolve))?
    };
    Ok(Config {
        trace: TraceLevel::Full,
        ..config
    })
}

/// Checks that `outcome` reproduces the recorded run `r` of `finding`: a bug confirmed
/// again, a failure with the same signature; the same verdict; and, on the campaign's own
/// image (`same_image`), the same interleaving.
pub fn check_reproduced(
    finding: &Finding,
    r: &Replay,
    outcome: &RunOutcome,
    same_image: bool,
) -> Result<(), JostleError> {
    let verdict = outcome
        .outcome
        .map_or("none", crate::trace::run::Outcome::name)
        .to_owned();
    let (kind, id) = (finding.kind(), finding.id());
    let (again, what) = match finding {
        Finding::Bug(_) => (outcome.confirmed(), "confirmed"),
        Finding::Failure(f) => (
            crate::trace::failure::signature(outcome).is_some_and(|s| s.id() == f.id),
            "the same failure",
        ),
    };
    if !again || verdict != r.verdict {
        return Err(JostleError::NotReproduced(format!(
            "{kind} {id} (seed {}): the report says {what} with verdict `{}`; the replay gave {what}={again} verdict `{verdict}`",
            r.seed, r.verdict,
        )));
    }
    if let Some(want) = r.schedule.as_ref().filter(|_| same_image) {
        let got = outcome.schedule_digest();
        if &got != want {
            return Err(JostleError::NotReproduced(format!(
                "{kind} {id} (seed {}): the replay's interleaving differs from the campaign's (schedule {got}, recorded {want})",
                r.seed
            )));
        }
    }
    Ok(())
}
