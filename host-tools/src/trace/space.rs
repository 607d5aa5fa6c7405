//! Site ids of an image: a `file:line:col` becomes the ids the firmware about to run uses
//! for it (device: `Location` addresses found in the ELF; host port: hashes of the
//! location). A transport says which space its image is in.

use crate::error::JostleError;
use crate::trace::elf::Firmware;
use jostle_kernel::site::host_site_id;

/// Where site ids come from for the firmware about to run.
pub enum SiteSpace<'a> {
    /// A device image: `Location` addresses found in the ELF.
    Elf(&'a Firmware),
    /// The host port: [`host_site_id`].
    Host,
}

impl SiteSpace<'_> {
    /// The ids of `file:line:col` in this space (an ELF may hold several records).
    pub fn ids(&self, location: &str) -> Result<Vec<u32>, JostleError> {
        let (file, line, col) = parse_location(location).ok_or_else(|| {
            JostleError::Usage(format!(
                "`{location}` is not a site (expected file.rs:LINE:COL)"
            ))
        })?;
        let ids = match self {
            SiteSpace::Host => vec![host_site_id(file, line, col)],
            SiteSpace::Elf(fw) => fw.find_site(file, line, col),
        };
        if ids.is_empty() {
            return Err(JostleError::Usage(format!(
                "no instrumented operation at {location} in this firmware"
            )));
        }
        Ok(ids)
    }
}

/// Splits `file:line:col`.
pub fn parse_location(text: &str) -> Option<(&str, u32, u32)> {
    let mut parts = text.rsplitn(3, ':');
    let col = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    let file = parts.next().filter(|f| !f.is_empty())?;
    Some((file, line, col))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_and_ids() {
        assert_eq!(parse_location("src/a.rs:12:5"), Some(("src/a.rs", 12, 5)));
        assert_eq!(parse_location("c:/x/a.rs:1:2"), Some(("c:/x/a.rs", 1, 2)));
        assert_eq!(parse_location("a.rs:12"), None);
        assert_eq!(parse_location(":1:2"), None);
        let host = SiteSpace::Host.ids("src/a.rs:12:5").unwrap();
        assert_eq!(host, vec![host_site_id("src/a.rs", 12, 5)]);
        assert!(SiteSpace::Host.ids("nonsense").is_err());
    }
}
