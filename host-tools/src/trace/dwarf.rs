//! Code addresses to source lines, through the ELF's DWARF debug information: where a
//! lost wake-up's sleeper waits. The firmware knows no source location for an `.await`;
//! it keeps the return addresses found on the task's stack when the task registered its
//! waker, and the first of their frames (inlined ones included, innermost first) that is
//! the application's own code is the `.await` it is suspended at.
//!
//! And sites that are code addresses ([`Lines::code_site`]): RTIC's stand-in reads the
//! program counter where its `lock` is inlined (`mov rN, pc`: the instruction's address + 4),
//! since the expansion's `Mutex::lock` carries no caller location. The first of that
//! instruction's frames that is not the framework's (`rtic::…`, `<impl rtic_core::Mutex
//! for …>::lock`) is where the application called `lock`. When the expansion's
//! `Mutex::lock` was not inlined (a function of its own, one per closure), the
//! application's line is that of the closure passed to it: the lowest line of the
//! application's file in that function's code other than the expansion's own line (the
//! `#[rtic::app]` attribute).

use crate::trace::elf::SiteLoc;

use object::{Object, ObjectSection, ObjectSymbol};
use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

type Reader = gimli::EndianArcSlice<gimli::RunTimeEndian>;

/// An ELF's line information.
pub struct Lines {
    context: addr2line::Context<Reader>,
    /// The compilation directories of its units (a crate's package directory): a file
    /// under one reads relative to it, as the compiler records the crate's own sites
    /// (`src/main.rs`).
    comp_dirs: Vec<String>,
    /// The code (`.text`): its address and bytes, to find the program-counter reads.
    text: (u64, Vec<u8>),
    /// Function symbols: (start, end, name demangled without hash), sorted.
    functions: Vec<(u64, u64, String)>,
}

