//! Output: how results are shown and stored. `run_print` prints one run (interleaving,
//! verdict line, JSON), `replay_print` the steps around a bug with source lines, `report`
//! is `report.json` (schema, summary table, JUnit), `merge` combines shard reports, `html`
//! renders `report.html`, `progress` shows a campaign's progress, `lock` keeps a report
//! directory to one writer at a time, and `shell` quotes the words of printed commands.
//!
//! Dependency rule: `output` uses `trace` and `error` only, never `transport` or `engine`;
//! `transport` and `trace` never import it (the engine and the command line do).

pub mod html;
pub mod lock;
pub mod merge;
pub mod progress;
pub mod replay_print;
pub mod report;
pub mod run_print;
pub mod shell;
