//! From `--strategy` and `--target` to the configuration block's strategy and breakpoints.
//!
//! A target is a candidate id from a prediction file, or explicit `file:line:col` sites. Site
//! ids belong to one image (device: `Location` addresses; host port: hashes of the location),
//! so a candidate's sites go through their `file:line:col` whenever the prediction came from
//! another image or port, and explicit sites are always looked up that way.

use crate::error::JostleError;
use crate::trace::space::SiteSpace;
use jostle_checker::{Candidate, CandidateKind, MayTrigger, Prediction};
use jostle_kernel::config::{Breakpoint, MAX_BREAKPOINTS, StrategyId};
use jostle_kernel::sched::irq::irq_of;
use jostle_kernel::targets::{aux, role};

/// The strategy that confirms candidates of `kind`.
pub fn strategy_for(kind: CandidateKind) -> StrategyId {
    match kind {
        CandidateKind::Race => StrategyId::Race,
        CandidateKind::Atomicity => StrategyId::Atom,
        CandidateKind::Deadlock => StrategyId::Deadlock,
        CandidateKind::AccessAtomicity => StrategyId::Avio,
    }
}

/// Does `strategy` aim at nothing (Random, PCT, POS, SURW: SURW's interesting location comes
/// from its profiling run, not from a candidate)? Any candidate may be its target: the
/// breakpoints then only let the run tell whether the bug happened.
pub fn untargeted(strategy: StrategyId) -> bool {
    matches!(
        strategy,
        StrategyId::Random | StrategyId::Pct | StrategyId::Pos | StrategyId::Surw
    )
}

/// Is `spec` a candidate id (16 hex digits) rather than a list of sites?
pub fn is_candidate_id(spec: &str) -> bool {
    spec.len() == 16 && spec.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Finds candidate `id` in `prediction`.
pub fn candidate<'p>(prediction: &'p Prediction, id: &str) -> Result<&'p Candidate, JostleError> {
    prediction.candidate(id).ok_or_else(|| {
        JostleError::BadPrediction(format!("no candidate {id} in the prediction file"))
    })
}

/// The breakpoints that target `candidate` with `strategy`. `same_image`: the prediction's
/// site ids belong to the firmware about to run, so they are used as they are.
pub fn candidate_breakpoints(
    candidate: &Candidate,
    prediction: &Prediction,
    strategy: StrategyId,
    space: &SiteSpace<'_>,
    same_image: bool,
) -> Result<Vec<Breakpoint>, JostleError> {
    let wanted = strategy_for(candidate.kind);
    let drfinder_race = strategy == StrategyId::DrFinder && candidate.kind == CandidateKind::Race;
    if !untargeted(strategy) && strategy != wanted && !drfinder_race {
        return Err(JostleError::Usage(format!(
            "candidate {} is a {} candidate: use --strategy {}",
            candidate.id,
            candidate.kind.name(),
            strategy_name(wanted)
        )));
    }
    // A site of the prediction, in the running firmware's id space.
    let ids = |site: u32| -> Result<Vec<u32>, JostleError> {
        if same_image {
            return Ok(vec![site]);
        }
        let location = prediction.site_locations.get(&site).ok_or_else(|| {
            JostleError::BadPrediction(format!(
                "the prediction was made on another image and does not say where site {site:#x} is"
            ))
        })?;
        // A site the running image lacks: the prediction is another firmware's.
        space.ids(location).map_err(|_| {
            JostleError::BadPrediction(format!(
                "the prediction was made on another image: {location} (candidate {}) is no instrumented operation of this firmware",
                candidate.id
            ))
        })
    };
    let mut bps = Vec::new();
    let mut add = |site: u32, aux: u32| -> Result<(), JostleError> {
        for id in ids(site)? {
            bps.push(Breakpoint { site: id, aux });
        }
        Ok(())
    };
    match candidate.kind {
        // DrFinder aims at a race too (its breakpoints are relations, added by the caller).
        CandidateKind::Race => {
            let (a, b) = match candidate.sites.as_slice() {
                [a, b] => (*a, *b),
                _ => return Err(bad_candidate(candidate, "a race needs two sites")),
            };
            add(a, aux(role::RACE, 0))?;
            add(b, aux(role::RACE, 1))?;
            // A side a handler holds: RaceFuzzer fires that handler when the other side
            // comes (a handler comes only when fired).
            for (side, site) in [a, b].into_iter().enumerate() {
                let handler = candidate
                    .evidence
                    .site_contexts
                    .iter()
                    .find_map(|&(s, ctx)| irq_of(ctx).filter(|_| s == site));
                if let Some(source) = handler {
                    bps.push(Breakpoint {
                        site: u32::from(source),
                        aux: aux(role::FIRE, side as u8),
                    });
                }
            }
        }
        CandidateKind::Atomicity => {
            let pattern = candidate
                .evidence
                .patterns
                .first()
                .ok_or_else(|| bad_candidate(candidate, "no atomicity pattern"))?;
            add(pattern.block, aux(role::BLOCK, 0))?;
            add(pattern.reacquire, aux(role::REACQUIRE, 0))?;
            // Other tasks' acquires of the released lock: held back until the block pauses.
            // As many as the block has room for, the lowest sites first (deterministic).
            for &site in &candidate.evidence.interleavers {
                let more = ids(site)?;
                if bps.len() + more.len() > MAX_BREAKPOINTS {
                    break;
                }
                bps.extend(more.into_iter().map(|id| Breakpoint {
                    site: id,
                    aux: aux(role::INTERLEAVER, 0),
                }));
            }
        }
        CandidateKind::AccessAtomicity => {
            let triple = candidate
                .evidence
                .triples
                .first()
                .ok_or_else(|| bad_candidate(candidate, "no access triple"))?;
            add(triple.first, aux(role::FIRST, 0))?;
            add(triple.second, aux(role::SECOND, 0))?;
            add(triple.remote, aux(role::REMOTE, 0))?;
            // A handler holds the remote access: the strategy fires it in the window.
            if let Some(source) = irq_of(triple.remote_context) {
                bps.push(Breakpoint {
                    site: u32::from(source),
                    aux: aux(role::FIRE, 0),
                });
            }
            // The window masks that handler: a more urgent one that enables it goes first.
            if let Some(source) = triple.unmasker {
                bps.push(Breakpoint {
                    site: u32::from(source),
                    aux: aux(role::FIRE, 1),
                });
            }
        }
        CandidateKind::Deadlock => {
            let cycle = candidate
                .evidence
                .cycles
                .first()
                .ok_or_else(|| bad_candidate(candidate, "no cycle"))?;
            for (i, comp) in cycle.components.iter().enumerate() {
                let i = i as u8;
                add(comp.site, aux(role::ACQUIRE, i))?;
                // The context ends with the component's own acquire site.
                let held = comp.context.len().saturating_sub(1);
                for &site in &comp.context[..held] {
                    add(site, aux(role::CONTEXT, i))?;
                }
            }
        }
    }
    check_count(bps)
}

