//! Every QEMU core a firmware ships on: the spine's firmware, the interrupt and atomics
//! examples' campaigns, float values live across switches and preemptions, and the same
//! decisions for the same seed on the Cortex-M0 (micro:bit), M3 (mps2-an385 and
//! lm3s6965evb), M4F (mps2-an386), M7 (mps2-an500) and M33 (mps2-an505), and on the host
//! port. Each core's firmware is the workspace's, built with the board's feature and the
//! core's target; the host picks QEMU's machine and CPU from the ELF's board descriptor.

use crate::common;

use common::*;
use jostle_host_tools::Outcome;
use jostle_host_tools::trace::decode::FrameDecoder;
use jostle_host_tools::trace::elf::Firmware;
use jostle_kernel::{Config, Event, TraceLevel, Verdict};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A QEMU core: its name, the board feature that builds for it, its target, and the machine
/// its ELF must name.
struct Core {
    name: &'static str,
    board: &'static str,
    target: &'static str,
    machine: &'static str,
    cpu: &'static str,
}

const CORES: &[Core] = &[
    Core {
        name: "M0",
        board: "microbit",
        target: "thumbv6m-none-eabi",
        machine: "microbit",
        cpu: "cortex-m0",
    },
    Core {
        name: "M3",
        board: "mps2-an385",
        target: "thumbv7m-none-eabi",
        machine: "mps2-an385",
        cpu: "cortex-m3",
    },
    Core {
        name: "M3 (lm3s6965evb)",
        board: "lm3s6965evb",
        target: "thumbv7m-none-eabi",
        machine: "lm3s6965evb",
        cpu: "cortex-m3",
    },
    Core {
        name: "M4F",
        board: "mps2-an386",
        target: "thumbv7em-none-eabihf",
        machine: "mps2-an386",
        cpu: "cortex-m4",
    },
    Core {
        name: "M7",
        board: "mps2-an500",
        target: "thumbv7em-none-eabihf",
        machine: "mps2-an500",
        cpu: "cortex-m7",
    },
    Core {
        name: "M33",
        board: "mps2-an505",
        target: "thumbv8m.main-none-eabihf",
        machine: "mps2-an505",
        cpu: "cortex-m33",
    },
];

/// The examples built for every core (the spine's, the interrupt and atomics examples).
const EXAMPLES: &[&str] = &[
    "rf_fig1",
    "rf_fig2",
    "abba_deadlock",
    "irq_counter",
    "irq_ringbuf",
    "irq_flag",
    "irq_nested",
    "irq_masked_ok",
    "atomic_check_then_act",
    "spsc_publish_order",
    "correct_counter",
];

/// The test firmware built for every core.
const TEST_FIRMWARE: &[&str] = &[
    "event_roundtrip",
    "float_live",
    "stack_overflow",
    "write_below_stack",
    "page_aligned_stacks",
    "handler_overflow",
];

/// Where the ELFs of `core` are kept (cargo's own output is per target, and the M4F and M7
/// share one).
fn core_dir(core: &Core) -> PathBuf {
    target_dir().join("cores").join(core.board)
}

/// Builds [`EXAMPLES`] and [`TEST_FIRMWARE`] for every core, once per test process, one core
/// after the other into one target directory (compiling in the shared build directory,
/// [`firmware_cargo`]: the M4F's and the M7's dependencies are shared), each core's ELFs
/// copied aside.
///
/// Without link-time optimisation: the release profile's fat LTO optimises the whole
/// firmware again for each ELF (about a second each, 102 ELFs here, most of these builds'
/// time); what these tests check is the core, not the profile (`profiles.rs` runs the
/// kernel under other profiles, its `release-no-lto` as this one, whose M3 dependencies
/// these builds share; every other QEMU build keeps the release profile).
fn built_for_cores() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = target_dir().join("cores");
        for core in CORES {
            let mut cmd = firmware_cargo(&workspace());
            cmd.env("CARGO_PROFILE_RELEASE_LTO", "false")
                .args(["build", "--release", "--target", core.target])
                .args(["-p", "jostle-examples", "-p", "jostle-test-firmware"])
                .arg("--no-default-features")
                .arg("--features")
                .arg(format!(
                    "jostle-examples/{b},jostle-test-firmware/{b}",
                    b = core.board
                ));
            for bin in EXAMPLES.iter().chain(TEST_FIRMWARE) {
                cmd.args(["--bin", bin]);
            }
            let status = cmd
                .arg("--target-dir")
                .arg(&dir)
                .status()
                .expect("cargo runs");
            assert!(status.success(), "building for the {}", core.name);
            let out = core_dir(core);
            std::fs::create_dir_all(&out).unwrap();
            for bin in EXAMPLES.iter().chain(TEST_FIRMWARE) {
                let from = dir.join(core.target).join("release").join(bin);
                std::fs::copy(&from, out.join(bin))
                    .unwrap_or_else(|e| panic!("{}: {e}", from.display()));
            }
        }
    });
}

