//! The kernel's modules form layers: a module imports only from modules below it, so there
//! is no import circle. This test reads the sources, builds the graph of `crate::module`
//! references between top-level modules (comments excluded) and fails on any cycle, and on
//! any module that imports from a layer above the one `ARCHITECTURE.md` gives it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, bottom up (as in `docs/ARCHITECTURE.md` and `src/lib.rs`).
const LAYERS: &[&[&str]] = &[
    &["fixed"],
    &[
        "descriptor",
        "event",
        "interrupt",
        "rng",
        "site",
        "stack",
        "task",
        "test_table",
    ],
    &["op"],
    &["targets"],
    &["strategy"],
    &["config"],
    &["sched"],
    &["port", "api"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// Every `.rs` file under `dir`, with the top-level module it belongs to.
fn sources(dir: &Path, top: Option<&str>, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            sources(&path, Some(top.unwrap_or(&name)), out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let module = top.map(str::to_owned).unwrap_or(name);
            out.push((module, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The top-level modules a source names through `crate::`, outside comments.
fn imports(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                found.insert(name);
            }
        }
    }
    found
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, None, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in files {
        if module == "lib" {
            continue;
        }
        let deps = graph.entry(module.clone()).or_default();
        for dep in imports(&text) {
            if dep != module {
                deps.insert(dep);
            }
        }
    }
    graph
}

#[test]
fn the_kernel_has_no_import_circle() {
    let graph = graph();
    // Depth-first search with colours; a grey node reached again closes a cycle.
    fn visit<'g>(
        n: &'g str,
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'g str, u8>,
        path: &mut Vec<&'g str>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(1) => {
                let from = path.iter().position(|p| *p == n).unwrap();
                let mut cycle: Vec<String> = path[from..].iter().map(|s| s.to_string()).collect();
                cycle.push(n.to_owned());
                return Some(cycle);
            }
            Some(2) => return None,
            _ => {}
        }
        state.insert(n, 1);
        path.push(n);
        for d in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(d, graph, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n, 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if let Some(cycle) = visit(n, &graph, &mut state, &mut Vec::new()) {
            panic!("import circle in the kernel: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn every_module_imports_only_from_layers_below() {
    for (module, deps) in graph() {
        let Some(own) = layer_of(&module) else {
            panic!("module `{module}` has no layer: add it to LAYERS and ARCHITECTURE.md");
        };
        for dep in deps {
            let Some(theirs) = layer_of(&dep) else {
                panic!("`{module}` imports `{dep}`, which has no layer");
            };
            assert!(
                theirs < own || (theirs == own && own == LAYERS.len() - 1 && module == "api"),
                "`{module}` (layer {own}) imports `{dep}` (layer {theirs}): only lower layers"
            );
        }
    }
}

#[test]
fn the_scan_sees_imports() {
    let text =
        "use crate::op::Op; // crate::sched\n/// [`crate::config`]\nfn f() { crate::task::X }";
    let found: Vec<String> = imports(text).into_iter().collect();
    assert_eq!(found, ["op", "task"]);
}
