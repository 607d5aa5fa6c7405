//! Throughput benchmark of the hybrid and happens-before detectors (criterion):
//! `cargo bench -p jostle-checker --bench detect`.
//!
//! The trace is synthetic and deterministic (SplitMix64, fixed seed): 10 million events of 8
//! tasks over 1,000 locations and 16 locks, 30% synchronisation events. It is well formed:
//! acquires and releases nest properly, no task acquires a lock another task holds, waits
//! only consume sent signals. Composition:
//!
//! - 70% accesses (40% reads, 30% writes/updates of all events). A task holding a lock
//!   accesses a location that lock guards (location `a` is guarded by lock `4 + a % 12`)
//!   90% of the time; otherwise a random location (unprotected: the racy accesses).
//!   Sites: 125 code locations × {read, write} × {guarded, unguarded}.
//! - 30% synchronisation: acquire 13%, release 13% (depth ≤ 2: one of the "outer" locks
//!   0–3, then a guard lock 4–15), signal 1.5%, wait 1.5% (8 signals), frame enter/exit 1%.
//!
//! The trace is generated in chunks of 1M events into a reused buffer and each chunk is given
//! to the detector's `feed` (what `detect` does with a whole trace); only detector time is
//! measured, and the trace never is in memory as a whole, so the peak RSS reflects detector
//! state (plus the 24 MB chunk buffer), not the trace length.
//!
//! Criterion times each detector over the whole trace (10 samples, throughput in events).
//! Then the bench prints, in a stable form, the figures the checker is held to: events per
//! second of each detector (median of all runs), the detector state after 1M and after 10M
//! events, and the process peak RSS (`VmHWM`). Set `JOSTLE_BENCH_EVENTS` to change the event
//! count (`cargo test --benches` runs 100,000 events once).

use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use jostle_checker::{HbDetector, HybridDetector};
use jostle_kernel::event::Event;

const TASKS: u8 = 8;
const LOCATIONS: u32 = 1_000;
const LOCKS: u32 = 16;
const OUTER: u32 = 4;
const CHUNK: usize = 1_000_000;
const SEED: u64 = 0x4A05_713E;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u32) -> u32 {
        (((self.next() >> 32) * u64::from(n)) >> 32) as u32
    }
}

/// Deterministic well-formed trace generator.
struct Gen {
    rng: Rng,
    held: Vec<Vec<u32>>,
    holder: [Option<u8>; LOCKS as usize],
    frames: Vec<Vec<u32>>,
    pending: [u32; 8],
    started: bool,
}

impl Gen {
    fn new(seed: u64) -> Self {
        Self {
            rng: Rng(seed),
            held: vec![Vec::new(); TASKS as usize],
            holder: [None; LOCKS as usize],
            frames: vec![Vec::new(); TASKS as usize],
            pending: [0; 8],
            started: false,
        }
    }

    fn lock_addr(l: u32) -> u32 {
        0x2000_1000 + l * 8
    }

    fn fill(&mut self, out: &mut Vec<Event>, n: usize) {
        out.clear();
        if !self.started {
            self.started = true;
            out.push(Event::TaskStart { t: 0 });
            for c in 1..TASKS {
                out.push(Event::Spawn {
                    t: 0,
                    child: c,
                    s: 0x0800_0000 + c as u32,
                });
                out.push(Event::TaskStart { t: c });
            }
        }
        while out.len() < n {
            let t = self.rng.below(TASKS as u32) as u8;
            let r = self.rng.below(1000);
            if r < 700 {
                self.access(t, r < 400, out);
            } else if r < 830 {
                self.acquire(t, out);
            } else if r < 960 {
                self.release(t, out);
            } else if r < 975 {
                let g = self.rng.below(8);
                self.pending[g as usize] += 1;
                out.push(Event::Signal {
                    t,
                    s: 0x0800_3000 + g,
                    g,
                });
            } else if r < 990 {
                let g = self.rng.below(8);
                if self.pending[g as usize] > 0 {
                    self.pending[g as usize] -= 1;
                    out.push(Event::Wait {
                        t,
                        s: 0x0800_3100 + g,
                        g,
                    });
                } else {
                    self.pending[g as usize] += 1;
                    out.push(Event::Signal {
                        t,
                        s: 0x0800_3000 + g,
                        g,
                    });
                }
            } else {
                let frames = &mut self.frames[t as usize];
                if frames.len() < 4 && (frames.is_empty() || self.rng.below(2) == 0) {
                    let s = 0x0800_4000 + self.rng.below(64);
                    frames.push(s);
                    out.push(Event::FrameEnter { t, s });
                } else {
                    let s = frames.pop().expect("non-empty");
                    out.push(Event::FrameExit { t, s });
                }
            }
        }
    }

