//! `jostle new`: a firmware project of its own, ready to build and test, written from the
//! template in `templates/firmware/` (embedded in the binary).

use clap::Args;
use jostle_host_tools::JostleError;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub(crate) struct NewArgs {
    /// The project's name: a crate name (ASCII letters, digits, `-`, `_`; not starting with
    /// a digit; not a Rust keyword).
    pub(crate) name: String,
    /// The project's directory (default: ./NAME); an existing one must be empty.
    #[arg(long, value_name = "DIR")]
    pub(crate) path: Option<PathBuf>,
    /// Depend on jostle at this path: a Jostle checkout, or its `jostle/` crate (default:
    /// the checkout this `jostle` was built from).
    #[arg(long, value_name = "P", conflicts_with = "jostle_git")]
    pub(crate) jostle_path: Option<PathBuf>,
    /// Depend on jostle from this git repository instead.
    #[arg(long, value_name = "URL")]
    pub(crate) jostle_git: Option<String>,
    /// An Embassy application instead (`#[embassy_executor::main]`, tasks, embassy-sync,
    /// embassy-time), with Jostle's `embassy-executor` and `portable-atomic` patched in.
    #[arg(long, conflicts_with = "rtic")]
    pub(crate) embassy: bool,
    /// An RTIC application instead (`#[rtic::app]` for QEMU's lm3s6965evb, hardware and
    /// software tasks, locks), with Jostle's `rtic` and `portable-atomic` patched in.
    #[arg(long)]
    pub(crate) rtic: bool,
}

/// The RTIC template's files (`--rtic`): where each goes, and its text.
const RTIC_TEMPLATE: [(&str, &str); 6] = [
    (
        "Cargo.toml",
        include_str!("../../../templates/rtic/Cargo.toml.template"),
    ),
    (
        ".cargo/config.toml",
        include_str!("../../../templates/firmware/.cargo/config.toml"),
    ),
    (
        "rust-toolchain.toml",
        include_str!("../../../templates/firmware/rust-toolchain.toml"),
    ),
    (
        "src/main.rs",
        include_str!("../../../templates/rtic/src/main.rs"),
    ),
    (
        "README.md",
        include_str!("../../../templates/rtic/README.md"),
    ),
    (
        ".gitignore",
        include_str!("../../../templates/rtic/.gitignore"),
    ),
];

/// The Embassy template's files (`--embassy`): where each goes, and its text.
const EMBASSY_TEMPLATE: [(&str, &str); 6] = [
    (
        "Cargo.toml",
        include_str!("../../../templates/embassy/Cargo.toml.template"),
    ),
    (
        ".cargo/config.toml",
        include_str!("../../../templates/firmware/.cargo/config.toml"),
    ),
    (
        "rust-toolchain.toml",
        include_str!("../../../templates/firmware/rust-toolchain.toml"),
    ),
    (
        "src/main.rs",
        include_str!("../../../templates/embassy/src/main.rs"),
    ),
    (
        "README.md",
        include_str!("../../../templates/embassy/README.md"),
    ),
    (
        ".gitignore",
        include_str!("../../../templates/embassy/.gitignore"),
    ),
];

/// The template's files: where each goes in the project, and its text.
const TEMPLATE: [(&str, &str); 6] = [
    (
        "Cargo.toml",
        include_str!("../../../templates/firmware/Cargo.toml.template"),
    ),
    (
        ".cargo/config.toml",
        include_str!("../../../templates/firmware/.cargo/config.toml"),
    ),
    (
        "rust-toolchain.toml",
        include_str!("../../../templates/firmware/rust-toolchain.toml"),
    ),
    (
        "src/main.rs",
        include_str!("../../../templates/firmware/src/main.rs"),
    ),
    (
        "README.md",
        include_str!("../../../templates/firmware/README.md"),
    ),
    (
        ".gitignore",
        include_str!("../../../templates/firmware/.gitignore"),
    ),
];

/// The Jostle checkout this binary was built from.
fn checkout() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host-tools lives in the checkout")
}