/// The breakpoints for explicit sites: for `race`, `random` and `pct` the two sides of a
/// racing pair; for `atom` the block site then re-acquire sites; for `deadlock` the acquire
/// site of each component.
pub fn site_breakpoints(
    sites: &[&str],
    strategy: StrategyId,
    space: &SiteSpace<'_>,
) -> Result<Vec<Breakpoint>, JostleError> {
    let mut bps = Vec::new();
    for (i, location) in sites.iter().enumerate() {
        let aux = match strategy {
            StrategyId::Atom if i == 0 => aux(role::BLOCK, 0),
            StrategyId::Atom => aux(role::REACQUIRE, 0),
            StrategyId::Deadlock => aux(role::ACQUIRE, i as u8),
            _ if sites.len() != 2 => {
                return Err(JostleError::Usage(
                    "a race target is two sites: --target a.rs:L:C,b.rs:L:C".into(),
                ));
            }
            _ => aux(role::RACE, i as u8),
        };
        for id in space.ids(location.trim())? {
            bps.push(Breakpoint { site: id, aux });
        }
    }
    check_count(bps)
}

/// Most may-trigger relations a configuration block carries (two breakpoints each).
pub const MAX_RELATIONS: usize = MAX_BREAKPOINTS / 2;

/// DrFinder's relations as breakpoints, after `already` breakpoints: `(frame, RELATION | i)`
/// and `(class, CLASS | i)`. Relations beyond the block's room are left out, the ones with
/// the innermost frames (highest site ids last) first; returns how many were kept.
pub fn relation_breakpoints(relations: &[MayTrigger], already: usize) -> (Vec<Breakpoint>, usize) {
    let room = (MAX_BREAKPOINTS.saturating_sub(already)) / 2;
    let kept = relations.len().min(room);
    let mut bps = Vec::with_capacity(2 * kept);
    for (i, r) in relations.iter().take(kept).enumerate() {
        bps.push(Breakpoint {
            site: r.frame,
            aux: aux(role::RELATION, i as u8),
        });
        bps.push(Breakpoint {
            site: r.class,
            aux: aux(role::CLASS, i as u8),
        });
    }
    (bps, kept)
}

fn check_count(bps: Vec<Breakpoint>) -> Result<Vec<Breakpoint>, JostleError> {
    if bps.len() > MAX_BREAKPOINTS {
        return Err(JostleError::Usage(format!(
            "the target needs {} breakpoints; the configuration block holds {MAX_BREAKPOINTS}",
            bps.len()
        )));
    }
    Ok(bps)
}

fn bad_candidate(c: &Candidate, why: &str) -> JostleError {
    JostleError::BadPrediction(format!("candidate {}: {why}", c.id))
}

/// The CLI name of a strategy (the kernel's registry gives it).
pub fn strategy_name(s: StrategyId) -> &'static str {
    s.name()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidate_ids_are_told_from_sites() {
        assert!(is_candidate_id("0123456789abcdef"));
        assert!(!is_candidate_id("src/a.rs:1:2"));
    }
}
