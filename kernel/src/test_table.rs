//! The concurrency tests a firmware declares (`jostle::tests!`), as the host reads them.
//!
//! Each test is a main task with options of its own. The firmware lists them in the ELF
//! section [`SECTION`], one fixed-size [`TestRecord`] each, as embedded-test lists its tests
//! in `.embedded_test`: the host reads the section to list the tests and to run each one as a
//! campaign, selecting it per run through the configuration block's `test` field. The same
//! layout code builds the records (in the firmware, at compile time) and reads them (on the
//! host), so it has one definition.

/// The ELF section holding the records.
pub const SECTION: &str = ".jostle_tests";

/// First word of every record: `"JTST"`.
pub const MAGIC: u32 = 0x5453_544A;

/// Longest test name kept (longer names are refused at compile time).
pub const NAME_LEN: usize = 48;

/// Bytes of one record: magic, index, budget, step limit, flags, name length, name.
pub const RECORD_LEN: usize = 24 + NAME_LEN;

/// Flag: the test passes only if its campaign finds a bug (`#[should_find]`, as libtest's
/// `#[should_panic]`).
pub const SHOULD_FIND: u32 = 1;

/// A test's options, written in `jostle::tests!` as attributes that become calls:
/// `#[budget = 300]` is `.budget(300)`, `#[should_find]` is `.should_find()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TestOptions {
    /// Runs of the test's campaign (0: the host's default).
    pub budget: u32,
    /// Most scheduling steps per run (0: the host's default).
    pub step_limit: u32,
    /// [`SHOULD_FIND`] and future flags.
    pub flags: u32,
}

impl TestOptions {
    /// No options: the host's defaults, and the test must find nothing.
    pub const fn new() -> Self {
        TestOptions {
            budget: 0,
            step_limit: 0,
            flags: 0,
        }
    }

    /// The campaign makes at most `runs` runs.
    pub const fn budget(self, runs: u32) -> Self {
        TestOptions {
            budget: runs,
            ..self
        }
    }

    /// Each run stops after `steps` scheduling steps.
    pub const fn step_limit(self, steps: u32) -> Self {
        TestOptions {
            step_limit: steps,
            ..self
        }
    }

    /// The test passes only if its campaign finds a bug (a failing run or a harmful one).
    pub const fn should_find(self) -> Self {
        TestOptions {
            flags: self.flags | SHOULD_FIND,
            ..self
        }
    }

    /// A doc comment on a test (`#[doc = ".."]`): kept in the source, not in the record.
    pub const fn doc(self, _text: &str) -> Self {
        self
    }
}

/// One test as the ELF holds it (little-endian, as every Cortex-M and host Jostle runs on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct TestRecord {
    /// [`MAGIC`].
    pub magic: u32,
    /// Position in the firmware's table: the configuration block's `test` value.
    pub index: u32,
    /// [`TestOptions::budget`].
    pub budget: u32,
    /// [`TestOptions::step_limit`].
    pub step_limit: u32,
    /// [`TestOptions::flags`].
    pub flags: u32,
    /// Bytes of `name` used.
    pub name_len: u32,
    /// The test's name (the function's), UTF-8.
    pub name: [u8; NAME_LEN],
}

impl TestRecord {
    /// The record of test `index`, named `name`. Panics (at compile time, in a `static`)
    /// when the name is longer than [`NAME_LEN`].
    pub const fn new(index: u32, name: &str, options: TestOptions) -> Self {
        let bytes = name.as_bytes();
        assert!(
            bytes.len() <= NAME_LEN,
            "a jostle test name is at most 48 bytes"
        );
        let mut stored = [0u8; NAME_LEN];
        let mut i = 0;
        while i < bytes.len() {
            stored[i] = bytes[i];
            i += 1;
        }
        TestRecord {
            magic: MAGIC,
            index,
            budget: options.budget,
            step_limit: options.step_limit,
            flags: options.flags,
            name_len: bytes.len() as u32,
            name: stored,
        }
    }

    /// The records of a table of tests, numbered in order.
    pub const fn table<const N: usize>(tests: [(&str, TestOptions); N]) -> [TestRecord; N] {
        let mut out = [TestRecord::new(0, "", TestOptions::new()); N];
        let mut i = 0;
        while i < N {
            out[i] = TestRecord::new(i as u32, tests[i].0, tests[i].1);
            i += 1;
        }
        out
    }

    /// The test's name.
    pub fn name(&self) -> &str {
        let len = (self.name_len as usize).min(NAME_LEN);
        core::str::from_utf8(&self.name[..len]).unwrap_or("")
    }

    /// Whether the test must find a bug.
    pub fn should_find(&self) -> bool {
        self.flags & SHOULD_FIND != 0
    }

    /// Reads the records of a section's bytes; `None` when they are not whole records of
    /// this layout (a section from another version, or cut short).
    pub fn parse_all(bytes: &[u8]) -> Option<impl Iterator<Item = TestRecord> + '_> {
        if !bytes.len().is_multiple_of(RECORD_LEN) {
            return None;
        }
        let word = |r: &[u8], i: usize| {
            u32::from_le_bytes([r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]])
        };
        let valid = bytes.chunks_exact(RECORD_LEN).all(|r| {
            word(r, 0) == MAGIC
                && word(r, 5) as usize <= NAME_LEN
                && core::str::from_utf8(&r[24..24 + word(r, 5) as usize]).is_ok()
        });
        valid.then(|| {
            bytes.chunks_exact(RECORD_LEN).map(move |r| {
                let mut name = [0u8; NAME_LEN];
                name.copy_from_slice(&r[24..]);
                TestRecord {
                    magic: MAGIC,
                    index: word(r, 1),
                    budget: word(r, 2),
                    step_limit: word(r, 3),
                    flags: word(r, 4),
                    name_len: word(r, 5),
                    name,
                }
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_as_they_were_written() {
        let table = TestRecord::table([
            ("passes", TestOptions::new()),
            ("finds", TestOptions::new().should_find().budget(300)),
        ]);
        assert_eq!(core::mem::size_of::<TestRecord>(), RECORD_LEN);
        // SAFETY: TestRecord is repr(C) of u32s and bytes, no padding (size checked above).
        let bytes = unsafe {
            core::slice::from_raw_parts(table.as_ptr().cast::<u8>(), RECORD_LEN * table.len())
        };
        let read: Vec<TestRecord> = TestRecord::parse_all(bytes).unwrap().collect();
        assert_eq!(read, table);
        assert_eq!(read[1].name(), "finds");
        assert!(read[1].should_find() && !read[0].should_find());
        assert_eq!((read[1].index, read[1].budget), (1, 300));
        assert!(TestRecord::parse_all(&bytes[..RECORD_LEN - 1]).is_none());
        let mut bad = bytes.to_vec();
        bad[0] ^= 1;
        assert!(TestRecord::parse_all(&bad).is_none());
    }
}
