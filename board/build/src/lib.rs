#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

use std::{env, fs, path::PathBuf};

/// The linker flags a Cortex-M firmware needs, and what each brings.
pub const REQUIRED: [(&str, &str); 2] = [
    ("-Tlink.x", "cortex-m-rt's vector table and startup"),
    ("-Tdefmt.x", "defmt's format table"),
];

/// The rustflags line that passes every flag (for messages and templates).
pub const RUSTFLAGS_LINE: &str = r#"rustflags = ["-C", "link-arg=-Tlink.x", "-C", "link-arg=-Tdefmt.x", "-C", "link-arg=--nmagic"]"#;

/// The required flags missing from `rustflags` (cargo's `CARGO_ENCODED_RUSTFLAGS`, flags
/// separated by `\x1f`).
pub fn missing_link_args(rustflags: &str) -> Vec<&'static str> {
    let flags: Vec<&str> = rustflags.split('\x1f').collect();
    REQUIRED
        .iter()
        .filter(|(flag, _)| {
            !flags.iter().any(|f| {
                // `-C link-arg=-Tlink.x`, `-Clink-arg=-Tlink.x`, `-Clink-args=... -Tlink.x`.
                f.contains("link-arg") && f.split(['=', ' ']).any(|part| part == *flag)
            })
        })
        .map(|(flag, _)| *flag)
        .collect()
}

/// The board build script: writes `memory` as `memory.x` on the linker search path and,
/// for a Cortex-M target, refuses rustflags without the linker scripts.
pub fn board(memory: &[u8]) {
    self::memory(memory);
    link_check();
}

/// Writes `memory` as `memory.x` on the linker search path (a machine's layout; the link
/// check is its shared board crate's).
pub fn memory(memory: &[u8]) {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(out.join("memory.x"), memory).expect("write memory.x");
    println!("cargo::rustc-link-search={}", out.display());
    println!("cargo::rerun-if-changed=memory.x");
}

/// The build script of a board whose memory layout is the application's (its PAC's or its
/// own `memory.x`): only the check that the firmware links with the linker scripts.
pub fn board_without_memory() {
    link_check();
}

/// For a Cortex-M target, refuses rustflags without the linker scripts.
fn link_check() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=JOSTLE_SKIP_LINK_CHECK");
    let target = env::var("TARGET").unwrap_or_default();
    if !target.starts_with("thumb") || env::var_os("JOSTLE_SKIP_LINK_CHECK").is_some() {
        return;
    }
    let rustflags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let missing = missing_link_args(&rustflags);
    if missing.is_empty() {
        return;
    }
    let what: Vec<String> = REQUIRED
        .iter()
        .filter(|(f, _)| missing.contains(f))
        .map(|(f, why)| format!("{f} ({why})"))
        .collect();
    eprintln!(
        "error: the firmware would link without {}: add to .cargo/config.toml\n\n\
         [target.'cfg(all(target_arch = \"arm\", target_os = \"none\"))']\n{RUSTFLAGS_LINE}\n\n\
         (or set JOSTLE_SKIP_LINK_CHECK=1 if a build script passes them)",
        what.join(" and ")
    );
    std::process::exit(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_forms_pass_and_missing_flags_are_named() {
        let full = ["-C", "link-arg=-Tlink.x", "-C", "link-arg=-Tdefmt.x"].join("\x1f");
        assert!(missing_link_args(&full).is_empty());
        let joined = ["-Clink-arg=-Tlink.x", "-Clink-arg=-Tdefmt.x"].join("\x1f");
        assert!(missing_link_args(&joined).is_empty());
        let args = "-Clink-args=-Tlink.x -Tdefmt.x --nmagic";
        assert!(missing_link_args(args).is_empty());
        assert_eq!(missing_link_args(""), ["-Tlink.x", "-Tdefmt.x"]);
        let only = ["-C", "link-arg=-Tlink.x"].join("\x1f");
        assert_eq!(missing_link_args(&only), ["-Tdefmt.x"]);
        // A flag elsewhere than in a link argument does not count.
        assert_eq!(missing_link_args("-Tlink.x\x1f-Tdefmt.x").len(), 2);
    }
}
