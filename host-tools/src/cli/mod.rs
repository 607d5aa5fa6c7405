//! The command line: one module per command (its arguments and what it does), the
//! argument groups they share (`args`) and how `--strategy`/`--target` steer a run
//! (`steer`). `main` only parses and dispatches.

pub(crate) mod args;
pub(crate) mod bench;
pub(crate) mod campaign;
pub(crate) mod config;
pub(crate) mod confirm;
pub(crate) mod flash_config;
pub(crate) mod harness;
pub(crate) mod merge;
pub(crate) mod new;
pub(crate) mod predict;
pub(crate) mod replay;
pub(crate) mod run;
pub(crate) mod steer;

use jostle_host_tools::JostleError;
use std::io::Write;

/// Exit code of a campaign or merge that found a failure (a failing run, or a harmful bug).
pub(crate) const EXIT_HARMFUL: u8 = 40;
/// Exit code of a campaign stopped by Ctrl-C (its report holds what finished).
pub(crate) const EXIT_INTERRUPTED: u8 = 130;

/// Ctrl-C, SIGTERM and SIGHUP stop the command: the returned flag is set, no run process
/// starts any more and the ones in flight are killed (their runs are not counted), and the
/// command ends with what finished (exit 130). A second signal quits at once, with exit 130:
/// the runs' processes are killed, their temporary files and report directories' locks
/// removed first; `at_once` says what is left then.
pub(crate) fn on_signals(at_once: &'static str) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    use jostle_host_tools::transport::process;
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handler = move || {
        if flag.swap(true, Ordering::SeqCst) {
            process::stop();
            process::remove_temporary_files();
            jostle_host_tools::output::lock::release_all();
            eprintln!("jostle: stopped at once; {at_once}");
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        process::stop();
        eprintln!("jostle: stopping (runs in flight are dropped); a second Ctrl-C quits at once");
    };
    if let Err(e) = ctrlc::set_handler(handler) {
        eprintln!("jostle: warning: Ctrl-C will not stop jostle cleanly ({e})");
    }
    stop
}

pub(crate) fn print_report(
    report: &jostle_host_tools::output::report::Report,
    json: bool,
) -> Result<(), JostleError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let printed = if json {
        serde_json::to_writer_pretty(&mut out, report)
            .map_err(std::io::Error::other)
            .and_then(|()| writeln!(out))
    } else {
        report.print_table(&mut out)
    };
    printed.map_err(|e| JostleError::io("writing the output", e))
}
