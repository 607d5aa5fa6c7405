//! Names for memory: an ELF's data symbols, so that an access or a lock reads `rf_fig1::Z`
//! (or `app::STATE+8` inside a struct or array) rather than `0x2000000c`.
//!
//! On a device a location's id is its address. The host port numbers locations per run and
//! says, at each one's first use, where it lies relative to the kernel's anchor static
//! (`J addr <id> <offset>`): statics keep their link-time distances in a position-independent
//! executable, so the anchor's link address plus the offset is the location's link address.

use object::{Object, ObjectSymbol, SymbolKind};

/// The symbol the host port measures offsets from (`jostle_kernel::port::host`).
pub const HOST_ANCHOR: &str = "JOSTLE_HOST_ANCHOR";

/// An image's data symbols, sorted by address.
#[derive(Clone, Debug, Default)]
pub struct Symbols {
    /// (address, size, demangled name without its hash).
    data: Vec<(u64, u64, String)>,
    /// The link address of [`HOST_ANCHOR`], if the image has it.
    anchor: Option<u64>,
}

impl Symbols {
    /// The data symbols of an ELF (none if it cannot be parsed: names are a convenience).
    pub fn parse(bytes: &[u8]) -> Symbols {
        let Ok(file) = object::File::parse(bytes) else {
            return Symbols::default();
        };
        let mut anchor = None;
        let mut data = Vec::new();
        for sym in file.symbols() {
            let Ok(name) = sym.name() else { continue };
            if name == HOST_ANCHOR {
                anchor = Some(sym.address());
            }
            if sym.kind() == SymbolKind::Data && sym.size() > 0 && !name.starts_with("__") {
                let name = format!("{:#}", rustc_demangle::demangle(name));
                data.push((sym.address(), sym.size(), name));
            }
        }
        data.sort_unstable();
        data.dedup_by_key(|d| d.0);
        Symbols { data, anchor }
    }

    /// The name of the byte at `addr`: its symbol, with `+offset` when not at its start.
    pub fn name_of(&self, addr: u64) -> Option<String> {
        let i = self.data.partition_point(|d| d.0 <= addr).checked_sub(1)?;
        let (start, size, name) = &self.data[i];
        let off = addr - start;
        (off < *size).then(|| {
            if off == 0 {
                name.clone()
            } else {
                format!("{name}+{off}")
            }
        })
    }

    /// The link address of the host port's anchor static, if the executable has it.
    pub fn anchor(&self) -> Option<u64> {
        self.anchor
    }

    /// The name of the location `offset` bytes from the host port's anchor.
    pub fn name_from_anchor(&self, offset: i64) -> Option<String> {
        let addr = self.anchor?.checked_add_signed(offset)?;
        self.name_of(addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cover_each_symbol_and_nothing_between() {
        let s = Symbols {
            data: vec![(0x100, 4, "app::X".into()), (0x108, 16, "app::BUF".into())],
            anchor: Some(0x108),
        };
        assert_eq!(s.name_of(0x100).as_deref(), Some("app::X"));
        assert_eq!(s.name_of(0x104), None);
        assert_eq!(s.name_of(0x10c).as_deref(), Some("app::BUF+4"));
        assert_eq!(s.name_of(0x118), None);
        assert_eq!(s.name_of(0x10), None);
        assert_eq!(s.name_from_anchor(-8).as_deref(), Some("app::X"));
        assert_eq!(s.name_from_anchor(-0x200), None);
    }
}
