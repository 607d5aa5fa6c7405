//! The configuration block: what one run does, written by the host before the firmware starts.
//!
//! Fixed layout, little-endian, versioned and checksummed. The device finds it at the linker
//! symbol `JOSTLE_CONFIG` (a RAM region that startup code does not touch); the host writes it
//! there (QEMU `-device loader`, a probe's RAM write) or the host port reads it from the file
//! named by `JOSTLE_CONFIG`. The same [`Config::encode`] / [`Config::decode`] code runs on both
//! sides, so the layout has one definition.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `"JSTL"` (0x4C54534A) |
//! | 4 | 2 | version ([`VERSION`]) |
//! | 6 | 2 | length of the whole block in bytes ([`BLOCK_LEN`]) |
//! | 8 | 4 | CRC-32 (IEEE) of bytes 12..length |
//! | 12 | 8 | seed |
//! | 20 | 1 | strategy id ([`StrategyId`]) |
//! | 21 | 1 | trace level (0 results, 1 sync, 2 full) |
//! | 22 | 1 | number of arguments used (≤ [`MAX_ARGS`]) |
//! | 23 | 1 | number of breakpoints used (≤ [`MAX_BREAKPOINTS`]) |
//! | 24 | 4 | step limit (scheduling steps; 0 is refused) |
//! | 28 | 4 | livelock bound (scheduling steps a task may stay postponed) |
//! | 32 | 16 | strategy parameters, 4 × u32 |
//! | 48 | 32 | firmware arguments, 8 × u32 |
//! | 80 | 128 | breakpoints, 16 × (site u32, aux u32): aux = role << 24 \| index ([`crate::targets::role`]) |
//! | 208 | 4 | runs per boot (0 or 1: one run): run `i` uses seed `seed + i`, and the firmware resets itself between runs; [`SERVED`]: after each run the firmware reads the next run's block from the host |
//! | 212 | 4 | interrupt horizon: steps over which a firing is drawn ([`DEFAULT_IRQ_HORIZON`] when 0) |
//! | 216 | 4 | test: which of the firmware's declared tests runs (`jostle::tests!`; 0 otherwise) |
//!
//! An absent block (no magic) means the documented default: seed 0, Random, full trace,
//! step limit [`DEFAULT_STEP_LIMIT`]. A block with the magic but anything else wrong is
//! refused as a whole ([`Rejection`]): the firmware never runs with a half-valid block.

use crate::event::TraceLevel;
pub use crate::strategy::StrategyId;
pub use crate::targets::{Breakpoint, MAX_BREAKPOINTS};

/// `"JSTL"` read as a little-endian u32.
pub const MAGIC: u32 = 0x4C54_534A;
/// The layout version this kernel reads.
pub const VERSION: u16 = 5;
/// `runs` of a served boot: after each run the firmware asks the host for the next run's
/// whole block (on QEMU, from semihosting's standard input) and restarts with it, until the
/// host's input ends. One QEMU then serves a whole campaign's runs, one after another.
pub const SERVED: u32 = u32::MAX;
/// Maximum firmware arguments (`--arg`).
pub const MAX_ARGS: usize = 8;
/// Bytes in an encoded block.
pub const BLOCK_LEN: usize = 80 + MAX_BREAKPOINTS * 8 + 12;
/// Step limit used when no block is present.
pub const DEFAULT_STEP_LIMIT: u32 = 100_000;
/// Interrupt horizon used when the block gives 0: a spontaneous source's next firing, and a
/// requested one's delay, are drawn uniformly from this many scheduling steps.
pub const DEFAULT_IRQ_HORIZON: u32 = 16;
/// Livelock bound used when no block is present.
pub const DEFAULT_LIVELOCK_BOUND: u32 = 1_000;
/// Most steps of identical iterations after which a lone spinner starves (`sched::spin`;
/// the livelock bound when it is smaller). A task alone whose iterations change nothing can
/// only be stopped by its own local variables (a counter), so this bounds how long such a
/// loop may run before it is a finding: a wait with a retry count of more than about half
/// this is reported too. Every starving run lasts at least this long, so it is kept short.
pub const STARVATION_BOUND: u32 = 256;

