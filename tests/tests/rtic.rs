//! RTIC apps under Jostle, their source unchanged (`examples/rtic`, a project of its own
//! with `shims/rtic` and `shims/portable-atomic` patched in): the clean apps pass every
//! campaign; each buggy app's campaign finds its bug, names the lanes after RTIC's tasks (a
//! hardware task after its function, not its interrupt; `--fire` takes either name) and
//! the lock events after its resources, and the `jostle replay` commands it prints (the
//! failing run's, and its shrunk schedule's) reproduce it; a finding whose run fired
//! hardware tasks inside handlers shrinks to a shorter run; an RTIC app written outside the workspace builds with only the documented
//! Cargo lines and its campaign finds the lost wake-up it hides; `jostle new --rtic` writes
//! an app whose campaign finds its bug.

use crate::common;

use common::*;
use std::path::Path;
use std::time::Instant;

/// The apps without a bug.
const CLEAN: [&str; 10] = [
    "arbiter_bus",
    "channel_pipeline",
    "hw_sw_shared",
    "idle_worker",
    "local_debounce",
    "lock_free_flags",
    "monotonic_timeout",
    "nested_locks",
    "sensor_fusion",
    "spawn_args",
];

/// A buggy app and what its campaign must show.
struct Buggy {
    app: &'static str,
    /// The failing run's verdict.
    verdict: &'static str,
    /// Words of the finding's message.
    words: &'static str,
    /// Where it points: a file (of the app, or of the crate the bug is in) and the text of
    /// the line (`None`: the file only, for a crate of crates.io whose lines we do not hold).
    file: &'static str,
    line: Option<&'static str>,
    /// A lane of the replay: an RTIC task, by its function's name.
    task: &'static str,
    /// A resource the replay's lock events name (the `#[shared]` field), if the app has one.
    resource: Option<&'static str>,
    /// Its hardware task (`binds = IRQ`), by its function's name, and the interrupt it
    /// binds, which names no lane.
    hardware: (&'static str, &'static str),
}

const BUGGY: [Buggy; 4] = [
    Buggy {
        app: "split_lock",
        verdict: "panic",
        words: "a pulse was lost",
        file: "src/bin/split_lock.rs",
        line: Some("assert_eq!(reported + pending, generated"),
        task: "logger",
        resource: Some("count"),
        hardware: ("pulse", "GPIOA"),
    },
    Buggy {
        app: "priority_assumption",
        verdict: "panic",
        words: "an event was lost",
        file: "src/bin/priority_assumption.rs",
        line: Some("assert_eq!(events, 6 + watchdog"),
        task: "rx",
        resource: None,
        hardware: ("watchdog", "GPIOE"),
    },
    Buggy {
        app: "lost_wake_timeout",
        verdict: "panic",
        words: "its wake-up was lost",
        file: "src/bin/lost_wake_timeout.rs",
        line: Some("assert!("),
        task: "reader",
        resource: None,
        hardware: ("conversion_done", "ADC0_SEQUENCE_0"),
    },
    Buggy {
        app: "channel_steal",
        verdict: "panic",
        words: "!self.0.access(cs).freeq.is_empty()",
        file: "rtic-sync-1.3.0/src/channel.rs",
        line: None,
        task: "status",
        resource: None,
        hardware: ("fault", "GPIOB"),
    },
];

/// Runs of each campaign: Phase I, the candidates' runs, then search (each app's bug shows
/// in a few runs of 300; a clean app's campaign is a second or two, `idle_worker`'s idle
/// watchdog periods make it the longest).
const BUDGET: &str = "300";

/// The target directory the projects written outside the workspace share (their
/// dependencies are the same: built once).
fn outside_target() -> std::path::PathBuf {
    target_dir().join("rtic-outside")
}

fn campaign(app: &str, dir: &Path) -> std::process::Output {
    app_campaign(dir, &rtic_example(app), BUDGET)
}

#[test]
fn clean_rtic_apps_pass_their_campaigns() {
    assert_clean_campaigns(&CLEAN, rtic_example, BUDGET);
}

