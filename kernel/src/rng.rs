//! The scheduler's seeded PRNG: xoshiro128** seeded through SplitMix64.
//!
//! 32-bit arithmetic only, so it costs the same few instructions on a Cortex-M0+ as on the
//! host, and the same seed gives the same stream on every port. Implements the `rand_core`
//! traits so strategies can be written against them.

use rand_core::{RngCore, SeedableRng, impls};

/// xoshiro128** (Blackman & Vigna), the scheduler's only source of choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedRng {
    s: [u32; 4],
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl SchedRng {
    /// Uniform integer in `0..n` (`n > 0`): Lemire's multiply-and-shift with rejection
    /// ("Fast random integer generation in an interval", 2019), exactly uniform, with a
    /// division only on the rare path that may reject.
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        debug_assert!(n > 0);
        let (mut high, mut low) = wide_mul(self.next_u32(), n);
        if low < n {
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                (high, low) = wide_mul(self.next_u32(), n);
            }
        }
        high
    }

    /// A fair coin.
    pub fn coin(&mut self) -> bool {
        self.next_u32() >> 31 == 1
    }
}

/// `a * b` as its high and low words (Lemire's bound needs both).
#[inline(always)]
fn wide_mul(a: u32, b: u32) -> (u32, u32) {
    #[cfg(jostle_armv6m)]
    if b >> 16 == 0 {
        return mul_by_halves(a, b);
    }
    let m = u64::from(a) * u64::from(b);
    ((m >> 32) as u32, m as u32)
}

/// [`wide_mul`] for `b` below 2^16 (a bound on tasks, sources or steps) from two 16 x 16 ->
/// 32 products, for ARMv6-M: it has no 32 x 32 -> 64 multiply (ARMv7-M's `umull`), and a
/// `u64` product there is a call to `__aeabi_lmul`, a whole 64 x 64 multiply (37
/// instructions, and the moves around the call, at every draw of a Cortex-M0). The same
/// product, so the same draws, on every core. (Four half products for any `b` are
/// recognised by LLVM as the wide product, and made the call again.)
#[cfg_attr(not(any(jostle_armv6m, test)), allow(dead_code))]
#[inline(always)]
fn mul_by_halves(a: u32, b: u32) -> (u32, u32) {
    debug_assert!(b >> 16 == 0);
    // a * b = (a >> 16) * b * 2^16 + (a & 0xFFFF) * b; the sum below is under 2^32.
    let high = ((a >> 16) * b + (((a & 0xFFFF) * b) >> 16)) >> 16;
    (high, a.wrapping_mul(b))
}

impl RngCore for SchedRng {
    fn next_u32(&mut self) -> u32 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 9;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(11);
        result
    }

    fn next_u64(&mut self) -> u64 {
        impls::next_u64_via_u32(self)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        impls::fill_bytes_via_next(self, dest)
    }
}

impl SeedableRng for SchedRng {
    type Seed = [u8; 16];

    fn from_seed(seed: [u8; 16]) -> Self {
        let mut s = [0u32; 4];
        for (i, w) in s.iter_mut().enumerate() {
            *w = u32::from_le_bytes([
                seed[4 * i],
                seed[4 * i + 1],
                seed[4 * i + 2],
                seed[4 * i + 3],
            ]);
        }
        if s == [0; 4] {
            // The all-zero state is a fixed point of xoshiro.
            s[0] = 1;
        }
        SchedRng { s }
    }

    fn seed_from_u64(seed: u64) -> Self {
        let mut st = seed;
        let (a, b) = (splitmix64(&mut st), splitmix64(&mut st));
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&a.to_le_bytes());
        bytes[8..].copy_from_slice(&b.to_le_bytes());
        Self::from_seed(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_seeds_differ() {
        let mut a = SchedRng::seed_from_u64(7);
        let mut b = SchedRng::seed_from_u64(7);
        let mut c = SchedRng::seed_from_u64(8);
        let xs: [u32; 8] = core::array::from_fn(|_| a.next_u32());
        let ys: [u32; 8] = core::array::from_fn(|_| b.next_u32());
        let zs: [u32; 8] = core::array::from_fn(|_| c.next_u32());
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
    }

    #[test]
    fn the_product_by_halves_is_the_wide_product() {
        let mut r = SchedRng::seed_from_u64(3);
        let (a_edges, b_edges) = (
            [0, 1, 0xFFFF, 0x1_0000, 0x8000_0000, 0xFFFF_FFFF],
            [1, 2, 3, 0xFFFF],
        );
        let pairs = a_edges
            .iter()
            .flat_map(|&a| b_edges.iter().map(move |&b| (a, b)))
            .chain((0..10_000).map(|_| (r.next_u32(), r.next_u32() >> 16)));
        for (a, b) in pairs {
            let m = u64::from(a) * u64::from(b);
            assert_eq!(
                mul_by_halves(a, b),
                ((m >> 32) as u32, m as u32),
                "{a} * {b}"
            );
        }
    }

    #[test]
    fn below_is_roughly_uniform() {
        let mut r = SchedRng::seed_from_u64(1);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            counts[r.below(3) as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }
}