/// The decoded configuration of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Config {
    /// Seed of the scheduler's PRNG.
    pub seed: u64,
    /// The strategy.
    pub strategy: StrategyId,
    /// Which events are emitted.
    pub trace: TraceLevel,
    /// Maximum scheduling steps before the `step_limit` verdict.
    pub step_limit: u32,
    /// Scheduling steps a postponed task may wait before it is released.
    pub livelock_bound: u32,
    /// Strategy parameters.
    pub params: [u32; 4],
    /// Firmware arguments (the first `nargs` are set).
    pub args: crate::fixed::Vec<u32, MAX_ARGS>,
    /// Breakpoints for active strategies.
    pub breakpoints: crate::fixed::Vec<Breakpoint, MAX_BREAKPOINTS>,
    /// Runs per boot (seeds `seed`, `seed + 1`, ...; 0 and 1 both mean one). Several runs
    /// per boot spare a QEMU start per run; the kernel resets the CPU between them.
    /// [`SERVED`]: this run, then whatever blocks the host sends.
    #[cfg_attr(feature = "serde", serde(default))]
    pub runs: u32,
    /// Scheduling steps over which interrupt firings are drawn (0: [`DEFAULT_IRQ_HORIZON`]).
    #[cfg_attr(feature = "serde", serde(default))]
    pub irq_horizon: u32,
    /// Which declared test the firmware runs (`jostle::tests!`; an index into its table).
    #[cfg_attr(feature = "serde", serde(default))]
    pub test: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 0,
            strategy: StrategyId::Random,
            trace: TraceLevel::Full,
            step_limit: DEFAULT_STEP_LIMIT,
            livelock_bound: DEFAULT_LIVELOCK_BOUND,
            params: [0; 4],
            args: crate::fixed::Vec::new(),
            breakpoints: crate::fixed::Vec::new(),
            runs: 1,
            irq_horizon: 0,
            test: 0,
        }
    }
}

/// Why a block was refused (the `reason` of the `ConfigRejected` event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Rejection {
    /// The version field is not [`VERSION`].
    Version = 1,
    /// The length field is not [`BLOCK_LEN`].
    Length = 2,
    /// The CRC-32 does not match.
    Checksum = 3,
    /// Unknown strategy id.
    Strategy = 4,
    /// Unknown trace level.
    TraceLevel = 5,
    /// Too many arguments or breakpoints.
    Count = 6,
    /// A step limit of zero.
    StepLimit = 7,
}

impl Rejection {
    /// Decodes the event's `reason` byte.
    pub fn from_u8(v: u8) -> Option<Self> {
        use Rejection::*;
        [
            Version, Length, Checksum, Strategy, TraceLevel, Count, StepLimit,
        ]
        .into_iter()
        .find(|r| *r as u8 == v)
    }

    /// One-line explanation.
    pub fn message(self) -> &'static str {
        match self {
            Rejection::Version => "configuration block has an unsupported version",
            Rejection::Length => "configuration block has the wrong length",
            Rejection::Checksum => "configuration block checksum does not match",
            Rejection::Strategy => "configuration block names an unknown strategy",
            Rejection::TraceLevel => "configuration block names an unknown trace level",
            Rejection::Count => "configuration block has too many arguments or breakpoints",
            Rejection::StepLimit => "configuration block has a step limit of zero",
        }
    }
}

/// The checksum of an encoded block, if the block's bytes match it (magic and length not
/// checked: [`Config::decode`] does).
pub fn block_checksum(b: &[u8]) -> Option<u32> {
    let field = u32_at(b, 8);
    (field == crc32(&b[12..])).then_some(field)
}

/// CRC-32 (IEEE 802.3, reflected), four bits at a time from a 16-entry table (64 bytes of
/// flash): every run of a boot checks its block, and the bitwise loop cost some 12,600
/// instructions of each warm restart.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        crc = (crc >> 4) ^ CRC_NIBBLE[(crc & 0xF) as usize];
        crc = (crc >> 4) ^ CRC_NIBBLE[(crc & 0xF) as usize];
    }
    !crc
}