    fn access(&mut self, t: u8, read: bool, out: &mut Vec<Event>) {
        let guard = self.held[t as usize]
            .last()
            .copied()
            .filter(|&l| l >= OUTER);
        let (a, guarded) = match guard {
            Some(g) if self.rng.below(10) < 9 => {
                // A location guarded by g: a % 12 == g - 4.
                let k = self.rng.below(LOCATIONS / 12);
                ((g - OUTER) + 12 * k, true)
            }
            _ => (self.rng.below(LOCATIONS), false),
        };
        let s = 0x0800_8000 + ((a % 125) * 4 + (!read as u32) * 2 + guarded as u32) * 2;
        let addr = 0x2000_0000 + a * 4;
        out.push(if read {
            Event::Read { t, s, a: addr }
        } else if self.rng.below(2) == 0 {
            Event::Write { t, s, a: addr }
        } else {
            Event::Update { t, s, a: addr }
        });
    }

    fn acquire(&mut self, t: u8, out: &mut Vec<Event>) {
        let held = &self.held[t as usize];
        let l = match held.len() {
            0 if self.rng.below(3) == 0 => self.rng.below(OUTER),
            0 => OUTER + self.rng.below(LOCKS - OUTER),
            1 if held[0] < OUTER => OUTER + self.rng.below(LOCKS - OUTER),
            _ => return self.release(t, out),
        };
        if self.holder[l as usize].is_some() {
            return self.release(t, out);
        }
        self.holder[l as usize] = Some(t);
        self.held[t as usize].push(l);
        out.push(Event::Acquire {
            t,
            s: 0x0800_2000 + l * 4,
            l: Self::lock_addr(l),
            c: l % 4,
        });
    }

    fn release(&mut self, t: u8, out: &mut Vec<Event>) {
        match self.held[t as usize].pop() {
            Some(l) => {
                self.holder[l as usize] = None;
                out.push(Event::Release {
                    t,
                    s: 0x0800_2400 + l * 4,
                    l: Self::lock_addr(l),
                });
            }
            None => self.access(t, true, out),
        }
    }
}

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn rss() -> String {
    vm_hwm_kib().map_or("n/a".into(), |kib| {
        format!("{:.1} MiB", kib as f64 / 1024.0)
    })
}

/// The two detectors behind one interface.
trait Detector {
    const NAME: &'static str;
    fn new() -> Self;
    fn feed(&mut self, events: &[Event]);
    fn finish(self) -> usize;
}

impl Detector for HybridDetector {
    const NAME: &'static str = "hybrid";
    fn new() -> Self {
        HybridDetector::new()
    }
    fn feed(&mut self, events: &[Event]) {
        HybridDetector::feed(self, events);
    }
    fn finish(self) -> usize {
        HybridDetector::finish(self).len()
    }
}

impl Detector for HbDetector {
    const NAME: &'static str = "happens-before";
    fn new() -> Self {
        HbDetector::new()
    }
    fn feed(&mut self, events: &[Event]) {
        HbDetector::feed(self, events);
    }
    fn finish(self) -> usize {
        HbDetector::finish(self).len()
    }
}

