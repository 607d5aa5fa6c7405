//! SimpleFuzzer (atomfuzzer-fse08 Algorithm 1): at each state, a task chosen uniformly at
//! random among the enabled ones executes its next statement.

use super::Strategy;
use crate::rng::SchedRng;

/// The Random strategy: every method is the trait's default (a uniform pick, no check).
#[derive(Clone, Debug, Default)]
pub struct Random;

impl Strategy for Random {
    fn new(_params: [u32; 4], _rng: &mut SchedRng) -> Self {
        Random
    }
}