/// The `jostle replay …` command a campaign printed for finding `id`, run as it is (with
/// the `jostle` these tests built) in `dir`.
fn printed_replay(stdout: &str, id: &str, dir: &Path) -> std::process::Output {
    run_printed(stdout, "replay: ", id, dir)
}

/// The `jostle replay … --shrunk` command a campaign printed for finding `id` (its
/// shortest schedule), run as it is in `dir`.
fn printed_shrunk_replay(stdout: &str, id: &str, dir: &Path) -> std::process::Output {
    run_printed(stdout, "replay shortest: ", id, dir)
}

/// The command on the line of `stdout` that starts with `label` and names `id`, run in
/// `dir`.
fn run_printed(stdout: &str, label: &str, id: &str, dir: &Path) -> std::process::Output {
    let command = stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix(label))
        .find(|c| c.contains(id))
        .unwrap_or_else(|| panic!("no `{label}` command for {id}: {stdout}"));
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "jostle", "{command}");
    jostle_in(dir, &words[1..])
}

#[test]
fn buggy_rtic_apps_are_found_named_and_replayed() {
    for b in BUGGY {
        let app = b.app;
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let out = campaign(app, dir.path());
        assert_eq!(out.status.code(), Some(40), "{app}: {}", text(&out));
        let r = report(&dir.path().join("jostle-report"));
        let found = failures(&r);
        let f = found
            .iter()
            .find(|f| f["verdict"] == b.verdict)
            .unwrap_or_else(|| panic!("{app}: no {}: {r:#}", b.verdict));
        assert!(
            f["example"].as_str().unwrap().contains(b.words),
            "{app}: {f:#}"
        );
        let at = match b.line {
            Some(line) => format!(
                "{}:{}:",
                b.file,
                line_of(&format!("examples/rtic/{}", b.file), line)
            ),
            None => format!("{}:", b.file),
        };
        assert!(
            f["site"].as_str().unwrap().contains(&at),
            "{app}: {at} in {f:#}"
        );
        let id = f["id"].as_str().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        // The printed replay (`label`: the failing run's, or its shrunk schedule's) gives
        // the same finding; its text.
        let reproduced = |label: &str| {
            let replay = run_printed(&stdout, label, id, dir.path());
            let shown = String::from_utf8_lossy(&replay.stdout).into_owned();
            assert!(
                shown.contains(&format!("reproduced: {} {id}", b.verdict)),
                "{app} ({label}): {}",
                text(&replay)
            );
            shown
        };
        let shown = reproduced("replay: ");
        // Its shrunk interleaving: no longer than the failing run, and it replays to the
        // same finding (firings inside handlers included).
        let shrunk = &f["shrunk"];
        assert!(shrunk["replay"].is_object(), "{app}: not shrunk: {f:#}");
        assert!(
            shrunk["steps"].as_u64() <= shrunk["original_steps"].as_u64(),
            "{app}: {shrunk:#}"
        );
        let shrunk_shown = reproduced("replay shortest: ");
        // The hardware task whose firing the shrunk run keeps is a lane named after its
        // function, in the replay and in the report, never after its interrupt.
        let (task, irq) = b.hardware;
        let lanes: Vec<&str> = shrunk_shown
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1))
            .collect();
        assert!(
            lanes.contains(&task),
            "{app}: no lane {task}: {shrunk_shown}"
        );
        assert!(!lanes.contains(&irq), "{app}: a lane {irq}: {shrunk_shown}");
        assert!(
            !r.to_string().contains(&format!("\"task_name\":\"{irq}\"")),
            "{app}: a lane {irq} in the report"
        );
        // The lanes are RTIC's tasks, by the names of their functions.
        assert!(
            shown
                .lines()
                .any(|l| l.split_whitespace().nth(1) == Some(b.task)),
            "{app}: no step of {}: {shown}",
            b.task
        );
        // Lock events name the resource by its field, not the expansion's static.
        if let Some(resource) = b.resource {
            assert!(
                shown
                    .lines()
                    .any(|l| l.contains(&format!("prio-mask {resource} "))),
                "{app}: no lock of {resource}: {shown}"
            );
            assert!(!shown.contains("__rtic_internal"), "{app}: {shown}");
        }
        eprintln!(
            "{app}: campaign {:.1} s, runs {}, {} {}",
            started.elapsed().as_secs_f64(),
            r["runs"],
            b.verdict,
            f["example"]
        );
    }
}