/// The ELF of `bin` built for `core`.
fn core_elf(core: &Core, bin: &str) -> PathBuf {
    built_for_cores();
    core_dir(core).join(bin)
}

fn core_firmware(core: &Core, bin: &str) -> Firmware {
    let fw = Firmware::load(&core_elf(core, bin)).expect("firmware loads");
    // The host runs it on the core's machine, read from the ELF alone.
    let board = &fw.board;
    assert_eq!(board.name, core.board, "{} {bin}", core.name);
    assert_eq!(
        board.machine.as_deref(),
        Some(core.machine),
        "{} {bin}",
        core.name
    );
    assert_eq!(board.cpu.as_deref(), Some(core.cpu), "{} {bin}", core.name);
    assert_eq!(
        board.target.as_deref(),
        Some(core.target),
        "{} {bin}",
        core.name
    );
    fw
}

fn m3() -> &'static Core {
    &CORES[1]
}

#[test]
fn the_spine_holds_on_every_core() {
    for core in CORES {
        let what = core.name;
        // Same seed, same stream, byte for byte.
        let fw = core_firmware(core, "rf_fig2");
        for seed in [0, 7] {
            let a = qemu_for(&fw).run(&fw, &config(seed, &[5])).unwrap();
            let b = qemu_for(&fw).run(&fw, &config(seed, &[5])).unwrap();
            assert!(!a.frames.is_empty(), "{what}");
            assert_eq!(a.frames, b.frames, "{what} seed {seed}: streams differ");
        }
        // A deadlock, with both workers blocked on each other's lock.
        let fw = core_firmware(core, "abba_deadlock");
        let run = (0..200)
            .map(|seed| run_qemu(&fw, config(seed, &[])))
            .find(|r| r.outcome == Some(Outcome::Verdict(Verdict::Deadlock)))
            .unwrap_or_else(|| panic!("{what}: no deadlock within 200 seeds"));
        assert_eq!(run.exit_code, Some(12), "{what}");
        // A panic, at its source line, with its message.
        let fw = core_firmware(core, "rf_fig1");
        let run = (0..100)
            .map(|seed| run_qemu(&fw, config(seed, &[])))
            .find(|r| r.outcome == Some(Outcome::Verdict(Verdict::Panic)))
            .unwrap_or_else(|| panic!("{what}: ERROR1 unreached"));
        let panic = run.panic.clone().expect("panic report");
        let site = panic.site.expect("panic site");
        assert_eq!(site.file, "examples/src/bin/rf_fig1.rs", "{what}");
        assert_eq!(
            site.line,
            line_of("examples/src/bin/rf_fig1.rs", "panic!(\"ERROR1\")"),
            "{what}"
        );
        assert_eq!(panic.message.as_deref(), Some("ERROR1"), "{what}");
        assert_eq!(run.exit_code, Some(11), "{what}");
        // Every event kind round-trips through defmt.
        let fw = core_firmware(core, "event_roundtrip");
        let raw = qemu_for(&fw).run(&fw, &config(0, &[])).unwrap();
        let decoded = FrameDecoder::new(&fw.table).decode_all(&raw.frames);
        assert!(decoded.error.is_none(), "{what}: {:?}", decoded.error);
        let events = decoded.events();
        let samples: Vec<Event> = Event::samples().collect();
        assert!(
            events
                .windows(samples.len())
                .any(|w| w == samples.as_slice()),
            "{what}: the samples do not round-trip"
        );
        // A task's stack overflow is caught at its guard (MPU region, PSPLIM, or the canary
        // on the M0, which has no MPU).
        let run = run_qemu(&core_firmware(core, "stack_overflow"), config(0, &[]));
        assert_eq!(
            run.outcome,
            Some(Outcome::Verdict(Verdict::StackOverflow)),
            "{what}"
        );
        assert_eq!(run.exit_code, Some(14), "{what}");
        assert!(
            run.events.iter().any(|e| matches!(
                e,
                Event::StackOverflow {
                    t: 1,
                    size: 1024,
                    ..
                }
            )),
            "{what}: {:?}",
            run.events
        );
    }
}

