//! Runs whose boot died, made again. QEMU killed by a signal `jostle` did not send (the OOM
//! killer, a user, a crash of QEMU itself) takes the run in flight with it, whatever that
//! run had written so far: its stream may be cut anywhere, or be whole but for the exit
//! code its verdict needs ([`JostleError::BootDied`]). A run's events depend only on its
//! configuration block, so the same block in a new boot is the same run: [`Retrying`] makes
//! it again, up to [`ATTEMPTS`] boots in a row, and only then is the death an error. The
//! runs of a boot before the one that died stand; the caller boots again for the rest.

use super::Transport;
use crate::error::JostleError;
use crate::trace::run::RunOutcome;
use crate::trace::space::SiteSpace;
use jostle_kernel::Config;
use std::path::Path;

/// Boots in a row that may die in the same run before its death is the run's error.
pub const ATTEMPTS: u32 = 4;

/// A transport whose runs are made again in a new boot when their boot died.
pub struct Retrying<T>(pub T);

/// How the boot behind `got`'s last run died, if it died.
fn died(got: &Result<Vec<RunOutcome>, JostleError>) -> Option<String> {
    let error = match got {
        Err(e) => Some(e),
        Ok(outcomes) => outcomes.last().and_then(|o| o.error.as_ref()),
    };
    match error {
        Some(JostleError::BootDied(why)) => Some(why.clone()),
        _ => None,
    }
}

impl<T: Transport> Retrying<T> {
    /// Makes `boot` again while its last run's boot died: the runs before that one are
    /// returned as they are (the caller boots again for the rest); the dead run alone is
    /// made again, at most [`ATTEMPTS`] times in all.
    fn again(
        &self,
        mut boot: impl FnMut() -> Result<Vec<RunOutcome>, JostleError>,
    ) -> Result<Vec<RunOutcome>, JostleError> {
        let mut attempt = 1;
        loop {
            let mut got = boot();
            let Some(death) = died(&got) else {
                return got;
            };
            let run = match &got {
                Ok(outcomes) => {
                    format!("run with seed {}", outcomes[outcomes.len() - 1].config.seed)
                }
                Err(_) => "run".into(),
            };
            if let Ok(outcomes) = &mut got
                && outcomes.len() > 1
            {
                outcomes.pop();
                return got;
            }
            if super::process::stopping() {
                // Killed by the stop, not dead: no run, and none made again.
                return Err(JostleError::Interrupted);
            }
            if attempt >= ATTEMPTS {
                let death = JostleError::BootDied(format!("{death}, in {attempt} boots in a row"));
                return match got {
                    Ok(mut outcomes) => {
                        outcomes.last_mut().expect("a dead run").error = Some(death);
                        Ok(outcomes)
                    }
                    Err(_) => Err(death),
                };
            }
            eprintln!("jostle: {run}: QEMU died: {death}; making it again in a new boot");
            attempt += 1;
        }
    }
}

impl<T: Transport> Transport for Retrying<T> {
    fn path(&self) -> &Path {
        self.0.path()
    }

    fn space(&self) -> SiteSpace<'_> {
        self.0.space()
    }

    fn parallel(&self) -> bool {
        self.0.parallel()
    }

    fn run(&self, config: Config, block: Option<&Path>) -> Result<RunOutcome, JostleError> {
        let mut got = self.again(|| self.0.run(config.clone(), block).map(|o| vec![o]))?;
        Ok(got.pop().expect("one run"))
    }

    fn run_boot(&self, first: Config) -> Result<Vec<RunOutcome>, JostleError> {
        self.again(|| self.0.run_boot(first.clone()))
    }

    fn run_from_flash(&self, flash: &Path) -> Option<Result<RunOutcome, JostleError>> {
        let mut got = None;
        let again = self.again(|| match self.0.run_from_flash(flash) {
            None => Ok(Vec::new()),
            Some(run) => {
                got = Some(());
                run.map(|o| vec![o])
            }
        });
        got.map(|()| again.map(|mut o| o.pop().expect("one run")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Boots whose runs die in the boots listed in `deaths` (counted from 0): a dead run is
    /// its boot's last.
    struct Dying {
        boots: Mutex<u32>,
        /// (boot, the run of the boot that dies in it)
        deaths: Vec<(u32, u32)>,
    }

    impl Transport for Dying {
        fn path(&self) -> &Path {
            Path::new("fw")
        }

        fn space(&self) -> SiteSpace<'_> {
            SiteSpace::Host
        }

        fn run(&self, config: Config, _: Option<&Path>) -> Result<RunOutcome, JostleError> {
            let mut got = self.run_boot(Config { runs: 1, ..config })?;
            Ok(got.pop().unwrap())
        }

        fn run_boot(&self, first: Config) -> Result<Vec<RunOutcome>, JostleError> {
            let mut boots = self.boots.lock().unwrap();
            let boot = *boots;
            *boots += 1;
            let mut outcomes = Vec::new();
            for k in 0..first.runs.max(1) {
                let config = Config {
                    seed: first.seed + u64::from(k),
                    runs: 1,
                    ..first.clone()
                };
                if self.deaths.contains(&(boot, k)) {
                    let dead = JostleError::BootDied("killed".into());
                    outcomes.push(RunOutcome::passed(config, Some(dead)));
                    break;
                }
                outcomes.push(RunOutcome::passed(config, None));
            }
            Ok(outcomes)
        }
    }

    #[test]
    fn a_run_whose_boot_died_is_made_again_and_the_runs_before_it_stand() {
        // Boot 0 dies in its run 3, boot 1 (seeds 3..) at once, boot 2 serves the rest.
        let t = Retrying(Dying {
            boots: Mutex::new(0),
            deaths: vec![(0, 3), (1, 0)],
        });
        let config = Config {
            seed: 100,
            ..Config::default()
        };
        let runs = t.run_batch(&config, 10).unwrap();
        let seeds: Vec<u64> = runs.iter().map(|o| o.config.seed).collect();
        assert_eq!(seeds, (100..110).collect::<Vec<_>>());
        assert!(runs.iter().all(|o| o.error.is_none()));
        assert_eq!(*t.0.boots.lock().unwrap(), 3);
    }

    #[test]
    fn a_run_that_dies_in_every_boot_is_an_error_after_a_few() {
        let t = Retrying(Dying {
            boots: Mutex::new(0),
            deaths: (0..10).map(|b| (b, 0)).collect(),
        });
        let o = t.run(Config::default(), None).unwrap();
        let e = o.error.expect("dead");
        assert!(matches!(e, JostleError::BootDied(_)), "{e}");
        assert!(e.to_string().contains("in 4 boots in a row"), "{e}");
        assert_eq!(e.exit_code(), 27);
        assert_eq!(*t.0.boots.lock().unwrap(), ATTEMPTS);
    }
}
