//! `--strategy` and `--target` into a configuration's strategy, parameters and
//! breakpoints (a candidate id of the prediction file, or explicit sites).

use crate::cli::args::StrategyArgs;
use jostle_host_tools::JostleError;
use jostle_host_tools::transport::Transport;
use jostle_kernel::config::StrategyId;
use jostle_kernel::{Config, TraceLevel};

/// Sets the strategy and its parameters (no breakpoints).
pub(crate) fn steer_untargeted(
    config: &mut Config,
    args: &StrategyArgs,
) -> Result<(), JostleError> {
    let strategy = args.strategy;
    config.strategy = strategy;
    config.livelock_bound = args.livelock_bound;
    config.params = match strategy {
        StrategyId::Atom => {
            if !(0.0..=1.0).contains(&args.q) || args.q == 0.0 {
                return Err(JostleError::Usage("--q must be in (0, 1]".into()));
            }
            let one = f64::from(jostle_kernel::strategy::Q_ONE);
            [(args.q * one).round().max(1.0) as u32, 0, 0, 0]
        }
        StrategyId::Pct => [args.pct_depth, args.pct_steps, 0, 0],
        _ => [0; 4],
    };
    Ok(())
}

/// Sets the strategy, its parameters and the target's breakpoints.
pub(crate) fn steer(
    config: &mut Config,
    args: &StrategyArgs,
    target: &dyn Transport,
) -> Result<(), JostleError> {
    use jostle_host_tools::engine::predict::{fingerprint, read_prediction};
    use jostle_host_tools::engine::targeting::{
        candidate, candidate_breakpoints, is_candidate_id, site_breakpoints, strategy_name,
    };
    steer_untargeted(config, args)?;
    let strategy = config.strategy;
    let space = target.space();
    // The prediction file, and whether its site ids are this image's: read once, when a
    // candidate id or DrFinder's relations need it.
    let by_id = args.target.as_deref().is_some_and(is_candidate_id);
    let loaded = if by_id || strategy == StrategyId::DrFinder {
        match read_prediction(&args.prediction) {
            Ok(p) => {
                let same_image =
                    p.firmware.as_deref() == Some(fingerprint(target.path())?.as_str());
                Some((p, same_image))
            }
            Err(e) if by_id => return Err(e),
            Err(e) => {
                return Err(JostleError::BadPrediction(format!(
                    "--strategy drfinder needs the relations of a previous run ({e}); run `jostle predict` first"
                )));
            }
        }
    } else {
        None
    };
    let mut breakpoints = match &args.target {
        None if matches!(strategy, StrategyId::Race | StrategyId::Deadlock) => {
            return Err(JostleError::Usage(format!(
                "--strategy {} needs --target (a candidate id or sites)",
                strategy_name(strategy)
            )));
        }
        None => Vec::new(),
        Some(spec) if is_candidate_id(spec) => {
            let (p, same_image) = loaded.as_ref().expect("read for a candidate id");
            candidate_breakpoints(candidate(p, spec)?, p, strategy, &space, *same_image)?
        }
        Some(spec) => {
            let sites: Vec<&str> = spec.split(',').collect();
            site_breakpoints(&sites, strategy, &space)?
        }
    };
    if strategy == StrategyId::DrFinder {
        // The may-trigger relations of a previous run of this image (lock classes are
        // addresses of one image, so they are not carried across builds).
        let (p, same_image) = loaded.as_ref().expect("read for DrFinder");
        if !same_image {
            return Err(JostleError::BadPrediction(format!(
                "{}: made on another image; DrFinder's relations name lock classes of one image",
                args.prediction.display()
            )));
        }
        let (bps, kept) = jostle_host_tools::engine::targeting::relation_breakpoints(
            &p.relations,
            breakpoints.len(),
        );
        if kept < p.relations.len() {
            eprintln!(
                "jostle: note: {kept} of {} may-trigger relations fit in the configuration block",
                p.relations.len()
            );
        }
        breakpoints.extend(bps);
        // DrFinder's confirmation is the happens-before detector's, over the full trace.
        config.trace = TraceLevel::Full;
    }
    config.breakpoints = jostle_kernel::fixed::Vec::from_slice(&breakpoints)
        .map_err(|()| JostleError::Usage("too many breakpoints".into()))?;
    Ok(())
}
