//! The concurrency tests a firmware declares (`jostle::tests!`): the records of its ELF
//! section `.jostle_tests` (layout in the kernel's `test_table`, shared with the firmware).

use crate::JostleError;
use jostle_kernel::test_table::{SECTION, TestRecord};
use object::{Object, ObjectSection};
use std::path::Path;

/// The tests `path` declares, in table order; `None` when it declares none (a firmware
/// with one `firmware!` main task). A section that is not whole records is refused.
pub fn declared_tests(path: &Path) -> Result<Option<Vec<TestRecord>>, JostleError> {
    let bytes = std::fs::read(path)
        .map_err(|e| JostleError::io(format!("reading {}", path.display()), e))?;
    let not_elf = |reason: String| JostleError::NotElf {
        path: path.to_owned(),
        reason,
    };
    let file = object::File::parse(&*bytes).map_err(|e| not_elf(e.to_string()))?;
    let Some(section) = file.section_by_name(SECTION) else {
        return Ok(None);
    };
    let data = section
        .data()
        .map_err(|e| not_elf(format!("{SECTION}: {e}")))?;
    let records: Vec<TestRecord> = TestRecord::parse_all(data)
        .ok_or_else(|| {
            not_elf(format!(
                "{SECTION} is not a table of Jostle test records (built with another version?)"
            ))
        })?
        .collect();
    // The firmware selects a test by its position: the records must say the same.
    if records
        .iter()
        .enumerate()
        .any(|(i, r)| r.index as usize != i)
    {
        return Err(not_elf(format!("{SECTION}: records out of order")));
    }
    Ok((!records.is_empty()).then_some(records))
}

/// The index of the test named `name` among `tests`, or a usage error naming them.
pub fn test_index(tests: Option<&[TestRecord]>, name: &str) -> Result<u32, JostleError> {
    let Some(tests) = tests else {
        return Err(JostleError::Usage(format!(
            "--test {name}: the firmware declares no tests (jostle::tests!)"
        )));
    };
    tests
        .iter()
        .find(|t| t.name() == name)
        .map(|t| t.index)
        .ok_or_else(|| {
            let names: Vec<&str> = tests.iter().map(TestRecord::name).collect();
            JostleError::Usage(format!(
                "--test {name}: no such test (the firmware declares {})",
                names.join(", ")
            ))
        })
}
