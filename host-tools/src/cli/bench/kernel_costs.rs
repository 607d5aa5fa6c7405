//! `jostle bench`: the kernel's instruction costs per scheduling point and per switch.

use super::BenchArgs;
use anyhow::Context;
use jostle_host_tools::RunOutcome;
use jostle_host_tools::transport::qemu::Qemu;
use jostle_kernel::config::StrategyId;
use jostle_kernel::{Config, TraceLevel};

/// Instructions per scheduling point and per switch under each strategy, from the
/// `sched_cost` test firmware: SysTick under `-icount` counts instructions; a known
/// two-instruction loop calibrates it. Active strategies get breakpoints at a site that no
/// measured site matches, not even in the targets' one-word filter, so this is their
/// non-breakpoint path. (A site that shares the filter's bit with a breakpoint takes the
/// general path: with the breakpoints at such a site, a race access measured 1,085.)
/// Returns the yield point's cost under Random (a task point, for [`poll_cost`]'s row).
pub(crate) fn kernel_costs(args: &BenchArgs) -> anyhow::Result<f64> {
    use jostle_kernel::config::Breakpoint;
    use jostle_kernel::targets::{aux, filter_bit, role};
    let fw = super::measuring_firmware(args, "sched_cost")?;
    // The firmware's sites, from one full-trace run; the first site whose filter bit none
    // of them has.
    let full = Config {
        trace: TraceLevel::Full,
        ..Config::default()
    };
    let seen = run_checked(&fw, full)?;
    let used = seen
        .events
        .iter()
        .filter_map(|e| e.site())
        .fold(0u32, |bits, s| bits | filter_bit(s));
    let site = (1..=1024u32)
        .find(|&s| used & filter_bit(s) == 0)
        .context("sched_cost's sites fill the targets' filter: no site is elsewhere")?;
    let elsewhere = |r: u8, i: u8| Breakpoint {
        site,
        aux: aux(r, i),
    };
    let strategies = [
        (StrategyId::Random, vec![], [0; 4]),
        (
            StrategyId::Race,
            vec![elsewhere(role::RACE, 0), elsewhere(role::RACE, 1)],
            [0; 4],
        ),
        (
            StrategyId::Atom,
            vec![],
            [jostle_kernel::strategy::Q_ONE / 2, 0, 0, 0],
        ),
        (
            StrategyId::Deadlock,
            vec![elsewhere(role::ACQUIRE, 0), elsewhere(role::CONTEXT, 0)],
            [0; 4],
        ),
        (StrategyId::Pct, vec![], [3, 10_000, 0, 0]),
    ];
    println!(
        "kernel cost  (instructions, trace=results, -icount shift=0; non-breakpoint sites; goal: point <= 50, switch <= 120)"
    );
    let mut task_point = 0.0;
    for (strategy, bps, params) in strategies {
        let config = Config {
            trace: TraceLevel::Results,
            strategy,
            params,
            breakpoints: jostle_kernel::fixed::Vec::from_slice(&bps).unwrap_or_default(),
            ..Config::default()
        };
        let c = costs(&fw, config)?;
        if strategy == StrategyId::Random {
            task_point = c.point;
        }
        println!(
            "kernel cost  {:<9} yield point {:>6.1}  access (not a breakpoint) {:>6.1}  two tasks: mean point {:>6.1}, point that stays {}, point with switch {}  lone task watched for starvation: yield {:>6.1}  ({:.0} instr/tick)",
            jostle_host_tools::engine::targeting::strategy_name(strategy),
            c.point,
            c.access,
            c.mean_point,
            shown(c.stays),
            shown(c.switch),
            c.solo,
            c.per_tick,
        );
    }
    Ok(task_point)
}

/// The cores `jostle bench --only kernel` measures: the core, its QEMU board (the feature
/// that builds for it) and its target.
const CORES: &[(&str, &str, &str)] = &[
    ("M0", "microbit", "thumbv6m-none-eabi"),
    ("M3", "mps2-an385", "thumbv7m-none-eabi"),
    ("M4F", "mps2-an386", "thumbv7em-none-eabihf"),
    ("M33", "mps2-an505", "thumbv8m.main-none-eabihf"),
];