impl Lines {
    /// The line information of an ELF, if it has any.
    pub fn parse(bytes: &[u8]) -> Option<Lines> {
        let file = object::File::parse(bytes).ok()?;
        let endian = if file.is_little_endian() {
            gimli::RunTimeEndian::Little
        } else {
            gimli::RunTimeEndian::Big
        };
        let load = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
            let data = file
                .section_by_name(id.name())
                .and_then(|s| s.uncompressed_data().ok())
                .unwrap_or(Cow::Borrowed(&[]));
            Ok(gimli::EndianArcSlice::new(Arc::from(&*data), endian))
        };
        let dwarf = gimli::Dwarf::load(load).ok()?;
        let mut comp_dirs = Vec::new();
        let mut units = dwarf.units();
        while let Ok(Some(header)) = units.next() {
            if let Ok(unit) = dwarf.unit(header)
                && let Some(dir) = &unit.comp_dir
                && let Ok(dir) = gimli::Reader::to_string_lossy(dir)
                && !comp_dirs.iter().any(|d| d == dir.as_ref())
            {
                comp_dirs.push(dir.into_owned());
            }
        }
        // The longest first, so that a crate inside another's directory reads as its own.
        comp_dirs.sort_by_key(|d| std::cmp::Reverse(d.len()));
        let context = addr2line::Context::from_dwarf(dwarf).ok()?;
        let text = file
            .section_by_name(".text")
            .and_then(|s| Some((s.address(), s.data().ok()?.to_vec())))
            .unwrap_or_default();
        let mut functions: Vec<(u64, u64, String)> = file
            .symbols()
            .filter(|s| s.kind() == object::SymbolKind::Text && s.size() > 0)
            .map(|s| {
                let name = format!("{:#}", rustc_demangle::demangle(s.name().unwrap_or("")));
                (s.address() & !1, (s.address() & !1) + s.size(), name)
            })
            .collect();
        functions.sort_unstable();
        Some(Lines {
            context,
            comp_dirs,
            text,
            functions,
        })
    }

    /// The application's source location of a program-counter site (module doc).
    pub fn code_site(&self, site: u32) -> Option<SiteLoc> {
        // The site is the `mov`'s address + 4; its frames are the `mov`'s.
        let probe = u64::from(site.checked_sub(4)?);
        let mut frames = self.context.find_frames(probe).skip_all_loads().ok()?;
        let mut outer = None;
        while let Ok(Some(frame)) = frames.next() {
            let function = frame_function(&frame);
            let Some(loc) = frame.location else { continue };
            let (Some(file), Some(line)) = (loc.file, loc.line) else {
                continue;
            };
            let here = SiteLoc {
                file: relative(file, &self.comp_dirs),
                line,
                col: loc.column.unwrap_or(1).max(1),
            };
            if is_app_file(file) && !framework_function(&function) {
                return Some(here);
            }
            outer = Some((file.to_owned(), here));
        }
        let (file, outer) = outer?;
        Some(self.closure_line(probe, &file, outer.line).unwrap_or(outer))
    }

    /// The lowest line of `file` other than `skip` in the code of the function containing
    /// `probe`: the closure the application passed to the framework's function there.
    fn closure_line(&self, probe: u64, file: &str, skip: u32) -> Option<SiteLoc> {
        let at = self
            .functions
            .partition_point(|f| f.0 <= probe)
            .checked_sub(1)?;
        let (start, end, _) = self.functions[at];
        if probe >= end {
            return None;
        }
        self.context
            .find_location_range(start, end)
            .ok()?
            .filter_map(|(_, _, loc)| {
                let line = loc.line?;
                (loc.file? == file && line != skip).then(|| SiteLoc {
                    file: relative(file, &self.comp_dirs),
                    line,
                    col: loc.column.unwrap_or(1).max(1),
                })
            })
            .min_by_key(|l| (l.line, l.col))
    }

    /// Every program-counter site (a `mov rN, pc` + 4) at `file:line:col`.
    pub fn find_code_sites(&self, file: &str, line: u32, col: u32) -> Vec<u32> {
        let (start, ref code) = self.text;
        let mut found = Vec::new();
        for (i, half) in code.chunks_exact(2).enumerate() {
            // MOV (register) T1 with Rm = PC: 0100 0110 D111 1ddd.
            if u16::from_le_bytes([half[0], half[1]]) & 0xFF78 != 0x4678 {
                continue;
            }
            let site = (start as usize + 2 * i + 4) as u32;
            if let Some(loc) = self.code_site(site)
                && loc.line == line
                && loc.col == col
                && crate::trace::elf::same_file(&loc.file, file)
            {
                found.push(site);
            }
        }
        found
    }

    /// The task function each RTIC hardware task's body calls, read over the whole code:
    /// for every function `F` named `…::exec` (demangled, without hash: the expansion's
    /// `app::UART0::exec` inside the handler named after the interrupt), the function its
    /// code calls, inlined or not, that is named in `F`'s grandparent module: `uart_rx` for
    /// `app::uart_rx` (not `app::uart_rx::Context::new`).
    pub fn task_functions(&self) -> std::collections::HashMap<String, String> {
        let is_body = |name: &str| name.ends_with("::exec");
        let mut out = std::collections::HashMap::new();
        let module = |body: &str| -> Option<String> {
            let mut path = crate::trace::framework::split_path(body);
            path.truncate(path.len().checked_sub(2)?);
            Some(path.join("::"))
        };
        let (start, ref code) = self.text;
        for k in (0..code.len()).step_by(2) {
            let addr = start + k as u64;
            let Ok(mut frames) = self.context.find_frames(addr).skip_all_loads() else {
                continue;
            };
            // Innermost first: the frame inside a body's frame is what the body called.
            let mut inner: Option<String> = None;
            while let Ok(Some(frame)) = frames.next() {
                let name = frame_function(&frame);
                if is_body(&name)
                    && !out.contains_key(&name)
                    && let (Some(callee), Some(module)) = (inner.as_deref(), module(&name))
                    && let Some(task) = direct_child(callee, &module)
                {
                    out.insert(name.clone(), task);
                }
                inner = Some(name);
            }
            // A body that is a function of its own, calling the task's function (not
            // inlined): the target of a `bl` in it.
            if let Some(target) = bl_target(code, k).map(|t| (start as i64 + t) as u64)
                && let Some(name) = self.function_named_at(target)
                && let Some(body) = self
                    .function_named_at(addr)
                    .filter(|f| is_body(f) && !out.contains_key(f))
                && let Some(task) = module(&body).and_then(|m| direct_child(&name, &m))
            {
                out.insert(body, task);
            }
        }
        out
    }

    /// The name (demangled, without hash) of the function symbol whose code holds `addr`.
    fn function_named_at(&self, addr: u64) -> Option<String> {
        let at = self
            .functions
            .partition_point(|f| f.0 <= addr)
            .checked_sub(1)?;
        let (_, end, ref name) = self.functions[at];
        (addr < end).then(|| name.clone())
    }

    /// The first frame of the return addresses `pcs` (innermost first; 0 ends the list)
    /// that lies in the application's own source: not a dependency from a registry, not
    /// the standard library, not Jostle's own crates. A file under its unit's compilation
    /// directory reads relative to it, as the compiler records the sites of the crate it
    /// compiles (`src/main.rs`).
    pub fn app_site(&self, pcs: &[u32]) -> Option<SiteLoc> {
        // Inside the call instruction that returns there (Thumb: bit 0 set).
        let calls: Vec<u64> = pcs
            .iter()
            .take_while(|&&pc| pc != 0)
            .map(|&pc| u64::from((pc & !1).saturating_sub(2)))
            .collect();
        self.app_site_of_calls(&calls)
    }

    /// [`Lines::app_site`] of a host-port executable: `returns` are return addresses at their
    /// link addresses (innermost first); the call is the byte before each.
    pub fn host_app_site(&self, returns: &[u64]) -> Option<SiteLoc> {
        let calls: Vec<u64> = returns.iter().map(|&r| r.saturating_sub(1)).collect();
        self.app_site_of_calls(&calls)
    }

    /// The first frame (inlined ones included, innermost first) of the code addresses
    /// `calls` that lies in the application's own source.
    fn app_site_of_calls(&self, calls: &[u64]) -> Option<SiteLoc> {
        for &addr in calls {
            let mut frames = self.context.find_frames(addr).skip_all_loads().ok()?;
            while let Ok(Some(frame)) = frames.next() {
                let Some(loc) = frame.location else { continue };
                let (Some(file), Some(line)) = (loc.file, loc.line) else {
                    continue;
                };
                if is_app_file(file) {
                    return Some(SiteLoc {
                        file: relative(file, &self.comp_dirs),
                        line,
                        col: loc.column.unwrap_or(0),
                    });
                }
            }
        }
        None
    }
}