/// Rust's keywords (strict and reserved, 2024 edition): no crate can be named after one.
const KEYWORDS: [&str; 53] = [
    "_", "abstract", "as", "async", "await", "become", "box", "break", "const", "continue",
    "crate", "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if",
    "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Why `name` cannot name the project's crate, if it cannot.
fn name_problem(name: &str) -> Option<String> {
    let Some(first) = name.chars().next() else {
        return Some("it is empty".into());
    };
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Some(format!(
            "it holds {c:?} (only ASCII letters, digits, `-` and `_`)"
        ));
    }
    if !(first.is_ascii_alphabetic() || first == '_') {
        return Some("it must start with a letter or `_`".into());
    }
    let ident = name.replace('-', "_");
    if KEYWORDS.contains(&ident.as_str()) {
        return Some("it is a Rust keyword".into());
    }
    if ["core", "std", "alloc", "proc_macro", "test"].contains(&ident.as_str()) {
        return Some("it is the name of a crate of Rust's standard library".into());
    }
    if ["build", "deps", "examples", "incremental"].contains(&ident.as_str()) {
        return Some("the binary would clash with a directory of cargo's target directory".into());
    }
    if ident == "jostle" || ident.starts_with("jostle_kernel") || ident.starts_with("jostle_board")
    {
        return Some("it is the name of one of Jostle's own crates".into());
    }
    None
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `jostle` crate's directory for a `--jostle-path` (a checkout or the crate itself).
fn jostle_crate(p: &Path) -> Result<PathBuf, JostleError> {
    let refuse = |why: &str| {
        JostleError::ProjectRefused(format!(
            "{}: {why}: give a Jostle checkout or its jostle/ crate (--jostle-path), or --jostle-git URL",
            p.display()
        ))
    };
    let p = std::fs::canonicalize(p).map_err(|e| refuse(&e.to_string()))?;
    for dir in [p.join("jostle"), p.clone()] {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
        if manifest.lines().any(|l| l.trim() == r#"name = "jostle""#) {
            return Ok(dir);
        }
    }
    Err(refuse("no jostle crate there"))
}

/// The dependency line's value, and where it points (for the summary).
fn dependency(args: &NewArgs) -> Result<(String, String), JostleError> {
    if let Some(url) = &args.jostle_git {
        return Ok((format!("{{ git = {} }}", toml_string(url)), url.clone()));
    }
    let dir = match &args.jostle_path {
        Some(p) => jostle_crate(p)?,
        None => jostle_crate(checkout()).map_err(|_| {
            JostleError::ProjectRefused(format!(
                "this jostle was built from {}, which no longer holds the jostle crate: give --jostle-path P or --jostle-git URL",
                checkout().display()
            ))
        })?,
    };
    let shown = dir.display().to_string();
    let path = dir.to_str().ok_or_else(|| {
        JostleError::ProjectRefused(format!("{shown}: the jostle crate's path is not UTF-8"))
    })?;
    Ok((format!("{{ path = {} }}", toml_string(path)), shown))
}

/// The project's files, placeholders filled.
fn files(name: &str, dependency: &str) -> Vec<(&'static str, String)> {
    fill(
        &TEMPLATE,
        &[("{{name}}", name), ("{{jostle_dependency}}", dependency)],
    )
}

/// The Embassy project's files: the patch lines point at the shims `embassy-executor` and
/// `portable-atomic` next to the `jostle` crate the dependency names (`{ path = … }` or
/// `{ git = … }`), and the embassy-sync line at `shims/embassy-sync` (a renamed
/// dependency: the package `jostle-embassy-sync`).
fn embassy_files(name: &str, dependency: &str) -> Vec<(&'static str, String)> {
    let sync =
        shim(dependency, "embassy-sync").replacen("{ ", "{ package = \"jostle-embassy-sync\", ", 1);
    let executor = shim(dependency, "embassy-executor");
    let atomic = shim(dependency, "portable-atomic");
    let panic = shim(dependency, "panic-semihosting");
    fill(
        &EMBASSY_TEMPLATE,
        &[
            ("{{name}}", name),
            ("{{embassy_sync}}", &sync),
            ("{{embassy_executor}}", &executor),
            ("{{portable_atomic}}", &atomic),
            ("{{panic_semihosting}}", &panic),
        ],
    )
}

/// The RTIC project's files: the patch lines point at the shims `rtic` and
/// `portable-atomic`, as for [`embassy_files`].
fn rtic_files(name: &str, dependency: &str) -> Vec<(&'static str, String)> {
    let rtic = shim(dependency, "rtic");
    let atomic = shim(dependency, "portable-atomic");
    fill(
        &RTIC_TEMPLATE,
        &[
            ("{{name}}", name),
            ("{{rtic}}", &rtic),
            ("{{portable_atomic}}", &atomic),
        ],
    )
}

/// The patch of the shim in `shims/crate_dir` next to the `jostle` crate `dependency` names.
fn shim(dependency: &str, crate_dir: &str) -> String {
    match dependency.strip_prefix("{ path = ") {
        // `…/jostle` → `…/shims/<crate>`.
        Some(path) => {
            let path = path.trim_end_matches(" }");
            let jostle_dir = path.trim_matches('"');
            let root = Path::new(jostle_dir).parent().unwrap_or(Path::new("."));
            format!(
                "{{ path = {} }}",
                toml_string(&root.join("shims").join(crate_dir).display().to_string())
            )
        }
        // A git repository: cargo finds the crate by its name in it.
        None => dependency.to_owned(),
    }
}

/// `template`'s files with each placeholder replaced.
fn fill(template: &[(&'static str, &str)], values: &[(&str, &str)]) -> Vec<(&'static str, String)> {
    template
        .iter()
        .map(|(path, text)| {
            let text = values
                .iter()
                .fold(text.to_string(), |t, (key, value)| t.replace(key, value));
            (*path, text)
        })
        .collect()
}

/// Whether a `jostle` executable is on `PATH` (`cargo run`'s runner calls it by name).
fn jostle_on_path() -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths)
            .any(|dir| dir.join("jostle").is_file() || dir.join("jostle.exe").is_file())
    })
}

