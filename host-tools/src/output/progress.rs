//! The campaign's progress: a bar on a terminal (indicatif), plain lines otherwise. The
//! campaign fills a [`Status`]; this only shows it.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

/// A snapshot for the progress display.
#[derive(Clone, Debug, Default)]
pub struct Status {
    /// What runs now (`phase I`, `phase II round 1`, ...).
    pub phase: String,
    /// Runs finished.
    pub runs: u64,
    /// Runs planned so far.
    pub planned: u64,
    /// Candidates predicted.
    pub predicted: usize,
    /// Candidates confirmed.
    pub confirmed: usize,
    /// Candidates with a harmful run.
    pub harmful: usize,
    /// Failure signatures seen (any phase, predicted or not).
    pub failures: usize,
    /// Wall time so far.
    pub elapsed: Duration,
}

/// Where progress goes.
pub enum Progress {
    /// A live bar on stderr.
    Bar(ProgressBar),
    /// A line per phase and every few seconds (CI logs).
    Lines(Mutex<(String, u64)>),
}

impl Default for Progress {
    fn default() -> Self {
        Progress::new()
    }
}

impl Progress {
    /// A bar when stderr is a terminal, lines otherwise.
    pub fn new() -> Progress {
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} {prefix:<20} [{bar:30}] {pos}/{len} runs  {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            Progress::Bar(bar)
        } else {
            Progress::Lines(Mutex::new((String::new(), 0)))
        }
    }

    fn message(s: &Status) -> String {
        let rate = s.runs as f64 / s.elapsed.as_secs_f64().max(1e-9);
        format!(
            "{rate:.1} runs/s  predicted {}  confirmed {}  harmful {}  failures {}",
            s.predicted, s.confirmed, s.harmful, s.failures
        )
    }

    /// After a run.
    pub fn update(&self, s: &Status) {
        match self {
            Progress::Bar(bar) => {
                bar.set_length(s.planned);
                bar.set_position(s.runs);
                bar.set_prefix(s.phase.clone());
                bar.set_message(Self::message(s));
            }
            Progress::Lines(last) => {
                let mut last = last.lock().unwrap_or_else(|p| p.into_inner());
                let secs = s.elapsed.as_secs();
                if last.0 != s.phase || secs >= last.1 + 5 {
                    eprintln!(
                        "jostle: {}: {}/{} runs, {}",
                        s.phase,
                        s.runs,
                        s.planned,
                        Self::message(s)
                    );
                    *last = (s.phase.clone(), secs);
                }
            }
        }
    }

    /// At the end.
    pub fn finish(&self, s: &Status) {
        match self {
            Progress::Bar(bar) => bar.finish_and_clear(),
            Progress::Lines(_) => eprintln!(
                "jostle: finished: {} runs in {:.1} s, {}",
                s.runs,
                s.elapsed.as_secs_f64(),
                Self::message(s)
            ),
        }
    }
}
