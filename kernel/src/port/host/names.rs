//! Names the host port gives sites and memory locations.
//!
//! A site's id is [`crate::site::host_site_id`] of its `file:line:col`, found once per
//! process by the address of its `Location` record; each run prints the definition (`J site
//! <id> <file>:<line>:<col>`) at the site's first use in that run, so every run's trace is
//! whole by itself. Memory locations and locks are numbered in order of first use in each
//! run, as a fresh process would number them; the first use prints where the location lies
//! (`J addr <id> <offset>`, bytes from [`super::JOSTLE_HOST_ANCHOR`]), so that the host tool
//! names it from the executable's symbols.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::Location;

/// A hasher for addresses: one multiply, folded so that the low bits (the table's index)
/// depend on every bit of an aligned pointer.
#[derive(Default)]
pub(super) struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
}

type Fast = BuildHasherDefault<AddrHasher>;

/// A site: its id and the last run that printed its definition.
struct Site {
    id: u32,
    printed_in: u32,
}

/// A memory location or lock: its id in run `run`.
struct Addr {
    id: u32,
    run: u32,
}

/// The process's names.
#[derive(Default)]
pub(super) struct Names {
    sites: HashMap<usize, Site, Fast>,
    /// Sites by location, for a `Location` record that is not the first one seen for its
    /// `file:line:col` (the panic hook's, which is not `'static` by type).
    by_location: HashMap<(String, u32, u32), usize>,
    /// Ids given, so that two locations with one hash (never seen; 32 bits) get distinct ids.
    site_ids: HashSet<u32, Fast>,
    addrs: HashMap<usize, Addr, Fast>,
    /// The run the numbering of locations is for, and the next number in it.
    run: u32,
    next_addr: u32,
}

impl Names {
    /// Starts run `run` (a number not used before in this process).
    pub(super) fn start_run(&mut self, run: u32) {
        self.run = run;
        self.next_addr = 1;
    }

    /// The id of the site `loc`, and whether its definition is to be printed now (its
    /// first use in this run).
    pub(super) fn site(&mut self, loc: &Location<'_>) -> (u32, bool) {
        let key = loc as *const Location<'_> as usize;
        let run = self.run;
        if let Some(site) = self.sites.get_mut(&key) {
            let first = site.printed_in != run;
            site.printed_in = run;
            return (site.id, first);
        }
        let text = (loc.file().to_owned(), loc.line(), loc.column());
        let id = match self.by_location.get(&text) {
            Some(other) => self.sites[other].id,
            None => {
                let mut id = crate::site::host_site_id(loc.file(), loc.line(), loc.column());
                while self.site_ids.contains(&id) {
                    id = id.wrapping_add(1).max(1);
                }
                self.site_ids.insert(id);
                self.by_location.insert(text, key);
                id
            }
        };
        // A second record of a known location (rare) prints its definition again: the
        // same line twice, which readers take as one.
        self.sites.insert(
            key,
            Site {
                id,
                printed_in: run,
            },
        );
        (id, true)
    }

    /// The id of the memory location or lock at `p` in this run, and whether this is its
    /// first use in the run (its definition is printed then).
    pub(super) fn addr(&mut self, p: usize) -> (u32, bool) {
        let run = self.run;
        let next = &mut self.next_addr;
        let a = self.addrs.entry(p).or_insert(Addr { id: 0, run: 0 });
        let first = a.run != run;
        if first {
            a.run = run;
            a.id = *next;
            *next += 1;
        }
        (a.id, first)
    }
}

#[cfg(test)]
mod tests {
    use super::Names;

    #[test]
    fn sites_print_once_per_run_and_locations_renumber_per_run() {
        let mut n = Names::default();
        let here = std::panic::Location::caller();
        n.start_run(1);
        let (id, first) = n.site(here);
        assert!(first);
        assert_eq!(n.site(here), (id, false));
        assert_eq!(
            (n.addr(0x1000), n.addr(0x2000), n.addr(0x1000)),
            ((1, true), (2, true), (1, false))
        );
        n.start_run(2);
        assert_eq!(n.site(here), (id, true));
        assert_eq!((n.addr(0x2000), n.addr(0x1000)), ((1, true), (2, true)));
    }
}
