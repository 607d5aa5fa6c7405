//! Replay: the recorded run of a reported bug, configured again for the image about to run,
//! and the check that the replay reproduces it. The interleaving around the bug is printed
//! by `output::replay_print`.

use crate::engine::campaign::replay_config;
use crate::error::JostleError;
use crate::output::report::{Bug, Replay, Report};
use crate::trace::run::RunOutcome;
use crate::transport::Transport;
use jostle_kernel::{Config, TraceLevel};

/// The bug `id` of `report` and the run to replay (its first harmful run, else its first
/// confirming one).
pub fn find_bug<'r>(report: &'r Report, id: &str) -> Result<(&'r Bug, &'r Replay), JostleError> {
    let bug = report
        .bugs
        .iter()
        .find(|b| b.id == id)
        .ok_or_else(|| JostleError::BadReport(format!("no bug {id} in the report")))?;
    let replay = bug
        .first_harmful
        .as_ref()
        .or(bug.first_confirmed.as_ref())
        .ok_or_else(|| {
            JostleError::BadReport(format!(
                "bug {id} was never confirmed: there is no run to replay"
            ))
        })?;
    Ok((bug, replay))
}

/// The full-trace configuration that replays `r` on `transport`'s image: site ids as recorded
/// when the image is the report's, else found again from each breakpoint's `file:line:col`.
pub fn config_for(
    report: &Report,
    r: &Replay,
    transport: &dyn Transport,
) -> Result<Config, JostleError> {
    let same =
        crate::engine::predict::fingerprint(transport.path())? == report.firmware.fingerprint;
    let base = Config {
        trace: TraceLevel::Full,
        ..Config::default()
    };
    let space = transport.space();
    let resolve = |location: &str| space.ids(location);
    let config = if same {
        replay_config(r, &base, None)
    } else {
        replay_config(r, &base, Some(&resolve))
    };
    Ok(Config {
        trace: TraceLevel::Full,
        ..config
    })
}

/// Checks that `outcome` reproduces the recorded run `r` of `bug`: confirmed again, the same
/// verdict, and, on the campaign's own image (`same_image`), the same interleaving.
pub fn check_reproduced(
    bug: &Bug,
    r: &Replay,
    outcome: &RunOutcome,
    same_image: bool,
) -> Result<(), JostleError> {
    let verdict = outcome
        .outcome
        .map_or("none", crate::trace::run::Outcome::name)
        .to_owned();
    if !outcome.confirmed() || verdict != r.verdict {
        return Err(JostleError::NotReproduced(format!(
            "{} {} (seed {}): the report says confirmed with verdict `{}`; the replay gave confirmed={} verdict `{verdict}`",
            bug.kind,
            bug.id,
            r.seed,
            r.verdict,
            outcome.confirmed()
        )));
    }
    if let Some(want) = r.schedule.as_ref().filter(|_| same_image) {
        let got = outcome.schedule_digest();
        if &got != want {
            return Err(JostleError::NotReproduced(format!(
                "{} {} (seed {}): the replay's interleaving differs from the campaign's (schedule {got}, recorded {want})",
                bug.kind, bug.id, r.seed
            )));
        }
    }
    Ok(())
}