/// The kernel's costs on every core of [`CORES`] (Random, the `sched_cost` firmware built for
/// the core's board), and its flash and RAM there (`correct_counter`).
pub(crate) fn core_costs(args: &BenchArgs) -> anyhow::Result<()> {
    println!(
        "core cost    (instructions, Random, trace=results; goal: point <= 50, switch <= 120; with an FPU a switch keeps s16-s31 and FPSCR too)"
    );
    for &(core, board, target) in CORES {
        let dir = args.firmware.target_dir.as_ref().map(|d| d.join("cores"));
        let build = |package: &str, bin: &str| {
            jostle_host_tools::transport::build::cargo_build_board(
                package,
                bin,
                board,
                target,
                dir.as_deref(),
            )
            .with_context(|| {
                format!("{core} ({board}): the kernel rows need the Jostle workspace ({package})")
            })
        };
        let fw = jostle_host_tools::transport::load_firmware(&build(
            "jostle-test-firmware",
            "sched_cost",
        )?)?;
        let config = Config {
            trace: TraceLevel::Results,
            ..Config::default()
        };
        let c = costs(&fw, config)?;
        println!(
            "core cost    {core:<4} {board:<11} {target:<26} yield point {:>6.1}  access {:>6.1}  point that stays {}  point with switch {}",
            c.point,
            c.access,
            shown(c.stays),
            shown(c.switch),
        );
        let footprint = build("jostle-examples", "correct_counter")?;
        super::footprint::footprint(&footprint, &format!("{core:<4} {board:<11}"))?;
    }
    println!(
        "core cost    why the M0's points cost more: the same Rust as ARMv6-M (Thumb-1) code (8 low registers, spills; no conditional execution, no clz/rbit) and, without an MPU on the micro:bit, a canary check at each switch; per function: scripts/point-trace, kernel/README.md"
    );
    Ok(())
}

/// What `sched_cost` measured in one run, in instructions.
struct Costs {
    /// A lone task's yield point.
    point: f64,
    /// An access at a site no breakpoint names.
    access: f64,
    /// A point of the two-task ping-pong, on average.
    mean_point: f64,
    /// A point of the ping-pong that drew and stayed, and one that switched (`None`: too
    /// few to say).
    stays: Option<f64>,
    switch: Option<f64>,
    /// A lone task's yield while the starvation watch is on.
    solo: f64,
    /// Instructions per SysTick tick (the calibration).
    per_tick: f64,
}

/// A figure, or `-` when there is none.
fn shown(v: Option<f64>) -> String {
    match v {
        Some(v) => format!("{v:>6.1}"),
        None => format!("{:>6}", "-"),
    }
}

/// Runs `sched_cost` (`fw`) under `config` and reads its figures.
fn costs(fw: &jostle_host_tools::trace::elf::Firmware, config: Config) -> anyhow::Result<Costs> {
    let outcome = run_checked(fw, config)?;
    let field = |line: &str, name: &str| super::fields(line, name).next();
    let find = |prefix: &str| {
        outcome
            .logs
            .iter()
            .find(|l| l.starts_with(prefix))
            .cloned()
            .with_context(|| format!("sched_cost printed no `{prefix}` line"))
    };
    let cal = find("cost calibration")?;
    let per_tick = field(&cal, "instructions").unwrap_or(0.0) / field(&cal, "ticks").unwrap_or(1.0);
    let per_point = |line: &str| {
        field(line, "ticks").unwrap_or(0.0) * per_tick / field(line, "points").unwrap_or(1.0)
    };
    let ping = find("cost pingpong")?;
    // Each point of a second ping-pong timed on its own (the timing's cost taken off): a
    // point that switched, its draw included, and one that drew but stayed.
    let split = find("cost split")?;
    let overhead = field(&split, "overhead_ticks").unwrap_or(0.0)
        / field(&split, "overhead_points").unwrap_or(1.0);
    let per = |kind: &str| {
        let points = field(&split, kind).unwrap_or(0.0);
        let ticks = field(&split, &format!("{kind}_ticks")).unwrap_or(0.0);
        // PCT runs the higher-priority task until it yields: it may never stay.
        (points >= 10.0).then(|| (ticks / points - overhead) * per_tick)
    };
    Ok(Costs {
        point: per_point(&find("cost point")?),
        access: per_point(&find("cost access")?),
        mean_point: per_point(&ping),
        stays: per("stayed"),
        switch: per("switched"),
        solo: per_point(&find("cost solo")?),
        per_tick,
    })
}