/// A finding whose run has firings inside handlers shrinks like any other: `split_lock`'s
/// pulse task (the `GPIOA` interrupt) fires up to four times a run, nested in the logger's
/// polls; the lost pulse needs one firing between the logger's two lock sections, so the
/// shrunk schedule is shorter than the failing run (fewer entries, fewer steps) and its
/// printed replay gives the same panic.
#[test]
fn a_finding_with_firings_inside_handlers_shrinks_to_a_shorter_run_that_replays() {
    let dir = tempfile::tempdir().unwrap();
    let elf = rtic_example("split_lock");
    let out = jostle_in(
        dir.path(),
        &[
            "campaign",
            elf.to_str().unwrap(),
            "--budget",
            BUDGET,
            "-j",
            "2",
            "--fire",
            "GPIOA=4",
        ],
    );
    assert_eq!(out.status.code(), Some(40), "{}", text(&out));
    let r = report(&dir.path().join("jostle-report"));
    let found = failures(&r);
    let f = found
        .iter()
        .find(|f| f["verdict"] == "panic")
        .unwrap_or_else(|| panic!("no panic: {r:#}"));
    let id = f["id"].as_str().unwrap();
    let s = &f["shrunk"];
    assert!(s["replay"].is_object(), "not shrunk: {f:#}");
    let n = |k: &str| s[k].as_u64().unwrap();
    let entries = shrunk_entries(s);
    // The failing run fired the pulse more than once inside the logger's polls; the
    // shrunk one needs one firing there.
    assert!(n("original_entries") > 1, "{s:#}");
    assert!(entries < n("original_entries"), "{s:#}");
    assert!(n("steps") < n("original_steps"), "{s:#}");
    // The report's timelines (those of the confirmed triples on `count`) name the
    // hardware task after its function.
    let report_text = r.to_string();
    assert!(
        report_text.contains("\"task_name\":\"pulse\"")
            && !report_text.contains("\"task_name\":\"GPIOA\""),
        "pulse / GPIOA in the report's lanes: {r:#}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let replay = printed_shrunk_replay(&stdout, id, dir.path());
    let shown = String::from_utf8_lossy(&replay.stdout);
    assert!(
        shown.contains(&format!("reproduced: panic {id}"))
            && shown.contains(&format!("after {} steps", n("steps"))),
        "{}",
        text(&replay)
    );
    eprintln!(
        "split_lock --fire GPIOA=4: failing run {} steps, {} entries; shrunk {} steps, schedule {}",
        n("original_steps"),
        n("original_entries"),
        n("steps"),
        s["schedule"]
    );
}

/// An app written as RTIC's book writes them, outside this workspace: a reader task starts
/// an ADC conversion and waits for it; the conversion-done interrupt wakes whoever waits
/// once the converter was armed. The reader registers its waker, then arms the converter,
/// in two critical sections: an interrupt of an earlier conversion that lands between them
/// takes the waker and, the converter not armed yet, drops it. The reader then waits for a
/// wake-up nothing can send.
const USER_APP: &str = r#"#![no_std]
#![no_main]

use core::cell::{Cell, RefCell};
use core::future::poll_fn;
use core::task::{Poll, Waker};
use critical_section::Mutex;
use panic_semihosting as _;

static ARMED: Mutex<Cell<bool>> = Mutex::new(Cell::new(false));
static SAMPLE: Mutex<Cell<Option<u16>>> = Mutex::new(Cell::new(None));
static WAITING: Mutex<RefCell<Option<Waker>>> = Mutex::new(RefCell::new(None));

/// Starts a conversion and waits for its sample.
async fn convert() -> u16 {
    poll_fn(|cx| {
        if let Some(sample) = critical_section::with(|cs| SAMPLE.borrow(cs).take()) {
            return Poll::Ready(sample);
        }
        critical_section::with(|cs| WAITING.borrow_ref_mut(cs).replace(cx.waker().clone()));
        critical_section::with(|cs| ARMED.borrow(cs).set(true));
        Poll::Pending
    })
    .await
}

#[rtic::app(device = lm3s6965, dispatchers = [SSI0])]
mod app {
    use cortex_m_semihosting::{debug, hprintln};

    #[shared]
    struct Shared {}

    #[local]
    struct Local {}

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        reader::spawn().unwrap();
        (Shared {}, Local {})
    }

    #[task(binds = ADC0_SEQUENCE_0, priority = 2)]
    fn conversion_done(_: conversion_done::Context) {
        critical_section::with(|cs| {
            let waiting = super::WAITING.borrow_ref_mut(cs).take();
            if super::ARMED.borrow(cs).replace(false) {
                super::SAMPLE.borrow(cs).set(Some(0x2A5));
                if let Some(waker) = waiting {
                    waker.wake();
                }
            }
        });
    }

    #[task(priority = 1)]
    async fn reader(_: reader::Context) {
        let sample = super::convert().await;
        hprintln!("sample {}", sample);
        debug::exit(debug::EXIT_SUCCESS);
    }
}
"#;

