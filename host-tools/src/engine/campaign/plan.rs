//! Bookkeeping: where a wave's jobs come from. A plan gives its jobs one at a time, as the
//! workers get to them, so that a wave of any size (its counts are the user's:
//! `--phase1-runs`, `--runs-per-candidate`, `--budget`) holds in memory only the jobs in
//! flight, and a budget or a stop ends it before the rest is ever made.
//!
//! The order of a plan's jobs is fixed by the plan alone, never by how many are asked for
//! at once: the report does not depend on the number of workers.

use super::Campaign;
use super::jobs::Job;
use std::collections::VecDeque;

/// What a plan gives next.
pub(super) enum Step {
    /// This job.
    Job(Box<Job>),
    /// Nothing until the jobs given so far are taken (a DrFinder chain's next segment
    /// starts from its last run).
    Wait,
    /// The plan is done.
    Done,
}

/// A wave's jobs, given in order.
pub(super) trait Plan {
    /// Runs the plan has still to give (as far as it knows: for the progress line).
    fn runs(&self) -> u64;

    /// The next job; `campaign` is where it takes what it needs (the search's place, a
    /// chain's last run).
    fn next(&mut self, campaign: &mut Campaign<'_>) -> Step;
}

/// Jobs made beforehand (a wave of a few: one per candidate).
impl Plan for VecDeque<Job> {
    fn runs(&self) -> u64 {
        self.iter().map(|j| u64::from(j.chain)).sum()
    }

    fn next(&mut self, _: &mut Campaign<'_>) -> Step {
        self.pop_front()
            .map_or(Step::Done, |job| Step::Job(Box::new(job)))
    }
}

/// A plan with, when `search` is on, as many search runs after each of its jobs as that job
/// has (see `Campaign::with_search`).
pub(super) struct WithSearch<P> {
    /// The plan searched beside.
    pub(super) plan: P,
    /// Search runs owed to the last job given.
    pub(super) owed: u64,
    /// Whether the campaign searches.
    pub(super) search: bool,
}

impl<P: Plan> Plan for WithSearch<P> {
    fn runs(&self) -> u64 {
        let factor = if self.search { 2 } else { 1 };
        self.plan
            .runs()
            .saturating_mul(factor)
            .saturating_add(self.owed)
    }

    fn next(&mut self, campaign: &mut Campaign<'_>) -> Step {
        if self.owed > 0 {
            let job = campaign.next_search_job(self.owed);
            self.owed -= u64::from(job.chain);
            return Step::Job(Box::new(job));
        }
        match self.plan.next(campaign) {
            Step::Job(job) => {
                if self.search {
                    self.owed = u64::from(job.chain);
                }
                Step::Job(job)
            }
            other => other,
        }
    }
}
