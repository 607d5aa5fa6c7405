//! The firmware ELF: its defmt table, the configuration block's address, and site
//! resolution (a site id is the address of a `core::panic::Location` in flash).

use crate::error::JostleError;
use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A site resolved to source.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct SiteLoc {
    /// Source file as the compiler recorded it.
    pub file: String,
    /// Line (1-based).
    pub line: u32,
    /// Column (1-based).
    pub col: u32,
}

impl std::fmt::Display for SiteLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// A loaded firmware image.
pub struct Firmware {
    /// Where it was read from.
    pub path: PathBuf,
    /// The whole file.
    pub bytes: Vec<u8>,
    /// The defmt table.
    pub table: defmt_decoder::Table,
    /// Address of the configuration block (`JOSTLE_CONFIG`).
    pub config_addr: u32,
    /// Address of the flash page read when the RAM block is absent (`JOSTLE_CONFIG_FLASH`),
    /// if the board has one.
    pub config_flash_addr: Option<u32>,
    /// The loadable segments, i.e. the initialised memory image: (address, bytes).
    segments: Vec<(u64, Vec<u8>)>,
    /// Its data symbols (names for memory locations).
    pub symbols: crate::trace::symbols::Symbols,
    /// The board it was built for (its descriptor).
    pub board: crate::trace::board::Board,
    /// The range of its code (`.text`), where a site is a code address (`dwarf`).
    text: (u64, u64),
    /// Its line information, read at the first question (lost wake-ups, code sites).
    lines: std::sync::Mutex<Option<Option<crate::trace::dwarf::Lines>>>,
    /// The task function each RTIC hardware task's body calls (`app::UART0::exec` →
    /// `uart_rx`), read at the first question.
    task_functions: std::sync::OnceLock<std::collections::HashMap<String, String>>,
}

/// Why an ELF has no `JOSTLE_CONFIG`, as far as its sections tell: the linker scripts
/// that were not passed (cortex-m-rt's `link.x` makes `.vector_table` and brings the board's
/// `memory.x`, which defines the symbol; defmt's `defmt.x` merges the `.defmt` section), or
/// else the board's `memory.x`.
fn missing_linker_scripts(file: &object::File) -> String {
    let has = |name: &str| file.section_by_name(name).is_some();
    let missing: Vec<&str> = [("-Tlink.x", ".vector_table"), ("-Tdefmt.x", ".defmt")]
        .into_iter()
        .filter(|(_, section)| !has(section))
        .map(|(flag, _)| flag)
        .collect();
    if missing.is_empty() {
        return "is the board's memory.x linked?".into();
    }
    format!(
        "it was linked without {}: add to .cargo/config.toml \
         [target.'cfg(all(target_arch = \"arm\", target_os = \"none\"))'] \
         rustflags = [\"-C\", \"link-arg=-Tlink.x\", \"-C\", \"link-arg=-Tdefmt.x\", \"-C\", \"link-arg=--nmagic\"]",
        missing.join(" and ")
    )
}

/// Does the ELF hold embassy-executor's code (a function of the crate: its mangled name
/// holds the crate's length-prefixed name, in both of rustc's manglings; or the real
/// executor's exported pender)? Asked only of an ELF without a board descriptor, which
/// Jostle's stand-in always brings.
fn embassy_executor_inside(file: &object::File) -> bool {
    file.symbols().any(|s| {
        s.name()
            .is_ok_and(|n| n == "__pender" || n.contains("16embassy_executor"))
    })
}

