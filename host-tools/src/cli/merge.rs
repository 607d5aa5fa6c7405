//! `jostle merge`: shard reports combined into one report.

use crate::cli::{EXIT_HARMFUL, print_report};
use clap::Args;
use jostle_host_tools::JostleError;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct MergeArgs {
    /// Shard reports (directories or report.json files).
    #[arg(required = true)]
    pub(crate) reports: Vec<PathBuf>,
    /// Where the merged report.json and report.html go.
    #[arg(long, value_name = "DIR", default_value = "jostle-report")]
    pub(crate) out: PathBuf,
    /// Also write a JUnit XML file.
    #[arg(long)]
    pub(crate) junit: Option<PathBuf>,
    /// Print the merged report as JSON instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn merge(args: MergeArgs) -> Result<u8, JostleError> {
    use jostle_host_tools::output::merge::{check_output, merge};
    use jostle_host_tools::output::report::{Report, write_atomic};
    check_output(&args.reports, &args.out)?;
    // The merged report's replay commands name the report directory.
    crate::cli::args::utf8_path("--out", &args.out)?;
    // One writer per report directory (a campaign may be writing there); a refused merge
    // leaves no directory it made (the lock removes it).
    let _lock = jostle_host_tools::output::lock::lock(&args.out)?;
    let reports = args
        .reports
        .iter()
        .map(|p| {
            // An input that cannot be read is a report that cannot be read (exit 31).
            Report::read(p).map_err(|e| match e {
                JostleError::Io { .. } => JostleError::BadReport(e.to_string()),
                e => e,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut merged = merge(&reports)?;
    merged.set_report_dir(&args.out);
    merged.write_json(&args.out)?;
    write_atomic(
        &args.out.join("report.html"),
        jostle_host_tools::output::html::render(&merged).as_bytes(),
    )?;
    if let Some(junit) = &args.junit {
        write_atomic(junit, merged.junit().as_bytes())?;
    }
    print_report(&merged, args.json)?;
    Ok(if merged.any_failure() {
        EXIT_HARMFUL
    } else {
        0
    })
}