/// Streams `total` trace events through a new detector, timing only the detector. Returns
/// the detector time and the number of racing site pairs found.
fn run<D: Detector>(total: usize, buf: &mut Vec<Event>) -> (Duration, usize) {
    let mut generator = Gen::new(SEED);
    let mut det = D::new();
    let mut time = Duration::ZERO;
    let mut events = 0;
    while events < total {
        generator.fill(buf, CHUNK.min(total - events));
        let start = Instant::now();
        det.feed(buf);
        time += start.elapsed();
        events += buf.len();
    }
    (time, det.finish())
}

/// Times detector `D` over the trace with criterion, then prints its summary line.
fn throughput<D: Detector>(c: &mut Criterion, total: usize, buf: &mut Vec<Event>) {
    let mut group = c.benchmark_group("detect");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(total as u64));
    let mut rates = Vec::new();
    let mut pairs = 0;
    group.bench_function(D::NAME, |b| {
        b.iter_custom(|iters| {
            let mut time = Duration::ZERO;
            for _ in 0..iters {
                let (t, p) = run::<D>(total, buf);
                rates.push(total as f64 / t.as_secs_f64() / 1e6);
                pairs = p;
                time += t;
            }
            time
        });
    });
    group.finish();
    if rates.is_empty() {
        return; // filtered out on the command line
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "jostle-bench {}: {:.1} M events/s (median of {} runs over {total} events; min {:.1}, max {:.1}), {pairs} racing site pairs",
        D::NAME,
        rates[rates.len() / 2],
        rates.len(),
        rates[0],
        rates[rates.len() - 1],
    );
}

/// Feeds the trace to both detectors side by side, reporting their state and the peak RSS
/// after the first chunk and at the end: what grows with the trace, and what does not.
fn memory(total: usize, buf: &mut Vec<Event>) {
    let mut generator = Gen::new(SEED);
    let mut hybrid = HybridDetector::new();
    let mut hb = HbDetector::new();
    let mut events = 0;
    while events < total {
        generator.fill(buf, CHUNK.min(total - events));
        hybrid.feed(buf);
        hb.feed(buf);
        events += buf.len();
        if events == buf.len() || events >= total {
            println!(
                "jostle-bench state after {events} events: hybrid {:.1} MiB ({} summary entries), happens-before {:.1} MiB; peak RSS (VmHWM) {}",
                mib(hybrid.state_bytes()),
                hybrid.entry_count(),
                mib(hb.state_bytes()),
                rss(),
            );
        }
    }
    // Hybrid keys are (location, site, task, kind, lockset). Unguarded sites are accessed
    // under any lockset: {}, {outer}, {guard}, {outer, guard}; guarded ones only under
    // {guard}, {outer, guard} with the location's guard. Sites fix the kind.
    let guards = LOCKS - OUTER;
    let any = 1 + OUTER + guards + OUTER * guards;
    let bound = LOCATIONS * u32::from(TASKS) * (2 * any + 2 * (1 + OUTER));
    println!(
        "jostle-bench hybrid summary bound for this trace: {bound} entries ({LOCATIONS} locations x {TASKS} tasks x (2 unguarded sites x {any} locksets + 2 guarded sites x {} locksets)), whatever the trace length",
        1 + OUTER
    );
}

fn detect(c: &mut Criterion) {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: keep that run short.
    let bench = std::env::args().any(|a| a == "--bench");
    let total: usize = std::env::var("JOSTLE_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if bench { 10_000_000 } else { 100_000 });
    let mut buf = Vec::with_capacity(CHUNK + 16);
    println!(
        "jostle-bench trace: {total} events, {TASKS} tasks, {LOCATIONS} locations, {LOCKS} locks, 30% sync, seed {SEED:#x}"
    );
    // Memory first, so that the RSS figures are not the timing runs' peak.
    memory(total, &mut buf);
    throughput::<HybridDetector>(c, total, &mut buf);
    throughput::<HbDetector>(c, total, &mut buf);
    println!("jostle-bench peak RSS (VmHWM): {}", rss());
}

criterion_group!(benches, detect);
criterion_main!(benches);