impl Firmware {
    /// Reads and checks a firmware ELF.
    pub fn load(path: &Path) -> Result<Firmware, JostleError> {
        let bytes = std::fs::read(path)
            .map_err(|e| JostleError::io(format!("reading {}", path.display()), e))?;
        let file = object::File::parse(&*bytes).map_err(|e| JostleError::NotElf {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        if file.format() != object::BinaryFormat::Elf {
            return Err(JostleError::NotElf {
                path: path.to_owned(),
                reason: format!("{:?} format", file.format()),
            });
        }
        let board =
            crate::trace::board::Board::of(&file).map_err(|reason| JostleError::NotElf {
                path: path.to_owned(),
                reason,
            })?;
        if file
            .section_by_name(jostle_kernel::descriptor::SECTION)
            .is_none()
            && embassy_executor_inside(&file)
        {
            return Err(JostleError::UnpatchedEmbassy {
                path: path.to_owned(),
            });
        }
        let table = defmt_decoder::Table::parse(&bytes)
            .map_err(|e| JostleError::NotElf {
                path: path.to_owned(),
                reason: format!("bad defmt table: {e}"),
            })?
            .ok_or_else(|| JostleError::NoDefmt(path.to_owned()))?;
        let config_addr = file
            .symbols()
            .find(|s| s.name() == Ok("JOSTLE_CONFIG"))
            .map(|s| s.address() as u32)
            .ok_or_else(|| JostleError::NoConfigSymbol {
                path: path.to_owned(),
                hint: missing_linker_scripts(&file),
            })?;
        // A board whose block comes over standard input has no flash page (its symbol names
        // the RAM block).
        let config_flash_addr = file
            .symbols()
            .find(|s| s.name() == Ok("JOSTLE_CONFIG_FLASH"))
            .map(|s| s.address() as u32)
            .filter(|_| board.config == crate::trace::board::ConfigIn::Ram);
        let segments = file
            .segments()
            .filter_map(|s| Some((s.address(), s.data().ok()?.to_vec())))
            .filter(|(_, d)| !d.is_empty())
            .collect();
        let symbols = crate::trace::symbols::Symbols::parse(&bytes);
        let text = file
            .section_by_name(".text")
            .map_or((0, 0), |s| (s.address(), s.address() + s.size()));
        Ok(Firmware {
            path: path.to_owned(),
            symbols,
            bytes,
            table,
            config_addr,
            config_flash_addr,
            segments,
            board,
            text,
            lines: std::sync::Mutex::new(None),
            task_functions: std::sync::OnceLock::new(),
        })
    }

    /// The user's name of a context whose code has the type name `type_name` (a
    /// `ContextName`'s text): an RTIC hardware task is named after its function, which its
    /// body (`app::UART0::exec`) calls (`uart_rx`), found through DWARF; any other context,
    /// or a body whose call is not found, as [`crate::trace::framework::context_name`] says.
    pub fn context_name(&self, type_name: &str) -> String {
        self.task_functions()
            .get(type_name)
            .cloned()
            .unwrap_or_else(|| crate::trace::framework::context_name(type_name))
    }

    /// The interrupt an RTIC hardware task binds, by its function's name (`uart_rx` →
    /// `UART0`), when exactly one task has that name.
    pub fn task_interrupt(&self, task: &str) -> Option<String> {
        let mut found = self
            .task_functions()
            .iter()
            .filter(|(_, t)| *t == task)
            .filter_map(|(body, _)| {
                let path = crate::trace::framework::split_path(body);
                path.len().checked_sub(2).map(|k| path[k].to_owned())
            });
        match (found.next(), found.next()) {
            (Some(irq), None) => Some(irq),
            _ => None,
        }
    }

    fn task_functions(&self) -> &std::collections::HashMap<String, String> {
        self.task_functions.get_or_init(|| {
            self.with_lines(|l| Some(l.task_functions()))
                .unwrap_or_default()
        })
    }

    /// Where a sleeper waits, from the return addresses on its stack (see
    /// [`crate::trace::dwarf`]): the first frame in the application's own source.
    pub fn wait_site(&self, pcs: &[u32]) -> Option<SiteLoc> {
        // A word that is a function's first instruction is a function pointer the stack
        // held (a waker's data), not a return address, even when a call that never returns
        // ends the code before it.
        let starts = self.function_starts();
        let pcs: Vec<u32> = pcs
            .iter()
            .copied()
            .take_while(|&pc| pc != 0)
            .filter(|pc| !starts.contains(&u64::from(pc & !1)))
            .collect();
        self.with_lines(|l| l.app_site(&pcs))
    }

    /// The line (the device's interrupt number) whose vector-table entry is the function
    /// `name` (a PAC's `__INTERRUPTS` table: entry `n` is line `n`), when exactly one is.
    pub fn interrupt_line(&self, name: &str) -> Option<u16> {
        let file = object::File::parse(&*self.bytes).ok()?;
        let table = file.symbols().find(|s| s.name() == Ok("__INTERRUPTS"))?;
        let handler = file
            .symbols()
            .find(|s| s.name() == Ok(name) && s.kind() == object::SymbolKind::Text)?
            .address()
            & !1;
        let mut lines = (0..table.size() / 4).filter(|n| {
            self.word((table.address() + 4 * n) as u32)
                .is_some_and(|w| u64::from(w & !1) == handler && w != 0)
        });
        match (lines.next(), lines.next()) {
            (Some(n), None) => u16::try_from(n).ok(),
            _ => None,
        }
    }

    /// The addresses of the image's functions (their symbols', Thumb bit clear).
    fn function_starts(&self) -> std::collections::HashSet<u64> {
        let Ok(file) = object::File::parse(&*self.bytes) else {
            return Default::default();
        };
        file.symbols()
            .filter(|s| s.kind() == object::SymbolKind::Text)
            .map(|s| s.address() & !1)
            .collect()
    }

    /// `f` on the ELF's line information (read at the first question), if it has any.
    fn with_lines<R>(&self, f: impl FnOnce(&crate::trace::dwarf::Lines) -> Option<R>) -> Option<R> {
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        f(lines
            .get_or_insert_with(|| crate::trace::dwarf::Lines::parse(&self.bytes))
            .as_ref()?)
    }

    /// The address of the symbol `name`, if the ELF has it.
    pub fn symbol(&self, name: &str) -> Option<u64> {
        let file = object::File::parse(&*self.bytes).ok()?;
        file.symbols()
            .find(|s| s.name() == Ok(name))
            .map(|s| s.address())
    }

    /// The function whose code holds `pc` (demangled, without its hash), if the ELF's
    /// symbol table says.
    pub fn function_at(&self, pc: u32) -> Option<String> {
        let file = object::File::parse(&*self.bytes).ok()?;
        // Thumb function symbols have their lowest bit set.
        let pc = u64::from(pc & !1);
        file.symbols()
            .filter(|s| s.kind() == object::SymbolKind::Text && s.size() > 0)
            .find(|s| {
                let start = s.address() & !1;
                start <= pc && pc < start + s.size()
            })
            .and_then(|s| s.name().ok())
            .map(|name| format!("{:#}", rustc_demangle::demangle(name)))
    }

    /// Reads `len` bytes at `addr` from the image's initialised memory.
    pub fn read(&self, addr: u32, len: usize) -> Option<&[u8]> {
        let addr = addr as u64;
        self.segments.iter().find_map(|(base, data)| {
            let off = addr.checked_sub(*base)? as usize;
            data.get(off..off.checked_add(len)?)
        })
    }

    fn word(&self, addr: u32) -> Option<u32> {
        let b = self.read(addr, 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Resolves a site id (the address of a `Location`, or a code address: see
    /// [`crate::trace::dwarf`]) to `file:line:col`.
    pub fn resolve_site(&self, site: u32) -> Option<SiteLoc> {
        if (self.text.0..self.text.1).contains(&u64::from(site)) {
            return self.with_lines(|l| l.code_site(site));
        }
        self.resolve_location(site)
    }

    /// Resolves the address of a `Location` to `file:line:col`.
    ///
    /// `Location`'s field order is the compiler's choice, so rather than assume one, this
    /// looks for the (pointer, length) pair that names a source path in the image and takes
    /// the two remaining words as line and column, in their order in the struct.
    fn resolve_location(&self, site: u32) -> Option<SiteLoc> {
        let w: Vec<u32> = (0..4)
            .map(|i| self.word(site + 4 * i))
            .collect::<Option<_>>()?;
        for p in 0..4 {
            for l in 0..4 {
                if p == l {
                    continue;
                }
                let (ptr, len) = (w[p], w[l] as usize);
                if len == 0 || len > 4096 {
                    continue;
                }
                let Some(raw) = self.read(ptr, len) else {
                    continue;
                };
                let Ok(file) = std::str::from_utf8(raw) else {
                    continue;
                };
                let file = file.trim_end_matches('\0');
                if !file.ends_with(".rs") || file.contains('\0') {
                    continue;
                }
                let rest: Vec<u32> = (0..4)
                    .filter(|i| *i != p && *i != l)
                    .map(|i| w[i])
                    .collect();
                if rest[0] == 0 || rest[1] == 0 {
                    continue;
                }
                return Some(SiteLoc {
                    file: file.to_owned(),
                    line: rest[0],
                    col: rest[1],
                });
            }
        }
        None
    }
}

impl Firmware {
    /// Every site id (address of a `Location` record) at `file:line:col`. A source location
    /// can have more than one record, and a file named by its path's tail matches too. When
    /// no record is there, the code-address sites there ([`crate::trace::dwarf`]).
    pub fn find_site(&self, file: &str, line: u32, col: u32) -> Vec<u32> {
        let mut found = Vec::new();
        for (base, data) in &self.segments {
            let words = data.len() / 4;
            for i in 0..words.saturating_sub(3) {
                let w = |k: usize| {
                    let at = 4 * (i + k);
                    u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
                };
                // Cheap filter before the full read: the line and column are among the words.
                let has = |v: u32| (0..4).any(|k| w(k) == v);
                if !has(line) || !has(col) {
                    continue;
                }
                let addr = (*base as usize + 4 * i) as u32;
                if let Some(loc) = self.resolve_location(addr)
                    && loc.line == line
                    && loc.col == col
                    && same_file(&loc.file, file)
                {
                    found.push(addr);
                }
            }
        }
        if found.is_empty() {
            found = self
                .with_lines(|l| Some(l.find_code_sites(file, line, col)))
                .unwrap_or_default();
        }
        found
    }
}

/// Do two spellings name the same source file (equal, or one is a path tail of the other)?
pub fn same_file(a: &str, b: &str) -> bool {
    let tail = |long: &str, short: &str| {
        long.strip_suffix(short)
            .is_some_and(|rest| rest.is_empty() || rest.ends_with('/'))
    };
    tail(a, b) || tail(b, a)
}

/// Site ids resolved to source, filled from the ELF and from `J site` side frames.
#[derive(Default, Clone, Debug)]
pub struct Sites {
    map: HashMap<u32, SiteLoc>,
}

impl Sites {
    /// Records a site definition.
    pub fn insert(&mut self, id: u32, loc: SiteLoc) {
        self.map.insert(id, loc);
    }

    /// The location of `id`, resolving it from `elf` the first time.
    pub fn get(&mut self, id: u32, elf: Option<&Firmware>) -> Option<&SiteLoc> {
        match self.map.entry(id) {
            std::collections::hash_map::Entry::Occupied(e) => Some(e.into_mut()),
            std::collections::hash_map::Entry::Vacant(e) => Some(e.insert(elf?.resolve_site(id)?)),
        }
    }

    /// The location of `id` if already known.
    pub fn known(&self, id: u32) -> Option<&SiteLoc> {
        self.map.get(&id)
    }

    /// All known sites.
    pub fn iter(&self) -> impl Iterator<Item = (&u32, &SiteLoc)> {
        self.map.iter()
    }
}