/// The CRC of each 4-bit value, shifted through four rounds of the bitwise algorithm.
const CRC_NIBBLE: [u32; 16] = {
    let mut table = [0u32; 16];
    let mut i = 0;
    while i < 16 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 4 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl Config {
    /// Encodes the block, checksum included.
    pub fn encode(&self) -> [u8; BLOCK_LEN] {
        let mut b = [0u8; BLOCK_LEN];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4..6].copy_from_slice(&VERSION.to_le_bytes());
        b[6..8].copy_from_slice(&(BLOCK_LEN as u16).to_le_bytes());
        b[12..20].copy_from_slice(&self.seed.to_le_bytes());
        b[20] = self.strategy as u8;
        b[21] = self.trace as u8;
        b[22] = self.args.len() as u8;
        b[23] = self.breakpoints.len() as u8;
        b[24..28].copy_from_slice(&self.step_limit.to_le_bytes());
        b[28..32].copy_from_slice(&self.livelock_bound.to_le_bytes());
        for (i, p) in self.params.iter().enumerate() {
            b[32 + 4 * i..36 + 4 * i].copy_from_slice(&p.to_le_bytes());
        }
        for (i, a) in self.args.iter().enumerate() {
            b[48 + 4 * i..52 + 4 * i].copy_from_slice(&a.to_le_bytes());
        }
        for (i, bp) in self.breakpoints.iter().enumerate() {
            let at = 80 + 8 * i;
            b[at..at + 4].copy_from_slice(&bp.site.to_le_bytes());
            b[at + 4..at + 8].copy_from_slice(&bp.aux.to_le_bytes());
        }
        b[208..212].copy_from_slice(&self.runs.to_le_bytes());
        b[212..216].copy_from_slice(&self.irq_horizon.to_le_bytes());
        b[216..220].copy_from_slice(&self.test.to_le_bytes());
        let crc = crc32(&b[12..]);
        b[8..12].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// The flash form: the block at the start of a flash page whose other bytes stay
    /// erased (0xFF), as a flash programmer writes it. `page` must hold a block.
    pub fn encode_page(&self, page: &mut [u8]) {
        page.fill(0xFF);
        page[..BLOCK_LEN].copy_from_slice(&self.encode());
    }

    /// Decodes a block (RAM form, or the start of a flash page). `Ok(None)`: no block (the
    /// magic is absent: zeroed RAM, erased flash); `Err`: refused.
    pub fn decode(b: &[u8]) -> Result<Option<Config>, Rejection> {
        let mut config = Config::default();
        Ok(Self::decode_into(b, true, &mut config)?.then_some(config))
    }

    /// [`Config::decode`] into `config`, in place (the Cortex-M port's start: a block is
    /// some 220 bytes, and each move of a decoded one cost a copy). `Ok(false)`: no block,
    /// `config` untouched. `check_crc: false` is for a block an earlier run of this boot
    /// decoded (a warm restart): that run checked the CRC, nothing has written the block
    /// since (the host writes it before the boot), and the CRC cost some 2,300
    /// instructions of every warm restart.
    pub fn decode_into(b: &[u8], check_crc: bool, config: &mut Config) -> Result<bool, Rejection> {
        if b.len() < 8 || u32_at(b, 0) != MAGIC {
            return Ok(false);
        }
        if u16_at(b, 4) != VERSION {
            return Err(Rejection::Version);
        }
        let len = u16_at(b, 6) as usize;
        if len != BLOCK_LEN || b.len() < len {
            return Err(Rejection::Length);
        }
        if check_crc && block_checksum(&b[..len]).is_none() {
            return Err(Rejection::Checksum);
        }
        let strategy = StrategyId::from_u8(b[20]).ok_or(Rejection::Strategy)?;
        let trace = TraceLevel::from_u8(b[21]).ok_or(Rejection::TraceLevel)?;
        let (nargs, nbps) = (b[22] as usize, b[23] as usize);
        if nargs > MAX_ARGS || nbps > MAX_BREAKPOINTS {
            return Err(Rejection::Count);
        }
        let step_limit = u32_at(b, 24);
        if step_limit == 0 {
            return Err(Rejection::StepLimit);
        }
        // Named field by field, with no `..`: a field added to `Config` must be read here.
        let Config {
            seed,
            strategy: c_strategy,
            trace: c_trace,
            step_limit: c_step_limit,
            livelock_bound,
            params,
            args,
            breakpoints,
            runs,
            irq_horizon,
            test,
        } = config;
        *seed = u64::from_le_bytes(b[12..20].try_into().unwrap_or([0; 8]));
        *c_strategy = strategy;
        *c_trace = trace;
        *c_step_limit = step_limit;
        *livelock_bound = u32_at(b, 28);
        for (i, p) in params.iter_mut().enumerate() {
            *p = u32_at(b, 32 + 4 * i);
        }
        args.clear();
        for i in 0..nargs {
            let _ = args.push(u32_at(b, 48 + 4 * i));
        }
        breakpoints.clear();
        for i in 0..nbps {
            let at = 80 + 8 * i;
            let _ = breakpoints.push(Breakpoint {
                site: u32_at(b, at),
                aux: u32_at(b, at + 4),
            });
        }
        *runs = u32_at(b, 208).max(1);
        *irq_horizon = u32_at(b, 212);
        *test = u32_at(b, 216);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Config {
        let mut c = Config {
            seed: 0xDEAD_BEEF_0123_4567,
            trace: TraceLevel::Sync,
            step_limit: 777,
            livelock_bound: 55,
            params: [1, 2, 3, 4],
            irq_horizon: 33,
            test: 2,
            ..Config::default()
        };
        c.args.extend_from_slice(&[5, 20, 100]).unwrap();
        c.breakpoints
            .push(Breakpoint {
                site: 0x1234,
                aux: 9,
            })
            .unwrap();
        c
    }

    #[test]
    fn round_trip() {
        let c = sample();
        assert_eq!(Config::decode(&c.encode()), Ok(Some(c)));
    }

    #[test]
    fn crc_matches_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn the_table_crc_equals_the_bitwise_one() {
        fn bitwise(bytes: &[u8]) -> u32 {
            let mut crc = !0u32;
            for &b in bytes {
                crc ^= b as u32;
                for _ in 0..8 {
                    crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
                }
            }
            !crc
        }
        let mut x = 0x1234_5678u32;
        let bytes: Vec<u8> = (0..600)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        for len in [0, 1, 2, 3, 17, 255, 600] {
            assert_eq!(crc32(&bytes[..len]), bitwise(&bytes[..len]), "{len} bytes");
        }
    }

    #[test]
    fn the_flash_form_decodes_like_the_ram_form_and_an_erased_page_is_absent() {
        let c = sample();
        let mut page = [0u8; 4096];
        c.encode_page(&mut page);
        assert!(page[BLOCK_LEN..].iter().all(|b| *b == 0xFF));
        assert_eq!(Config::decode(&page), Ok(Some(c.clone())));
        assert_eq!(&page[..BLOCK_LEN], &c.encode()[..]);
        assert_eq!(Config::decode(&[0xFFu8; 4096]), Ok(None));
    }

    #[test]
    fn absent_block_is_none() {
        assert_eq!(Config::decode(&[0u8; BLOCK_LEN]), Ok(None));
        assert_eq!(Config::decode(&[0xFFu8; BLOCK_LEN]), Ok(None));
    }

    #[test]
    fn every_single_bit_flip_after_the_magic_is_refused() {
        let good = sample().encode();
        for byte in 4..BLOCK_LEN {
            for bit in 0..8 {
                let mut b = good;
                b[byte] ^= 1 << bit;
                assert!(Config::decode(&b).is_err(), "flip {byte}:{bit} accepted");
            }
        }
    }

    #[test]
    fn bad_fields_with_a_good_checksum_are_refused() {
        let reseal = |mut b: [u8; BLOCK_LEN]| {
            let crc = crc32(&b[12..]);
            b[8..12].copy_from_slice(&crc.to_le_bytes());
            b
        };
        let good = sample().encode();
        let mut b = good;
        b[20] = 99;
        assert_eq!(Config::decode(&reseal(b)), Err(Rejection::Strategy));
        let mut b = good;
        b[21] = 9;
        assert_eq!(Config::decode(&reseal(b)), Err(Rejection::TraceLevel));
        let mut b = good;
        b[22] = 9;
        assert_eq!(Config::decode(&reseal(b)), Err(Rejection::Count));
        let mut b = good;
        b[24..28].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(Config::decode(&reseal(b)), Err(Rejection::StepLimit));
    }
}