#[test]
fn a_write_through_a_pointer_below_a_tasks_stack_is_its_stack_overflow_on_every_core() {
    // The task's stack pointer stays far above: ARMv8-M's PSPLIM alone does not see it; the
    // MPU region does (no access on ARMv7-M, read-only on ARMv8-M), and the canary on the M0
    // when the task ends.
    for core in CORES {
        let fw = core_firmware(core, "write_below_stack");
        // Bytes below the lowest address the stack may hold: the guard's highest and
        // lowest words; the writer with a region of its own (task 1), and after 16 tasks
        // (past QEMU's 8 or 16 regions: the shared region; 4 on the M0, whose table holds 8
        // tasks and which has no MPU).
        let later = if core.name == "M0" { 4 } else { 16 };
        for (below, earlier) in [(4, 0), (32, 0), (4, later), (32, later)] {
            let what = format!("{}, {below} bytes below, {earlier} tasks before", core.name);
            let run = run_qemu(&fw, config(0, &[below, earlier]));
            assert_eq!(
                run.outcome,
                Some(Outcome::Verdict(Verdict::StackOverflow)),
                "{what}: {:?}",
                run.events
            );
            assert_eq!(run.exit_code, Some(14), "{what}");
            assert!(
                run.events.iter().any(|e| matches!(
                    e,
                    Event::StackOverflow { t, size: 1024, .. } if *t == earlier as u8 + 1
                )),
                "{what}: {:?}",
                run.events
            );
        }
        // At the limit itself, the stack's own lowest word: no guard stands there.
        let run = run_qemu(&fw, config(0, &[0]));
        assert_eq!(
            run.outcome,
            Some(Outcome::Verdict(Verdict::Pass)),
            "{}: {:?}",
            core.name,
            run.events
        );
    }
}

#[test]
fn a_handler_overflowing_the_main_stack_is_its_stack_overflow_on_the_m33() {
    // ARMv8-M mainline's MSPLIM, at the main stack's bottom (above the fault handler's 1 KiB
    // reserve): the handler's recursion stops there, not in the statics below (without it
    // QEMU locked up: the run ended as a dead boot).
    let m33 = CORES.iter().find(|c| c.name == "M33").unwrap();
    let run = run_qemu(&core_firmware(m33, "handler_overflow"), config(0, &[]));
    assert_eq!(
        run.outcome,
        Some(Outcome::Verdict(Verdict::StackOverflow)),
        "{:?}",
        run.events
    );
    assert_eq!(run.exit_code, Some(14));
    let caught = run.events.iter().find_map(|e| match *e {
        Event::StackOverflow { t, depth, size } => Some((t, depth, size)),
        _ => None,
    });
    let (t, depth, size) = caught.expect("a StackOverflow event");
    // The handler of source 0; the mps2-an505's main stack is most of its 4 MiB of RAM; the
    // overflow was caught at the limit.
    assert_eq!(t, jostle_kernel::event::IRQ_CONTEXT);
    assert!(size > 4_000_000, "{size}");
    assert!(
        depth <= size - 1024 && depth + 1024 + 256 >= size,
        "{depth} of {size}"
    );
    let line = run.verdict_line();
    assert!(
        line.contains("the handler of interrupt source 0 overflowed the"),
        "{line}"
    );
}

/// Tasks whose stacks start a 1 KiB page: QEMU checks a semihosting call's memory against
/// the MPU by the page's first address, so while a no-access guard (PMSAv7) is up its page
/// is unreadable to the call, and the logger lost every frame written on such a stack (CCT
/// `twostage`: 8 of 24 task events) until the board lifted the guard around its writes; a
/// read-only guard (PMSAv8) lets the call read. On every core, every event, the panic's
/// site and message included, must reach the host as on the host port.
#[test]
fn frames_written_on_a_stack_whose_guard_starts_a_page_all_reach_the_host_on_every_core() {
    const FW: &str = "page_aligned_stacks";
    let host = host_test_exe(FW);
    for core in CORES {
        let fw = core_firmware(core, FW);
        for (seed, arg) in [(0, 0), (1, 0), (2, 1), (3, 1)] {
            let c = Config {
                trace: TraceLevel::Full,
                ..config(seed, &[arg])
            };
            let q = run_qemu(&fw, c.clone());
            let h = run_host_exe(&host, c);
            let what = format!("{}, seed {seed}, arg {arg}", core.name);
            assert_eq!(q.events.len(), h.events.len(), "{what}: {:?}", q.events);
            assert_same_decisions(&q, &h, &what);
            let message = |r: &jostle_host_tools::RunOutcome| {
                r.panic.as_ref().and_then(|p| p.message.clone())
            };
            assert_eq!(message(&q), message(&h), "{what}");
            assert_eq!(message(&q).is_some(), arg == 1, "{what}");
            assert_eq!(
                q.panic.as_ref().map(|p| p.site.is_some()),
                h.panic.as_ref().map(|p| p.site.is_some()),
                "{what}"
            );
        }
    }
}

