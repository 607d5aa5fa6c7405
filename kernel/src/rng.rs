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
        let mut m = u64::from(self.next_u32()) * u64::from(n);
        if (m as u32) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u32) < threshold {
                m = u64::from(self.next_u32()) * u64::from(n);
            }
        }
        (m >> 32) as u32
    }

    /// A fair coin.
    pub fn coin(&mut self) -> bool {
        self.next_u32() >> 31 == 1
    }
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