/// One run of `fw` on QEMU under `config`; an error if the stream had one.
fn run_checked(
    fw: &jostle_host_tools::trace::elf::Firmware,
    config: Config,
) -> anyhow::Result<RunOutcome> {
    let raw = Qemu::for_board(&fw.board)?.run(fw, &config)?;
    let outcome = RunOutcome::from_qemu(fw, config, raw);
    match outcome.error {
        Some(e) => Err(e.into()),
        None => Ok(outcome),
    }
}

/// Builds measuring app `bin` of the project `examples/<project>` (package `package`), runs
/// it once on QEMU at the results level and returns the run with the instructions per
/// SysTick tick its `cost calibration` line gives.
fn measuring_app(
    args: &BenchArgs,
    project: &str,
    package: &str,
    bin: &str,
) -> anyhow::Result<(RunOutcome, f64)> {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("host-tools lives in the checkout")?
        .join("examples")
        .join(project)
        .join("Cargo.toml");
    let target_dir = args.firmware.target_dir.as_ref().map(|d| d.join(project));
    let path = jostle_host_tools::transport::build::cargo_build_project(
        &manifest,
        package,
        bin,
        Some(jostle_host_tools::transport::build::QEMU_TARGET),
        target_dir.as_deref(),
    )
    .with_context(|| format!("{bin}: the row needs the Jostle checkout (examples/{project})"))?;
    let fw = jostle_host_tools::transport::load_firmware(&path)?;
    let outcome = run_checked(
        &fw,
        Config {
            trace: TraceLevel::Results,
            ..Config::default()
        },
    )?;
    let cal = outcome
        .logs
        .iter()
        .find(|l| l.starts_with("cost calibration"))
        .with_context(|| format!("{bin} printed no calibration"))?;
    let field = |name: &str| super::fields(cal, name).next().unwrap_or(0.0);
    let per_tick = field("instructions") / field("ticks").max(1.0);
    Ok((outcome, per_tick))
}

/// Instructions per lock and per dispatched poll of an RTIC app (Jostle's `rtic`): the
/// `cost` app of `examples/rtic` locks an uncontended resource `N` times (the lock and the
/// unlock, each a scheduling point, and the section's read and write of the resource), then
/// yields `N` times (each a wake, the dispatcher's pend and firing, and the task's poll).
/// Printed beside a task's yield point (`task_point`, Random).
pub(crate) fn rtic_cost(args: &BenchArgs, task_point: f64) -> anyhow::Result<()> {
    let (outcome, per_tick) = measuring_app(args, "rtic", "jostle-rtic-examples", "cost")?;
    let field = |line: &str, name: &str| super::fields(line, name).next().unwrap_or(0.0);
    let per = |kind: &str, count: &str| {
        outcome
            .logs
            .iter()
            .find(|l| l.starts_with(&format!("cost {kind}")))
            .map(|l| field(l, "ticks") * per_tick / field(l, count).max(1.0))
            .with_context(|| format!("cost printed no {kind} line"))
    };
    println!(
        "rtic lock     {:>7.1} instructions per lock (ceiling raised and restored: two scheduling points, the section's read and write of the resource) beside a task's yield point {task_point:>6.1}",
        per("lock", "locks")?
    );
    println!(
        "rtic poll     {:>7.1} instructions per dispatched poll (a self-wake: the dispatcher pended, fired, the task polled) beside a task's yield point {task_point:>6.1}",
        per("poll", "polls")?
    );
    Ok(())
}

/// Instructions per poll step of an Embassy task (Jostle's `embassy-executor`): the
/// `poll_cost` app of `examples/embassy` yields `N` times in one task, then in two tasks
/// taking turns; SysTick under `-icount`, calibrated as `sched_cost` is. Printed beside a
/// task's yield point (`task_point`, Random).
pub(crate) fn poll_cost(args: &BenchArgs, task_point: f64) -> anyhow::Result<()> {
    let (outcome, per_tick) =
        measuring_app(args, "embassy", "jostle-embassy-examples", "poll_cost")?;
    let field = |line: &str, name: &str| super::fields(line, name).next().unwrap_or(0.0);
    for line in outcome.logs.iter().filter(|l| l.starts_with("cost poll")) {
        let per_poll = field(line, "ticks") * per_tick / field(line, "polls").max(1.0);
        println!(
            "embassy poll  {} task{}: {per_poll:>7.1} instructions per poll step (acquire, poll with its self-wake, release) beside a task's yield point {task_point:>6.1}; goal: poll step <= 1000",
            field(line, "tasks"),
            if field(line, "tasks") > 1.0 {
                "s taking turns"
            } else {
                ""
            },
        );
    }
    Ok(())
}
