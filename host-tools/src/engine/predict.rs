//! Phase I on the host: traces in, a [`Prediction`] out.
//!
//! A trace comes from a run of this tool (QEMU or the host port) or from a saved
//! `jostle run --json` stream; either way it is a list of typed events plus the source location
//! of each site. The checker's analyses see only the events; the locations are carried into
//! the prediction file so that it can be printed and targeted without the ELF.

use crate::error::JostleError;
use crate::trace::run::{Port, RunOutcome, location_mut};
use jostle_checker::{CandidateKind, Options, Prediction, fnv1a64, predict};
use jostle_kernel::Event;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::Path;

/// One trace: the events of one run and where its sites are.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// The events, in order.
    pub events: Vec<Event>,
    /// `file:line:col` of each site the run resolved.
    pub sites: BTreeMap<u32, String>,
    /// The variable or lock of each memory location or lock id the run named.
    pub locations: BTreeMap<u32, String>,
}

impl Trace {
    /// The trace of a decoded run.
    pub fn of_run(run: &RunOutcome) -> Trace {
        let mut trace = Trace {
            events: run.events.clone(),
            sites: run
                .sites
                .iter()
                .map(|(id, loc)| (*id, loc.to_string()))
                .collect(),
            locations: run
                .locations
                .names
                .iter()
                .map(|(a, n)| (*a, n.clone()))
                .collect(),
        };
        if run.port == Port::Host {
            trace.stable_host_ids(&run.locations.offsets);
        }
        trace
    }

    /// The host port numbers locations and locks in order of first use in each run, so one
    /// variable has different ids in different runs; prediction merges runs, so here each
    /// gets an id of its own: from its name (FNV-1a) when it has one, else from its offset
    /// from the anchor, else the run's number; distinct within the trace (a clash takes the
    /// next free id). A device's ids are addresses already.
    fn stable_host_ids(&mut self, offsets: &HashMap<u32, i64>) {
        let Trace {
            events, locations, ..
        } = self;
        let mut ids: HashMap<u32, u32> = HashMap::new();
        let mut taken: HashSet<u32> = HashSet::new();
        for a in events.iter_mut().filter_map(location_mut) {
            *a = *ids.entry(*a).or_insert_with(|| {
                let mut id = match (locations.get(a), offsets.get(a)) {
                    (Some(name), _) => fnv1a64(name.as_bytes()) as u32,
                    (None, Some(offset)) => *offset as u32,
                    (None, None) => *a,
                };
                while id == 0 || !taken.insert(id) {
                    id = id.wrapping_add(1);
                }
                id
            });
        }
        *locations = std::mem::take(locations)
            .into_iter()
            .filter_map(|(a, name)| Some((*ids.get(&a)?, name)))
            .collect();
    }
}

/// Runs the analyses over one trace, numbered `trace_id` in the witnesses.
pub fn predict_trace(trace: &Trace, trace_id: u32, options: &Options) -> Prediction {
    let options = Options {
        trace_id,
        ..options.clone()
    };
    let mut prediction = predict(&trace.events, &options);
    // Only the sites the prediction names: the file stays small and says what it needs.
    let mut named: Vec<u32> = prediction
        .candidates
        .iter()
        .flat_map(|c| {
            c.sites.iter().chain(&c.breakpoints).copied().chain(
                c.evidence
                    .patterns
                    .iter()
                    .flat_map(|p| [p.block, p.first_acquire, p.reacquire]),
            )
        })
        .chain(prediction.relations.iter().map(|r| r.frame))
        .collect();
    named.sort_unstable();
    named.dedup();
    prediction.site_locations = named
        .into_iter()
        .filter_map(|s| Some((s, trace.sites.get(&s)?.clone())))
        .collect();
    // Likewise only the locations and locks the candidates name.
    prediction.location_names = prediction
        .candidates
        .iter()
        .flat_map(candidate_locations)
        .filter_map(|l| Some((l, trace.locations.get(&l)?.clone())))
        .collect();
    prediction
}

/// The memory locations and lock ids a candidate's evidence names.
fn candidate_locations(c: &jostle_checker::Candidate) -> Vec<u32> {
    let e = &c.evidence;
    let mut ids: Vec<u32> = e.locations.iter().copied().collect();
    ids.extend(e.patterns.iter().map(|p| p.lock.id));
    ids.extend(e.triples.iter().map(|t| t.location));
    for cycle in &e.cycles {
        for comp in &cycle.components {
            ids.extend(comp.held.iter().map(|l| l.id));
            ids.push(comp.wanted.id);
        }
    }
    ids
}

/// A memory location or lock as its variable's name when the prediction knows it, else its id.
pub fn location_text(prediction: &Prediction, id: u32) -> String {
    prediction
        .location_names
        .get(&id)
        .cloned()
        .unwrap_or_else(|| format!("{id:#010x}"))
}