#[test]
fn the_same_seed_makes_the_same_decisions_on_every_core_and_the_host_port() {
    use jostle_kernel::config::StrategyId;
    for &bin in CROSS_PORT_EXAMPLES.iter().filter(|b| EXAMPLES.contains(b)) {
        let host = host_exe(bin);
        for strategy in [StrategyId::Random, StrategyId::Pct] {
            for seed in 0..4 {
                let c = Config {
                    strategy,
                    ..config(seed, &[3])
                };
                let h = run_host_exe(&host, c.clone());
                for core in CORES {
                    let q = run_qemu(&core_firmware(core, bin), c.clone());
                    let what =
                        format!("{bin} {} seed {seed} on the {}", strategy.name(), core.name);
                    assert_same_decisions(&q, &h, &what);
                }
            }
        }
    }
}

#[test]
fn float_values_stay_exact_across_switches_and_preemptions_on_every_core() {
    // Without an FPU (the M0, the M3, the host port) the same program: the same decisions;
    // with one, the float registers' own checks are scheduling points too, the same on the
    // M4F, M7 and M33.
    let host = host_test_exe("float_live");
    let mut decisions: std::collections::HashMap<(bool, u64), Vec<_>> = Default::default();
    for seed in 0..12 {
        decisions.insert(
            (false, seed),
            run_host_exe(&host, config(seed, &[])).decisions(),
        );
    }
    for core in CORES {
        let fw = core_firmware(core, "float_live");
        let fpu = core.target.ends_with("eabihf");
        let (mut switches, mut nested) = (0, 0);
        for seed in 0..12 {
            let run = run_qemu(&fw, config(seed, &[]));
            let same = decisions
                .entry((fpu, seed))
                .or_insert_with(|| run.decisions());
            assert_eq!(&run.decisions(), same, "{} seed {seed}", core.name);
            assert_eq!(
                run.outcome,
                Some(Outcome::Verdict(Verdict::Pass)),
                "{} seed {seed}: {:?}",
                core.name,
                run.panic
            );
            let tasks: Vec<u8> = run.decisions().iter().map(|d| d.0).collect();
            switches += tasks.windows(2).filter(|w| w[0] != w[1]).count();
            // A handler entered while another was running (`by` is who was interrupted).
            nested += run
                .events
                .iter()
                .filter(|e| matches!(e, Event::IrqEnter { by, .. } if *by >= 0x80))
                .count();
        }
        // The runs did switch between tasks and did nest handlers.
        assert!(switches > 12, "{}: {switches} switches", core.name);
        assert!(nested > 0, "{}: no nested handler", core.name);
    }
}

/// The campaign of `elf` in a fresh directory: its exit code, the kinds of bug it confirmed
/// and the verdicts of its failures. (Not the exact candidates confirmed: a candidate's id,
/// which seeds its confirmation runs, hashes its sites' addresses, which differ per core, so
/// a candidate confirmed in 3 runs of 20 on one core may be missed on another.)
fn campaign(elf: &Path) -> (Option<i32>, BTreeSet<String>, BTreeSet<String>) {
    let dir = tempfile::tempdir().unwrap();
    let out = jostle_in(
        dir.path(),
        &[
            "campaign",
            elf.to_str().unwrap(),
            "-j",
            "2",
            "--runs-per-candidate",
            "20",
        ],
    );
    let r = report(&dir.path().join("jostle-report"));
    let confirmed = bugs(&r)
        .iter()
        .filter(|b| b["confirmed"].as_u64().unwrap() > 0)
        .map(|b| b["kind"].to_string())
        .collect();
    let failed = failures(&r)
        .iter()
        .map(|f| f["verdict"].to_string())
        .collect();
    (out.status.code(), confirmed, failed)
}

