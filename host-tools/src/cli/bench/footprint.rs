//! `jostle bench`: the kernel's flash and RAM in a firmware image, from the ELF's symbols:
//! code and read-only data whose symbols belong to `jostle_kernel` (flash), its statics
//! (RAM), and the board's logger state. With fat LTO, kernel code inlined into firmware
//! functions is counted with them, not here.

use anyhow::Context;
use object::{Object, ObjectSection, ObjectSymbol, SectionKind};
use std::path::Path;

/// Prints the kernel's flash and RAM in the image at `path`, the row named `what`.
pub(crate) fn footprint(path: &Path, what: &str) -> anyhow::Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let file =
        object::File::parse(&*bytes).with_context(|| format!("parsing {}", path.display()))?;
    let (mut flash, mut ram, mut logger) = (0u64, 0u64, 0u64);
    for sym in file.symbols() {
        let (Ok(name), Some(index)) = (sym.name(), sym.section_index()) else {
            continue;
        };
        let Ok(section) = file.section_by_index(index) else {
            continue;
        };
        let writable = matches!(
            section.kind(),
            SectionKind::Data | SectionKind::UninitializedData
        );
        if name.contains("jostle_kernel") {
            if writable {
                ram += sym.size();
            } else {
                flash += sym.size();
            }
        } else if writable && name.contains("jostle_board") && name.contains("logger") {
            logger += sym.size();
        }
    }
    println!(
        "footprint    {what} {}: kernel {:.1} KiB flash (goal <= 10 KiB), {ram} B kernel state + {logger} B logger RAM (goal <= 1 KiB at 8 tasks)",
        path.file_name().unwrap_or_default().to_string_lossy(),
        flash as f64 / 1024.0
    );
    Ok(())
}