/// The fingerprint of a firmware image: its file name and FNV-1a 64 of its bytes.
pub fn fingerprint(path: &Path) -> Result<String, JostleError> {
    let bytes = std::fs::read(path)
        .map_err(|e| JostleError::io(format!("reading {}", path.display()), e))?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    Ok(format!("{name}@{:016x}", fnv1a64(&bytes)))
}

/// Reads the traces of a saved `jostle run --json` stream: event objects, each run closed by
/// its summary object. Several runs may be concatenated. `source` names the input in errors.
pub fn traces_from_json(text: &str, source: &str) -> Result<Vec<Trace>, JostleError> {
    let bad = |line: usize, what: String| JostleError::BadTrace(format!("{source}:{line}: {what}"));
    let mut traces = Vec::new();
    let mut current = Trace::default();
    let mut open = false;
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| bad(n, format!("not JSON ({e})")))?;
        if value.get("summary").and_then(|s| s.as_bool()) == Some(true) {
            if let Some(err) = value.get("error").and_then(|e| e.as_str()) {
                return Err(bad(n, format!("the run ended with an error: {err}")));
            }
            if value.get("port").and_then(|p| p.as_str()) == Some("host") {
                current.stable_host_ids(&HashMap::new());
            }
            traces.push(std::mem::take(&mut current));
            open = false;
            continue;
        }
        let event: Event = serde_json::from_value(value.clone())
            .map_err(|e| bad(n, format!("not a Jostle event ({e})")))?;
        if let (Some(site), Some(text)) = (event.site(), value.get("site").and_then(|s| s.as_str()))
        {
            // `site#…` is how an unresolved site is printed: no location to keep.
            if !text.starts_with("site#") {
                current.sites.entry(site).or_insert_with(|| text.to_owned());
            }
        }
        if let (Some(id), Some(name)) = (
            crate::trace::run::location_of(&event),
            value.get("location").and_then(|l| l.as_str()),
        ) {
            current
                .locations
                .entry(id)
                .or_insert_with(|| name.to_owned());
        }
        current.events.push(event);
        open = true;
    }
    if open {
        return Err(JostleError::BadTrace(format!(
            "{source}: ends without a summary object after {} events (truncated?)",
            current.events.len()
        )));
    }
    if traces.is_empty() {
        return Err(JostleError::BadTrace(format!(
            "{source}: no run in it (expected `jostle run --json` output)"
        )));
    }
    Ok(traces)
}

/// A site as `file:line:col` when the prediction knows it.
pub fn site_text(prediction: &Prediction, site: u32) -> String {
    prediction
        .site_locations
        .get(&site)
        .cloned()
        .unwrap_or_else(|| format!("site#{site:#x}"))
}

/// Prints the candidates, one block each, with their sites in the source.
pub fn print_prediction(prediction: &Prediction, out: &mut impl Write) -> std::io::Result<()> {
    let site = |s: u32| site_text(prediction, s);
    let name = |l: u32| location_text(prediction, l);
    for c in &prediction.candidates {
        let analyses: Vec<&str> = c
            .evidence
            .analyses
            .iter()
            .map(|a| match a {
                jostle_checker::Analysis::Hybrid => "hybrid",
                jostle_checker::Analysis::HappensBefore => "happened",
                jostle_checker::Analysis::PreciseLockset => "precise-lockset",
                jostle_checker::Analysis::Eraser => "eraser",
                jostle_checker::Analysis::AtomicityPattern => "atomic-block",
                jostle_checker::Analysis::AtomizerHeuristic => "atomizer",
                jostle_checker::Analysis::Igoodlock => "igoodlock",
                jostle_checker::Analysis::MixedAtomic => "mixed-atomic",
                jostle_checker::Analysis::AccessAtomicity => "access-atomicity",
            })
            .collect();
        let tasks: Vec<String> = c.evidence.tasks.iter().map(|t| format!("t{t}")).collect();
        writeln!(
            out,
            "{:<9} {}  tasks {}  [{}]",
            c.kind.name(),
            c.id,
            tasks.join(","),
            analyses.join(", ")
        )?;
        match c.kind {
            CandidateKind::Race => {
                for s in &c.sites {
                    writeln!(out, "    access at {}", site(*s))?;
                }
                let locations: Vec<String> =
                    c.evidence.locations.iter().map(|l| name(*l)).collect();
                writeln!(out, "    on {}", locations.join(", "))?;
            }
            CandidateKind::Atomicity => {
                for p in &c.evidence.patterns {
                    writeln!(out, "    atomic block at {}", site(p.block))?;
                    writeln!(
                        out,
                        "    lock {} (class {:#x}) acquired at {}",
                        name(p.lock.id),
                        p.lock.class,
                        site(p.first_acquire)
                    )?;
                    writeln!(out, "    and again at {}", site(p.reacquire))?;
                }
            }
            CandidateKind::AccessAtomicity => {
                for tr in &c.evidence.triples {
                    writeln!(
                        out,
                        "    t{} at {} then {} ({:?} on {})",
                        tr.context,
                        site(tr.first),
                        site(tr.second),
                        tr.kinds,
                        name(tr.location)
                    )?;
                    writeln!(
                        out,
                        "    t{} in between at {}",
                        tr.remote_context,
                        site(tr.remote)
                    )?;
                }
            }
            CandidateKind::Deadlock => {
                if let Some(cycle) = c.evidence.cycles.first() {
                    for comp in &cycle.components {
                        let held: Vec<String> = comp.held.iter().map(|l| name(l.id)).collect();
                        writeln!(
                            out,
                            "    t{} holding {{{}}} acquires {} at {}",
                            comp.task,
                            held.join(", "),
                            name(comp.wanted.id),
                            site(comp.site)
                        )?;
                    }
                }
            }
        }
    }
    let kinds: Vec<String> = [
        (CandidateKind::Race, "race", "races"),
        (CandidateKind::Atomicity, "atomicity", "atomicity"),
        (
            CandidateKind::AccessAtomicity,
            "access atomicity",
            "access atomicity",
        ),
        (CandidateKind::Deadlock, "deadlock", "deadlocks"),
    ]
    .into_iter()
    .map(|(kind, one, many)| counted(prediction.of_kind(kind).count(), one, many))
    .collect();
    writeln!(
        out,
        "{} ({}), {}",
        counted(prediction.candidates.len(), "candidate", "candidates"),
        kinds.join(", "),
        counted(
            prediction.relations.len(),
            "may-trigger relation",
            "may-trigger relations"
        )
    )
}