/// A project outside the workspace with `src/main.rs` = `app`, only the documented lines
/// (`Cargo.toml`'s two patch lines, no critical-section implementation feature;
/// `.cargo/config.toml`'s linker scripts and runner), built and run (`cargo run --release`)
/// with `campaign` the runner's arguments.
fn outside_app(tmp: &Path, name: &str, app: &str, campaign: &[&str]) -> std::process::Output {
    let project = tmp.join(name);
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(project.join(".cargo")).unwrap();
    let ws = workspace();
    let manifest = format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2021"

[dependencies]
rtic = {{ version = "2.4", features = ["thumbv7-backend"] }}
lm3s6965 = "0.2"
cortex-m = "0.7"
cortex-m-semihosting = "0.5"
critical-section = "1"
panic-semihosting = {{ version = "0.6", features = ["exit"] }}

[patch.crates-io]
rtic = {{ path = "{}" }}
portable-atomic = {{ path = "{}" }}

[profile.release]
debug = true
"#,
        ws.join("shims/rtic").display(),
        ws.join("shims/portable-atomic").display(),
    );
    std::fs::write(project.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(
        project.join(".cargo/config.toml"),
        r#"[build]
target = "thumbv7m-none-eabi"

[target.thumbv7m-none-eabi]
rustflags = ["-C", "link-arg=-Tlink.x", "-C", "link-arg=-Tdefmt.x", "-C", "link-arg=--nmagic"]
runner = "jostle campaign"
"#,
    )
    .unwrap();
    std::fs::write(project.join("src/main.rs"), app).unwrap();
    std::fs::copy(
        ws.join("rust-toolchain.toml"),
        project.join("rust-toolchain.toml"),
    )
    .unwrap();
    let target = outside_target();
    let mut args = vec!["run", "--release", "--"];
    args.extend_from_slice(campaign);
    user_cargo(
        &project,
        &args,
        &[("CARGO_TARGET_DIR", target.to_str().unwrap())],
    )
}