/// A frame's function, demangled without its hash (empty when unknown).
fn frame_function<R: gimli::Reader>(frame: &addr2line::Frame<'_, R>) -> String {
    frame
        .function
        .as_ref()
        .and_then(|f| f.raw_name().ok())
        .map(|raw| format!("{:#}", rustc_demangle::demangle(&raw)))
        .unwrap_or_default()
}

/// `module::name` → `name`: a function named directly in `module` (no deeper path, not
/// the expansion's own `__rtic_internal_…`).
fn direct_child(function: &str, module: &str) -> Option<String> {
    let name = function.strip_prefix(module)?.strip_prefix("::")?;
    (!name.contains("::") && !name.starts_with("__rtic_internal") && !name.is_empty())
        .then(|| name.to_owned())
}

/// The target of a Thumb-2 `BL` at byte offset `k` of `code`, as an offset from `code`'s
/// start (ARMv7-M ARM A7.7.18, encoding T1).
fn bl_target(code: &[u8], k: usize) -> Option<i64> {
    let half = |j: usize| {
        Some(u32::from(u16::from_le_bytes([
            *code.get(j)?,
            *code.get(j + 1)?,
        ])))
    };
    let (hw1, hw2) = (half(k)?, half(k + 2)?);
    if hw1 & 0xF800 != 0xF000 || hw2 & 0xD000 != 0xD000 {
        return None;
    }
    let s = (hw1 >> 10) & 1;
    let (j1, j2) = ((hw2 >> 13) & 1, (hw2 >> 11) & 1);
    let (i1, i2) = (!(j1 ^ s) & 1, !(j2 ^ s) & 1);
    let imm = (s << 24) | (i1 << 23) | (i2 << 22) | ((hw1 & 0x3FF) << 12) | ((hw2 & 0x7FF) << 1);
    // Sign-extend the 25-bit offset.
    let offset = ((imm << 7) as i32 >> 7) as i64;
    Some(k as i64 + 4 + offset)
}