/// `n` and the noun in its number.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Writes the prediction file (pretty JSON), creating its directory.
pub fn write_prediction(prediction: &Prediction, path: &Path) -> Result<(), JostleError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| JostleError::io(format!("creating {}", dir.display()), e))?;
    }
    // Write then rename, so an interrupted write never leaves half a file behind.
    crate::output::report::write_atomic(path, (prediction.to_json() + "\n").as_bytes())
}

/// Reads a prediction file (of this tool's schema version: another version is refused
/// before its fields are read, so the message says why).
pub fn read_prediction(path: &Path) -> Result<Prediction, JostleError> {
    let bad = |why: String| JostleError::BadPrediction(format!("{}: {why}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot be read ({e})")))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a prediction file ({e})")))?;
    match value.get("schema_version").map(|v| v.as_u64()) {
        Some(Some(v)) if v == u64::from(jostle_checker::SCHEMA_VERSION) => {}
        Some(Some(v)) => {
            return Err(bad(format!(
                "schema version {v} (this jostle reads {})",
                jostle_checker::SCHEMA_VERSION
            )));
        }
        _ => return Err(bad("not a prediction file (no schema_version)".into())),
    }
    serde_json::from_value(value).map_err(|e| bad(format!("not a prediction file ({e})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = r#"{"event":"run_start","seed":0,"strategy":0,"trace":2,"run":0}
{"event":"write","t":1,"s":7,"a":1,"site":"src/a.rs:3:5"}
{"event":"read","t":2,"s":9,"a":1,"site":"src/a.rs:9:5"}
{"event":"run_end","verdict":0,"steps":3}
{"summary":true,"verdict":"pass","error":null}
"#;

    #[test]
    fn a_prediction_of_another_schema_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prediction.json");
        let mut p = Prediction::new();
        std::fs::write(&path, p.to_json()).unwrap();
        assert_eq!(read_prediction(&path).unwrap(), p);
        for version in [0, jostle_checker::SCHEMA_VERSION + 1, 99] {
            p.schema_version = version;
            std::fs::write(&path, p.to_json()).unwrap();
            let e = read_prediction(&path).unwrap_err();
            assert_eq!(e.exit_code(), 30);
            assert!(
                e.to_string().contains(&format!("schema version {version}")),
                "{e}"
            );
        }
        // A future version whose fields changed too: its version is what is reported.
        std::fs::write(&path, r#"{"schema_version": 7, "candidates": 3}"#).unwrap();
        let e = read_prediction(&path).unwrap_err();
        assert!(e.to_string().contains("schema version 7"), "{e}");
        std::fs::write(&path, r#"{"candidates": []}"#).unwrap();
        assert_eq!(read_prediction(&path).unwrap_err().exit_code(), 30);
    }

    #[test]
    fn reads_saved_runs_and_refuses_truncated_ones() {
        let two = format!("{RUN}{RUN}");
        let traces = traces_from_json(&two, "t.jsonl").unwrap();
        assert_eq!(traces.len(), 2);
        assert_eq!(traces[0].events.len(), 4);
        assert_eq!(traces[0].sites[&7], "src/a.rs:3:5");
        let cut = RUN.lines().take(3).collect::<Vec<_>>().join("\n");
        let err = traces_from_json(&cut, "t.jsonl").unwrap_err();
        assert_eq!(err.exit_code(), 29, "{err}");
        let err = traces_from_json("{\"event\":\"nope\"}\n", "t.jsonl").unwrap_err();
        assert!(
            err.to_string().starts_with("t.jsonl:1: not a Jostle event"),
            "{err}"
        );
        assert!(traces_from_json("", "t.jsonl").is_err());
    }
}
