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

/// A site as the terminal shows it: a dependency's source under Cargo's home
/// (`…/registry/src/index.crates.io-…/heapless-0.8.0/src/spsc.rs:268:38`, or a git
/// checkout) is shown from its crate's directory (`heapless-0.8.0/src/spsc.rs:268:38`). Files
/// keep their full path in report.json, which replays resolve.
pub fn short_site(site: &str) -> &str {
    for marker in ["/registry/src/", "/git/checkouts/"] {
        if let Some(at) = site.find(marker) {
            let rest = &site[at + marker.len()..];
            // Skip the index (or repository) directory: the crate's own comes next.
            if let Some(slash) = rest.find('/') {
                return &rest[slash + 1..];
            }
        }
    }
    site
}

#[cfg(test)]
mod tests {
    #[test]
    fn dependency_sites_are_shown_from_their_crate() {
        use super::short_site;
        assert_eq!(
            short_site(
                "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/heapless-0.8.0/src/spsc.rs:268:38"
            ),
            "heapless-0.8.0/src/spsc.rs:268:38"
        );
        assert_eq!(
            short_site(
                "/home/u/.cargo/git/checkouts/embassy-0123/abcdef/embassy-sync/src/lib.rs:3:1"
            ),
            "abcdef/embassy-sync/src/lib.rs:3:1"
        );
        assert_eq!(short_site("src/main.rs:20:5"), "src/main.rs:20:5");
    }
}