pub(crate) fn new(args: NewArgs) -> Result<u8, JostleError> {
    if let Some(why) = name_problem(&args.name) {
        return Err(JostleError::ProjectRefused(format!(
            "`{}` is not a valid crate name: {why}",
            args.name
        )));
    }
    let dir = args
        .path
        .clone()
        .unwrap_or_else(|| PathBuf::from(&args.name));
    if dir.exists() {
        let empty = std::fs::read_dir(&dir)
            .map(|mut entries| entries.next().is_none())
            .unwrap_or(false);
        if !dir.is_dir() {
            return Err(JostleError::ProjectRefused(format!(
                "{}: exists and is not a directory",
                dir.display()
            )));
        }
        if !empty {
            return Err(JostleError::ProjectRefused(format!(
                "{}: the directory exists and is not empty (give an empty or new one with --path)",
                dir.display()
            )));
        }
    }
    let (dependency, source) = dependency(&args)?;
    let written = if args.embassy {
        embassy_files(&args.name, &dependency)
    } else if args.rtic {
        rtic_files(&args.name, &dependency)
    } else {
        files(&args.name, &dependency)
    };
    for (path, text) in written {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| JostleError::io(format!("creating {}", parent.display()), e))?;
        }
        std::fs::write(&path, text)
            .map_err(|e| JostleError::io(format!("writing {}", path.display()), e))?;
    }
    let elf = format!("target/thumbv7m-none-eabi/release/{}", args.name);
    let kind = if args.embassy {
        "Embassy"
    } else if args.rtic {
        "RTIC"
    } else {
        "firmware"
    };
    println!(
        "created {kind} project `{}` in {} (jostle from {source})",
        args.name,
        dir.display()
    );
    println!("  cd {}", dir.display());
    let machine = if args.rtic {
        "lm3s6965evb"
    } else {
        "mps2-an385"
    };
    println!("  cargo build --release     # {elf}, for QEMU's {machine}");
    println!("  cargo run --release       # a campaign on it: jostle campaign {elf}");
    if !jostle_on_path() {
        println!(
            "(`cargo run` calls `jostle` by name and none is on PATH: `cargo install --path {}`)",
            checkout().join("host-tools").display()
        );
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_names_are_checked_as_cargo_does() {
        for good in ["fw", "my-fw", "my_fw2", "_fw", "Sensor", "jostle-demo"] {
            assert_eq!(name_problem(good), None, "{good}");
        }
        for bad in [
            "",
            "2fw",
            "-fw",
            "my fw",
            "fw.rs",
            "café",
            "fn",
            "self",
            "async",
            "test",
            "std",
            "build",
            "deps",
            "jostle",
            "jostle-kernel",
        ] {
            assert!(name_problem(bad).is_some(), "{bad:?} accepted");
        }
    }

    #[test]
    fn every_placeholder_is_filled_and_the_project_stands_alone() {
        for (path, text) in files("fw", "{ path = \"/j\" }") {
            assert!(!text.contains("{{"), "{path} keeps a placeholder");
        }
        let all = files("fw", "{ path = \"/j\" }");
        let cargo = &all.iter().find(|(p, _)| *p == "Cargo.toml").unwrap().1;
        assert!(cargo.contains("name = \"fw\""));
        assert!(cargo.contains("jostle = { path = \"/j\" }"));
        assert!(cargo.lines().any(|l| l.trim() == "[workspace]"));
        let config = &all
            .iter()
            .find(|(p, _)| *p == ".cargo/config.toml")
            .unwrap()
            .1;
        for needle in [
            "thumbv7m-none-eabi",
            "-Tlink.x",
            "-Tdefmt.x",
            "--nmagic",
            "jostle",
        ] {
            assert!(config.contains(needle), "{needle}");
        }
    }

    #[test]
    fn an_embassy_project_patches_in_the_shims_beside_the_jostle_crate() {
        for (dependency, executor, sync) in [
            (
                "{ path = \"/j/jostle\" }",
                "embassy-executor = { path = \"/j/shims/embassy-executor\" }",
                "embassy-sync = { package = \"jostle-embassy-sync\", path = \"/j/shims/embassy-sync\" }",
            ),
            (
                "{ git = \"https://example.org/jostle\" }",
                "embassy-executor = { git = \"https://example.org/jostle\" }",
                "embassy-sync = { package = \"jostle-embassy-sync\", git = \"https://example.org/jostle\" }",
            ),
        ] {
            let all = embassy_files("fw", dependency);
            for (path, text) in &all {
                assert!(!text.contains("{{"), "{path} keeps a placeholder");
            }
            let cargo = &all.iter().find(|(p, _)| *p == "Cargo.toml").unwrap().1;
            assert!(cargo.contains(executor), "{cargo}");
            assert!(cargo.contains(sync), "{cargo}");
            assert!(cargo.contains("portable-atomic = "), "{cargo}");
            assert!(!cargo.contains("jostle ="), "{cargo}");
            let main = &all.iter().find(|(p, _)| *p == "src/main.rs").unwrap().1;
            assert!(main.contains("#[embassy_executor::main]"));
        }
    }

    #[test]
    fn an_rtic_project_patches_in_rtic_and_portable_atomic_beside_the_jostle_crate() {
        for (dependency, rtic) in [
            (
                "{ path = \"/j/jostle\" }",
                "rtic = { path = \"/j/shims/rtic\" }",
            ),
            (
                "{ git = \"https://example.org/jostle\" }",
                "rtic = { git = \"https://example.org/jostle\" }",
            ),
        ] {
            let all = rtic_files("fw", dependency);
            for (path, text) in &all {
                assert!(!text.contains("{{"), "{path} keeps a placeholder");
            }
            let cargo = &all.iter().find(|(p, _)| *p == "Cargo.toml").unwrap().1;
            assert!(cargo.contains(rtic), "{cargo}");
            assert!(cargo.contains("portable-atomic = "), "{cargo}");
            assert!(!cargo.contains("critical-section-single-core\""), "{cargo}");
            let main = &all.iter().find(|(p, _)| *p == "src/main.rs").unwrap().1;
            assert!(main.contains("#[rtic::app(device = lm3s6965"));
        }
    }

    #[test]
    fn toml_strings_are_escaped() {
        assert_eq!(toml_string(r#"C:\a "b""#), r#""C:\\a \"b\"""#);
    }

    #[test]
    fn the_checkout_holds_the_jostle_crate() {
        assert!(jostle_crate(checkout()).is_ok());
        assert_eq!(
            jostle_crate(checkout()).unwrap(),
            std::fs::canonicalize(checkout().join("jostle")).unwrap()
        );
    }
}