#[test]
fn an_rtic_app_outside_the_workspace_builds_with_the_documented_lines_and_its_lost_wake_up_is_found()
 {
    let tmp = outside_dir("jostle-rtic-");
    let started = Instant::now();
    let run = outside_app(
        tmp.path(),
        "adc_reader",
        USER_APP,
        &["--budget", BUDGET, "-j", "2"],
    );
    assert_eq!(run.status.code(), Some(40), "{}", text(&run));
    let stdout = String::from_utf8_lossy(&run.stdout);
    let clone = USER_APP
        .lines()
        .position(|l| l.contains("cx.waker().clone()"))
        .unwrap()
        + 1;
    let words = format!("lost wake-up: task reader waits at src/main.rs:{clone}:");
    assert!(stdout.contains(&words), "{words}: {}", text(&run));
    eprintln!(
        "outside app: build and campaign {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// An app whose bug needs its hardware task to fire twice: the UART's receive interrupt
/// expects one byte per frame. A peripheral's interrupt fires on its own once per run
/// unless the campaign says otherwise (`--fire UART0=2`).
const OVERRUN_APP: &str = r#"#![no_std]
#![no_main]

use panic_semihosting as _;

#[rtic::app(device = lm3s6965)]
mod app {
    #[shared]
    struct Shared {}

    #[local]
    struct Local {}

    #[init]
    fn init(_: init::Context) -> (Shared, Local) {
        (Shared {}, Local {})
    }

    #[task(binds = UART0, priority = 1, local = [received: u8 = 0])]
    fn uart_rx(cx: uart_rx::Context) {
        *cx.local.received += 1;
        assert!(*cx.local.received <= 1, "a second byte overran the one-byte frame");
    }
}
"#;

#[test]
fn a_hardware_task_fires_on_its_own_as_often_as_the_campaign_says() {
    let tmp = outside_dir("jostle-rtic-fire-");
    // The default: once per run, so the second byte never comes.
    let run = outside_app(
        tmp.path(),
        "overrun",
        OVERRUN_APP,
        &["--budget", "50", "-j", "2"],
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let elf = outside_target().join("thumbv7m-none-eabi/release/overrun");
    let elf = elf.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The task by its function's name (its interrupt's, `UART0`, works too: the shrink
    // test above uses `GPIOA=4`).
    let out = jostle_in(
        dir.path(),
        &[
            "campaign",
            elf,
            "--budget",
            "50",
            "-j",
            "2",
            "--fire",
            "uart_rx=2",
        ],
    );
    assert_eq!(out.status.code(), Some(40), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("a second byte overran the one-byte frame"),
        "{}",
        text(&out)
    );
    // The bound is the run's: the printed replay (which takes it from the report) fires
    // twice too.
    let r = report(&dir.path().join("jostle-report"));
    let id = failures(&r)[0]["id"].as_str().unwrap().to_owned();
    let replay = printed_replay(&stdout, &id, dir.path());
    assert!(
        String::from_utf8_lossy(&replay.stdout).contains(&format!("reproduced: panic {id}")),
        "{}",
        text(&replay)
    );
    // Names that are no interrupt's handler, and malformed bounds, are refused in one line.
    for bad in ["NOPE=2", "uart_rx", "UART0=256", "=2"] {
        let out = jostle_in(
            dir.path(),
            &[
                "campaign", elf, "--budget", "5", "--out", "bad", "--fire", bad,
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.trim().lines().count(), 1, "{bad}: {stderr}");
        assert!(stderr.contains(&format!("--fire {bad}")), "{bad}: {stderr}");
    }
}

#[test]
fn jostle_new_rtic_writes_an_app_whose_campaign_finds_its_bug() {
    let tmp = outside_dir("jostle-new-rtic-");
    let project = tmp.path().join("average");
    let out = jostle_in(
        tmp.path(),
        &[
            "new",
            "average",
            "--rtic",
            "--path",
            project.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    let shim = workspace().join("shims/rtic");
    assert!(
        manifest.contains(&format!("rtic = {{ path = \"{}\" }}", shim.display())),
        "{manifest}"
    );
    let target = outside_target();
    let run = user_cargo(
        &project,
        &["run", "--release", "--", "--budget", BUDGET, "-j", "2"],
        &[("CARGO_TARGET_DIR", target.to_str().unwrap())],
    );
    assert_eq!(run.status.code(), Some(40), "{}", text(&run));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("total and count from different moments"),
        "{}",
        text(&run)
    );
}
