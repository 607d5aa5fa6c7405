//! Site identities.
//!
//! A *site* is a source location of an instrumented operation (`#[track_caller]`'s
//! `Location`). On the device its id is the address of the `Location` record in flash:
//! free to compute and stable for one ELF. The host port has no stable addresses, so its id
//! is [`host_site_id`] of `file:line:col`: stable across runs and builds, and computable by
//! the host tool from a `file:line:col` that a user or a prediction names.

/// The host port's id of the site `file:line:col`: FNV-1a 32 over the text `file:line:col`,
/// with 0 (meaning "no site") mapped to 1.
pub fn host_site_id(file: &str, line: u32, col: u32) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u32::from(*b);
            hash = hash.wrapping_mul(0x0100_0193);
        }
    };
    eat(file.as_bytes());
    for n in [line, col] {
        eat(b":");
        let mut digits = [0u8; 10];
        let mut i = digits.len();
        let mut v = n;
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        eat(&digits[i..]);
    }
    hash.max(1)
}

#[cfg(test)]
mod tests {
    use super::host_site_id;

    #[test]
    fn hashes_the_rendered_location() {
        // FNV-1a 32 of "a:1:2", computed independently.
        let mut h: u32 = 0x811c_9dc5;
        for b in b"a:1:2" {
            h ^= u32::from(*b);
            h = h.wrapping_mul(0x0100_0193);
        }
        assert_eq!(host_site_id("a", 1, 2), h);
        assert_ne!(host_site_id("a", 1, 2), host_site_id("a", 12, 0));
        assert_ne!(
            host_site_id("src/x.rs", 10, 5),
            host_site_id("src/x.rs", 1, 5)
        );
    }
}
