//! `jostle bench`: how fast defmt frames become typed events.

use jostle_host_tools::trace::elf::Firmware;
use jostle_host_tools::transport::qemu::Qemu;
use jostle_kernel::{Config, TraceLevel};
use std::time::{Duration, Instant};

/// Frames per second from raw defmt bytes to typed events (what Phase I pays per trace):
/// one full-trace QEMU stream, decoded again and again for about a second.
pub(crate) fn decode_throughput(
    fw: &Firmware,
    qemu: &Qemu,
    args: jostle_kernel::fixed::Vec<u32, { jostle_kernel::config::MAX_ARGS }>,
) -> anyhow::Result<()> {
    let config = Config {
        trace: TraceLevel::Full,
        args,
        ..Config::default()
    };
    let raw = qemu.run(fw, &config)?;
    let mut decoder = jostle_host_tools::trace::decode::FrameDecoder::new(&fw.table);
    let (mut frames, mut events, mut rounds) = (0usize, 0usize, 0u32);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(1) || rounds < 3 {
        let decoded = decoder.decode_all(&raw.frames);
        if let Some(e) = decoded.error {
            return Err(e.into());
        }
        frames += decoded.frames;
        events += decoded
            .items
            .iter()
            .filter(|i| matches!(i, jostle_host_tools::trace::decode::Item::Event(_)))
            .count();
        rounds += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "decode       defmt frames -> typed events: {:.0} frames/s (goal >= 2000000), {:.0} events/s, {:.1} MB/s ({} bytes x {rounds})",
        frames as f64 / secs,
        events as f64 / secs,
        (raw.frames.len() as f64 * f64::from(rounds)) / secs / 1e6,
        raw.frames.len()
    );
    Ok(())
}