/// Is `function` (demangled) the framework's code around a lock, not the application's?
fn framework_function(function: &str) -> bool {
    let name = function.trim_start_matches('<');
    name.starts_with("rtic::")
        || name.starts_with("rtic_core::")
        || function.contains(" as rtic_core::Mutex>")
        || function.contains("<impl rtic_core::Mutex for ")
}

/// Jostle's own crates, whose frames (the executor shim, the kernel, the boards) are never
/// where an application waits.
const JOSTLE_DIRS: [&str; 4] = ["shims", "kernel", "board", "jostle"];

/// Is `file` the application's source (not a registry crate, the standard library or
/// Jostle's own crates)?
fn is_app_file(file: &str) -> bool {
    if file.contains("/.cargo/registry/")
        || file.contains("/.cargo/git/")
        || file.starts_with("/rustc/")
        || file.contains("/rustlib/")
    {
        return false;
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent();
    !workspace.is_some_and(|ws| {
        JOSTLE_DIRS
            .iter()
            .any(|d| Path::new(file).starts_with(ws.join(d)))
    })
}

/// `file` relative to the first of `dirs` it lies under, if any.
fn relative(file: &str, dirs: &[String]) -> String {
    dirs.iter()
        .find_map(|dir| Path::new(file).strip_prefix(dir).ok())
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| file.to_owned(), |p| p.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_std_and_jostle_files_are_not_the_app() {
        assert!(!is_app_file(
            "/root/.cargo/registry/src/x/embassy-sync-0.8.0/src/signal.rs"
        ));
        assert!(!is_app_file("/rustc/abc/library/core/src/future/mod.rs"));
        let ws = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let shim = ws.join("shims/embassy-executor/src/waker.rs");
        assert!(!is_app_file(shim.to_str().unwrap()));
        let example = ws.join("examples/embassy/src/bin/signal.rs");
        assert!(is_app_file(example.to_str().unwrap()));
        assert!(is_app_file("src/main.rs"));
    }

    #[test]
    fn a_task_function_is_named_directly_in_the_bodys_module() {
        assert_eq!(
            direct_child("fw::app::uart_rx", "fw::app").as_deref(),
            Some("uart_rx")
        );
        assert_eq!(
            direct_child("fw::app::uart_rx::Context::new", "fw::app"),
            None
        );
        assert_eq!(
            direct_child("fw::app::__rtic_internal_uart_rxSharedResources", "fw::app"),
            None
        );
        assert_eq!(direct_child("rtic::export::run", "fw::app"), None);
    }

    #[test]
    fn bl_targets_are_decoded_forwards_and_backwards() {
        let code = |at: usize, hw1: u16, hw2: u16| {
            let mut c = vec![0u8; at + 4];
            c[at..at + 2].copy_from_slice(&hw1.to_le_bytes());
            c[at + 2..at + 4].copy_from_slice(&hw2.to_le_bytes());
            c
        };
        // `bl .+0x100` at 0, `bl .-4` at 0x10 (the target is 0xC).
        assert_eq!(bl_target(&code(0, 0xF000, 0xF87E), 0), Some(0x100));
        assert_eq!(bl_target(&code(0x10, 0xF7FF, 0xFFFC), 0x10), Some(0xC));
        // A 16-bit instruction is no BL.
        assert_eq!(bl_target(&code(0, 0x4678, 0x4678), 0), None);
    }

    #[test]
    fn files_of_a_unit_read_relative_to_its_directory() {
        let dirs = [
            "/home/u/fw/examples/app".to_owned(),
            "/home/u/fw".to_owned(),
        ];
        assert_eq!(
            relative("/home/u/fw/examples/app/src/main.rs", &dirs),
            "src/main.rs"
        );
        assert_eq!(relative("/home/u/fw/src/lib.rs", &dirs), "src/lib.rs");
        assert_eq!(relative("/elsewhere/x.rs", &dirs), "/elsewhere/x.rs");
    }
}
