//! Sites that are code addresses: where a framework's code that carries no caller
//! `Location` (RTIC's generated `Mutex::lock`) was inlined into the application, resolved
//! through the ELF's DWARF line tables and inline frames to the application's own source
//! line.
//!
//! The stand-in reads the program counter where it is inlined (`mov rN, pc`, which reads
//! the instruction's address + 4) and reports that as the site. The instruction's inline
//! frames go from the innermost (the stand-in's code) outwards; the first frame whose
//! function is not the framework's (`rtic::…`, `<impl rtic_core::Mutex for …>::lock`) is
//! the application's, and its location is where the application called into the
//! framework. When the expansion's `Mutex::lock` was not inlined (a function of its own,
//! one per closure), the application's line is that of the closure passed to it: the
//! lowest line of the application's file among the function's code, other than the
//! expansion's own line (the `#[rtic::app]` attribute).

use crate::trace::elf::SiteLoc;
use gimli::{EndianArcSlice, RunTimeEndian};
use object::{Object, ObjectSection, ObjectSymbol};
use std::sync::{Arc, Mutex};

type Reader = EndianArcSlice<RunTimeEndian>;

/// The ELF's line tables and inline frames, with the range of its code.
pub struct CodeSites {
    context: Mutex<addr2line::Context<Reader>>,
    text: (u64, u64),
    /// The code, to find the program-counter reads (`find`).
    code: Vec<u8>,
    /// Function symbols: (start, end), sorted.
    functions: Vec<(u64, u64)>,
}

/// Is `function` (demangled) the framework's, not the application's?
fn framework_function(function: &str) -> bool {
    let name = function.trim_start_matches('<');
    name.starts_with("rtic::")
        || name.starts_with("rtic_core::")
        || function.contains(" as rtic_core::Mutex>")
        || function.contains("<impl rtic_core::Mutex for ")
}

impl CodeSites {
    /// The DWARF of `bytes` (an ELF); `None` without code or without debug information.
    pub fn parse(bytes: &[u8]) -> Option<CodeSites> {
        let file = object::File::parse(bytes).ok()?;
        let text = file.section_by_name(".text")?;
        let range = (text.address(), text.address() + text.size());
        let code = text.data().ok()?.to_vec();
        let endian = if file.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let load = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
            let data = file
                .section_by_name(id.name())
                .and_then(|s| s.uncompressed_data().ok())
                .map(|d| d.into_owned())
                .unwrap_or_default();
            Ok(EndianArcSlice::new(Arc::from(data), endian))
        };
        let dwarf = gimli::Dwarf::load(load).ok()?;
        let context = addr2line::Context::from_dwarf(dwarf).ok()?;
        let mut functions: Vec<(u64, u64)> = file
            .symbols()
            .filter(|s| s.kind() == object::SymbolKind::Text && s.size() > 0)
            .map(|s| {
                let start = s.address() & !1;
                (start, start + s.size())
            })
            .collect();
        functions.sort_unstable();
        Some(CodeSites {
            context: Mutex::new(context),
            text: range,
            code,
            functions,
        })
    }

    /// Is `site` an address in the code?
    pub fn is_code(&self, site: u32) -> bool {
        let a = u64::from(site);
        a >= self.text.0 && a < self.text.1
    }

    /// The application's source location of a program-counter site (module doc).
    pub fn resolve(&self, site: u32) -> Option<SiteLoc> {
        if !self.is_code(site) {
            return None;
        }
        // The site is the `mov`'s address + 4; its own frames are the `mov`'s.
        let probe = u64::from(site.checked_sub(4)?);
        let context = self.context.lock().ok()?;
        let mut frames = context.find_frames(probe).skip_all_loads().ok()?;
        let mut fallback = None;
        while let Ok(Some(frame)) = frames.next() {
            let function = frame
                .function
                .as_ref()
                .and_then(|f| f.demangle().ok())
                .map(|f| f.into_owned())
                .unwrap_or_default();
            let Some(loc) = frame.location.as_ref() else {
                continue;
            };
            let here = SiteLoc {
                file: loc.file?.to_owned(),
                line: loc.line?,
                col: loc.column.unwrap_or(1).max(1),
            };
            if !framework_function(&function) {
                return Some(here);
            }
            fallback = Some(here);
        }
        let outer = fallback?;
        Some(self.closure_line(&context, probe, &outer).unwrap_or(outer))
    }

    /// The lowest line of `outer`'s file in the code of the function containing `probe`,
    /// other than `outer`'s own line: the closure the application passed to the
    /// framework's function `outer` is in (module doc).
    fn closure_line(
        &self,
        context: &addr2line::Context<Reader>,
        probe: u64,
        outer: &SiteLoc,
    ) -> Option<SiteLoc> {
        let at = self
            .functions
            .partition_point(|f| f.0 <= probe)
            .checked_sub(1)?;
        let (start, end) = self.functions[at];
        if probe >= end {
            return None;
        }
        context
            .find_location_range(start, end)
            .ok()?
            .filter_map(|(_, _, loc)| {
                let (file, line) = (loc.file?, loc.line?);
                (file == outer.file && line != outer.line).then(|| SiteLoc {
                    file: file.to_owned(),
                    line,
                    col: loc.column.unwrap_or(1).max(1),
                })
            })
            .min_by_key(|l| (l.line, l.col))
    }

    /// Every program-counter site (a `mov rN, pc` + 4) that resolves to `file:line:col`.
    pub fn find(&self, file: &str, line: u32, col: u32) -> Vec<u32> {
        let mut found = Vec::new();
        for (i, half) in self.code.chunks_exact(2).enumerate() {
            // MOV (register) T1 with Rm = PC: 0100 0110 D111 1ddd.
            let h = u16::from_le_bytes([half[0], half[1]]);
            if h & 0xFF78 != 0x4678 {
                continue;
            }
            let site = (self.text.0 as usize + 2 * i + 4) as u32;
            if let Some(loc) = self.resolve(site)
                && loc.line == line
                && loc.col == col
                && crate::trace::elf::same_file(&loc.file, file)
            {
                found.push(site);
            }
        }
        found
    }
}