#[test]
fn interrupt_and_atomics_campaigns_find_on_every_core_what_they_find_on_the_m3() {
    // (example, does it have a bug): a bug fails the campaign (exit 40); the clean ones
    // stay clean.
    let cases = [
        ("irq_counter", true),
        ("irq_ringbuf", true),
        ("irq_flag", true),
        ("irq_nested", true),
        ("irq_masked_ok", false),
        ("atomic_check_then_act", true),
        ("spsc_publish_order", true),
        ("correct_counter", false),
    ];
    for (example, buggy) in cases {
        let (code, bugs, failed) = campaign(&core_elf(m3(), example));
        assert_eq!(
            code,
            Some(if buggy { 40 } else { 0 }),
            "{example} on the M3"
        );
        assert_eq!(!failed.is_empty(), buggy, "{example} on the M3");
        for core in CORES.iter().filter(|c| c.name != "M3") {
            let what = format!("{example} on the {}", core.name);
            let (c, b, f) = campaign(&core_elf(core, example));
            assert_eq!(c, code, "{what}");
            assert_eq!(f, failed, "{what}: failures differ from the M3's");
            assert_eq!(b, bugs, "{what}: confirmed kinds differ from the M3's");
        }
    }
}

/// The 1-based line of `needle` in the template's program.
fn template_line(needle: &str) -> usize {
    let src = std::fs::read_to_string(workspace().join("templates/firmware/src/main.rs")).unwrap();
    src.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn a_new_project_switched_to_each_core_by_feature_and_target_gets_the_m3s_verdict() {
    // As a user would: `jostle new` outside the workspace, then the board's feature on the
    // `jostle` dependency and the core's target in .cargo/config.toml, `cargo run`.
    let tmp = outside_dir("jostle-cores-");
    let project = tmp.path().join("sensor-fw");
    let out = jostle_in(
        tmp.path(),
        &["new", "sensor_fw", "--path", project.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    let config = std::fs::read_to_string(project.join(".cargo/config.toml")).unwrap();
    let read = format!("src/main.rs:{}:", template_line("READING.read()"));
    let write = format!("src/main.rs:{}:", template_line("READING.write("));
    let mut on_m3 = None;
    // The M3 first: the verdict the others must match.
    let order = std::iter::once(m3()).chain(CORES.iter().filter(|c| c.name != "M3"));
    for core in order {
        let what = core.name;
        let dependency = manifest
            .lines()
            .find(|l| l.starts_with("jostle = {"))
            .expect("the jostle dependency");
        let switched = dependency.trim_end_matches('}').trim_end().to_owned()
            + &format!(
                ", default-features = false, features = [\"{}\"] }}",
                core.board
            );
        std::fs::write(
            project.join("Cargo.toml"),
            manifest.replace(dependency, &switched),
        )
        .unwrap();
        let target_line = "target = \"thumbv7m-none-eabi\"";
        assert!(config.contains(target_line), "{config}");
        std::fs::write(
            project.join(".cargo/config.toml"),
            config.replace(target_line, &format!("target = \"{}\"", core.target)),
        )
        .unwrap();
        let run = user_cargo(
            &project,
            &["run", "--release", "--", "--budget", "300", "-j", "2"],
            &[],
        );
        let elf = project
            .join("target")
            .join(core.target)
            .join("release/sensor_fw");
        let fw = Firmware::load(&elf).expect("the project's ELF");
        assert_eq!(fw.board.machine.as_deref(), Some(core.machine), "{what}");
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(
            stdout.contains(&read) && stdout.contains(&write),
            "{what}: {}",
            text(&run)
        );
        let r = report(&project.join("jostle-report"));
        let confirmed: BTreeSet<String> = bugs(&r)
            .iter()
            .filter(|b| b["confirmed"].as_u64().unwrap() > 0)
            .map(|b| format!("{} {}", b["kind"], b["status"]))
            .collect();
        let verdict = (run.status.code(), confirmed);
        match &on_m3 {
            None => {
                assert_eq!(verdict.0, Some(40), "{what}: {}", text(&run));
                on_m3 = Some(verdict);
            }
            Some(m3) => assert_eq!(&verdict, m3, "{what}: {}", text(&run)),
        }
    }
}
