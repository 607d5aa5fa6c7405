//! The event model: one enum of event kinds, each with a fixed `defmt` format string.
//!
//! The firmware emits each event as one `defmt` frame whose format string is the one given
//! here; the host reads an event's arguments straight from its frame's bytes (the format
//! index says the kind, [`EventKind::from_values`] builds it) and falls back to
//! `defmt-decoder`'s rendered text and [`Event::parse`] for a frame it cannot read so.
//! The host port prints the rendered text, one event a line, which [`Event::parse`] reads.
//!
//! Field vocabulary (the papers'): `t` task, `s` site (the address of a `#[track_caller]`
//! `Location` on the device, an interned id on the host port; resolved by the host to
//! `file:line:col`), `a` memory location, `l` lock identity, `c` lock class, `g` signal.

/// Trace level: which events a run emits (the configuration block chooses it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[repr(u8)]
pub enum TraceLevel {
    /// Verdicts and confirmations only (Phase II, lowest overhead).
    Results = 0,
    /// Synchronisation events too (spawn, join, locks, signals, atomic blocks).
    Sync = 1,
    /// Every scheduling point, memory accesses included (Phase I).
    Full = 2,
}

impl TraceLevel {
    /// Decodes the configuration block's byte.
    pub fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Results),
            1 => Some(Self::Sync),
            2 => Some(Self::Full),
            _ => None,
        }
    }
}

/// How a run ended. The firmware exits with [`Verdict::exit_code`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[repr(u8)]
pub enum Verdict {
    /// Every task ended.
    Pass = 0,
    /// A task panicked (an assertion failed).
    Panic = 1,
    /// No task is enabled while some are alive.
    Deadlock = 2,
    /// The run took more scheduling steps than the configured limit.
    StepLimit = 3,
    /// A task's stack canary was overwritten.
    StackOverflow = 4,
    /// The configuration block was refused (magic matched, version/length/checksum/field did not).
    ConfigRejected = 5,
    /// The CPU took a HardFault.
    HardFault = 6,
    /// A spawn found the task table full (the firmware's task limit).
    TaskLimit = 7,
    /// An interrupt handler would have blocked (a held lock, an empty signal, a join).
    HandlerBlocked = 8,
    /// The run could go no further while a task (or an async task) still waited for a
    /// wake-up that nothing would send: no task enabled, no interrupt source eligible, no
    /// timer pending (see `sched::wake`).
    LostWake = 9,
    /// A task spins alone while nothing can change what it waits for (every other task
    /// ended or blocked, no interrupt can fire, no timer pending; `sched::spin`).
    Starvation = 10,
    /// The application ended the run itself, reporting failure (an RTIC or Embassy app's
    /// `debug::exit(EXIT_FAILURE)`): the host sees QEMU exit with that code before any
    /// `RunEnd` (the kernel never emits this one).
    AppFailure = 11,
}

impl Verdict {
    /// All verdicts, in code order.
    pub const ALL: [Verdict; 12] = [
        Verdict::Pass,
        Verdict::Panic,
        Verdict::Deadlock,
        Verdict::StepLimit,
        Verdict::StackOverflow,
        Verdict::ConfigRejected,
        Verdict::HardFault,
        Verdict::TaskLimit,
        Verdict::HandlerBlocked,
        Verdict::LostWake,
        Verdict::Starvation,
        Verdict::AppFailure,
    ];

    /// Decodes the `verdict=` field of [`Event::RunEnd`] (by number: numbers are
    /// allocated ahead of the variants, see the contracts).
    pub fn from_u8(v: u8) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|verdict| *verdict as u8 == v)
    }

    /// Process exit code (firmware under QEMU, host port, and the `jostle` CLI alike):
    /// 0 for pass, 10 + the verdict's number up to the hard fault's 16, the task limit's 19,
    /// a blocked handler's 10, and for the later verdicts codes past the host tool's own
    /// (17 and 18 are the host's timeout and lost target, 20 to 43 the host tool's codes):
    /// a lost wake-up's 44, a starvation's 45, the app's failure 46.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Pass => 0,
            Verdict::TaskLimit => 19,
            Verdict::HandlerBlocked => 10,
            Verdict::LostWake => 44,
            Verdict::Starvation => 45,
            Verdict::AppFailure => 46,
            v => 10 + v as u8,
        }
    }

    /// The name used in JSON output and reports.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Panic => "panic",
            Verdict::Deadlock => "deadlock",
            Verdict::StepLimit => "step_limit",
            Verdict::StackOverflow => "stack_overflow",
            Verdict::ConfigRejected => "config_rejected",
            Verdict::HardFault => "hard_fault",
            Verdict::TaskLimit => "task_limit",
            Verdict::HandlerBlocked => "handler_blocked",
            Verdict::LostWake => "lost_wake",
            Verdict::Starvation => "starvation",
            Verdict::AppFailure => "app_failure",
        }
    }
}

/// Why a blocked task cannot run (in [`Event::Blocked`], the deadlock report).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum WaitKind {
    /// Waiting to acquire a lock (`on` is the lock, `holder` its holder).
    Lock = 0,
    /// Waiting to join a task (`on` is the task id).
    Join = 1,
    /// Waiting for a signal (`on` is the signal).
    Signal = 2,
    /// Waiting to enter the critical section (`holder` holds it).
    CriticalSection = 3,
    /// A handler spinning past the livelock bound (`HandlerBlocked` only).
    Spin = 4,
}

/// How [`Event::Value`]'s word reads: the primitive type it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ValueKind {
    /// An unsigned integer (`u8`, `u16`, `u32`, a 32-bit `usize`).
    Unsigned = 0,
    /// A signed integer, sign-extended (`i8`, `i16`, `i32`, a 32-bit `isize`).
    Signed = 1,
    /// A `bool` (0 or 1).
    Bool = 2,
    /// A `char`, as its scalar value.
    Char = 3,
    /// An `f32`, as its bits.
    F32 = 4,
}

impl ValueKind {
    /// The value as a person reads it: `7`, `-1`, `true`, `'a'`, `1.5`.
    #[cfg(feature = "std")]
    pub fn render(k: u8, v: u32) -> std::string::String {
        match k {
            1 => (v as i32).to_string(),
            2 => (v != 0).to_string(),
            3 => char::from_u32(v).map_or_else(|| v.to_string(), |c| format!("{c:?}")),
            4 => f32::from_bits(v).to_string(),
            _ => v.to_string(),
        }
    }
}

/// The context id of interrupt source `i`'s handler in events' `t` fields is
/// `IRQ_CONTEXT + i`: task ids stay below it (at most 128 tasks), and at most 32 sources.
pub const IRQ_CONTEXT: u8 = 0x80;

/// Marker for "no task" in task fields (e.g. the holder of a lock nobody holds).
pub const NO_TASK: u8 = 0xFF;

/// The lock class `c` of an executor's lock (Jostle's `embassy-executor`): each poll of an
/// Embassy task is a section of it, its acquire where the poll starts, its release where
/// the poll returns. Between two of a task's polls (it returned `Pending`) is where its
/// executor runs other tasks, the only place (`targets::Tracker`); and no acquire inside a
/// poll ever waits (the checker's iGoodlock). Reserved: no other lock has this class (no
/// static lives at this address on a Cortex-M, the host port numbers its locks from 0, and
/// the checker's implicit locks, `0xFFFE_0000` and up, have their own class). One Thumb-2
/// immediate: the shim's poll loop builds its acquire in one instruction.
pub const EXECUTOR_CLASS: u32 = 0xFD00_0000;

/// Is the field named `t` (the event's task)? Idents match by name in patterns.
macro_rules! is_t {
    (t) => {
        true
    };
    ($other:ident) => {
        false
    };
}

/// Is the field named `s` (the event's site)?
macro_rules! is_s {
    (s) => {
        true
    };
    ($other:ident) => {
        false
    };
}

/// The event table: one line per kind gives its name, trace level, operation name (as
/// printed), defmt format and fields; everything else about events is generated from it.
macro_rules! events {
    ($(
        $(#[$doc:meta])*
        $name:ident [$level:ident] $op:literal $fmt:tt { $($field:ident : $ty:ident),* $(,)? }
    ),* $(,)?) => {
        /// One scheduling or result event. See the module doc for the field names.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[cfg_attr(feature = "serde", serde(tag = "event", rename_all = "snake_case"))]
        #[allow(missing_docs)]
        pub enum Event {
            $( $(#[$doc])* $name { $($field: $ty),* } ),*
        }

        /// The kinds of [`Event`], without their fields.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(missing_docs)]
        pub enum EventKind { $($name),* }

        impl EventKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [EventKind] = &[$(EventKind::$name),*];

            /// The fixed format string of this kind (defmt syntax).
            pub fn format(self) -> &'static str {
                match self { $(EventKind::$name => $fmt),* }
            }

            /// The operation's name, as the host prints it and compares it across ports.
            pub fn name(self) -> &'static str {
                match self { $(EventKind::$name => $op),* }
            }

            /// The lowest trace level at which this kind is emitted.
            pub fn level(self) -> TraceLevel {
                match self { $(EventKind::$name => TraceLevel::$level),* }
            }

            /// Builds an event of this kind from its argument texts, in format order.
            fn build<'a>(self, mut args: impl Iterator<Item = &'a str>) -> Option<Event> {
                match self {
                    $(EventKind::$name => {
                        let ev = Event::$name { $($field: args.next()?.parse::<$ty>().ok()?),* };
                        if args.next().is_some() { return None; }
                        Some(ev)
                    })*
                }
            }

            /// Builds an event of this kind from its argument values in format order (the
            /// reverse of `Event::values`): the host reads them straight from a defmt frame's
            /// bytes. `None` when their number is not the kind's or one does not fit its field.
            pub fn from_values(self, values: &[u64]) -> Option<Event> {
                let mut values = values.iter().copied();
                match self {
                    $(EventKind::$name => {
                        let ev = Event::$name { $($field: <$ty>::try_from(values.next()?).ok()?),* };
                        if values.next().is_some() { return None; }
                        Some(ev)
                    })*
                }
            }
        }

        impl Event {
            /// This event's kind.
            pub fn kind(&self) -> EventKind {
                match self { $(Event::$name { .. } => EventKind::$name),* }
            }

            /// The task this event belongs to: its `t` field, when it has one.
            #[allow(unused_variables)]
            pub fn task(&self) -> Option<u8> {
                match *self {
                    $(Event::$name { $($field),* } => {
                        let mut task = None;
                        $( if is_t!($field) { task = Some($field as u8); } )*
                        task
                    })*
                }
            }

            /// The `s` field (the site of the operation), when the event has one.
            #[allow(unused_variables)]
            fn site_field(&self) -> Option<u32> {
                match *self {
                    $(Event::$name { $($field),* } => {
                        let mut site = None;
                        $( if is_s!($field) { site = Some($field as u32); } )*
                        site
                    })*
                }
            }

            /// The argument values in format-string order (for rendering).
            fn values(&self, out: &mut crate::fixed::Vec<u64, 8>) {
                match *self {
                    $(Event::$name { $($field),* } => {
                        $( let _ = out.push($field as u64); )*
                    })*
                }
            }

            /// Emits this event as one defmt frame. Each kind's frame is written by a
            /// function of its own: one function for every kind would reserve the locals of
            /// all of them at once when not optimised (about 2 KiB on a task's stack at
            /// opt-level 0), and it runs on the stack of whichever task reached the point.
            #[cfg(feature = "defmt")]
            pub fn emit_defmt(&self) {
                match *self {
                    $(Event::$name { .. } => {
                        #[inline(never)]
                        fn emit(event: &Event) {
                            if let Event::$name { $($field),* } = *event {
                                defmt::println!($fmt $(, $field)*)
                            }
                        }
                        emit(self)
                    })*
                }
            }
        }
    };
}

events! {
    /// A run begins: its seed, strategy id, trace level and the index of the run in this boot.
    RunStart [Results] "start" "J start seed={=u64} strategy={=u8} trace={=u8} run={=u32}" { seed: u64, strategy: u8, trace: u8, run: u32 },
    /// Task `t` spawned `child` at site `s` (happens-before: SND by t, RCV by child).
    Spawn [Sync] "spawn" "J spawn t={=u8} child={=u8} s={=u32}" { t: u8, child: u8, s: u32 },
    /// Task `t` began running.
    TaskStart [Sync] "begin" "J begin t={=u8}" { t: u8 },
    /// Task `t` ended.
    TaskExit [Sync] "exit" "J exit t={=u8}" { t: u8 },
    /// Task `t` joined `child` at site `s` (happens-before: SND by child, RCV by t).
    Join [Sync] "join" "J join t={=u8} child={=u8} s={=u32}" { t: u8, child: u8, s: u32 },
    /// Read of location `a`.
    Read [Full] "read" "R t={=u8} s={=u32} a={=u32}" { t: u8, s: u32, a: u32 },
    /// Write of location `a`.
    Write [Full] "write" "W t={=u8} s={=u32} a={=u32}" { t: u8, s: u32, a: u32 },
    /// Read-modify-write of location `a` (one statement; counts as a write).
    Update [Full] "update" "U t={=u8} s={=u32} a={=u32}" { t: u8, s: u32, a: u32 },
    /// The value task `t`'s access just before read, wrote or (an update) left, for a
    /// primitive of at most 32 bits; `k` is its [`ValueKind`]. Not a step: it follows its
    /// access's event.
    Value [Full] "value" "V t={=u8} v={=u32} k={=u8}" { t: u8, v: u32, k: u8 },
    /// Acquire of lock `l` (class `c`).
    Acquire [Sync] "acquire" "L t={=u8} s={=u32} l={=u32} c={=u32}" { t: u8, s: u32, l: u32, c: u32 },
    /// Release of lock `l`.
    Release [Sync] "release" "UL t={=u8} s={=u32} l={=u32}" { t: u8, s: u32, l: u32 },
    /// Entry of an atomic block.
    AtomicEnter [Sync] "atomic-enter" "AB t={=u8} s={=u32}" { t: u8, s: u32 },
    /// Exit of the atomic block entered at site `s`.
    AtomicExit [Sync] "atomic-exit" "AE t={=u8} s={=u32}" { t: u8, s: u32 },
    /// Signal `g` sent (happens-before SND).
    Signal [Sync] "signal" "SG t={=u8} s={=u32} g={=u32}" { t: u8, s: u32, g: u32 },
    /// Signal `g` received (happens-before RCV).
    Wait [Sync] "wait" "WT t={=u8} s={=u32} g={=u32}" { t: u8, s: u32, g: u32 },
    /// Entry of the `critical-section` critical section (a global lock).
    CsEnter [Sync] "cs-enter" "CS t={=u8}" { t: u8 },
    /// Exit of the `critical-section` critical section.
    CsExit [Sync] "cs-exit" "CX t={=u8}" { t: u8 },
    /// An explicit scheduling point with no shared effect.
    Yield [Full] "yield" "Y t={=u8} s={=u32}" { t: u8, s: u32 },
    /// Entry of an instrumented function frame (DrFinder call stacks).
    FrameEnter [Sync] "frame-enter" "FE t={=u8} s={=u32}" { t: u8, s: u32 },
    /// Exit of the frame entered at site `s`.
    FrameExit [Sync] "frame-exit" "FX t={=u8} s={=u32}" { t: u8, s: u32 },
    /// An atomic load of location `a` with ordering `o` (see `op::ordering_code`).
    AtomicLoad [Sync] "atomic-load" "AL t={=u8} s={=u32} a={=u32} o={=u8}" { t: u8, s: u32, a: u32, o: u8 },
    /// An atomic store to location `a`.
    AtomicStore [Sync] "atomic-store" "AS t={=u8} s={=u32} a={=u32} o={=u8}" { t: u8, s: u32, a: u32, o: u8 },
    /// An atomic read-modify-write of location `a` (swap, fetch_*, a compare-and-swap that
    /// succeeded).
    AtomicRmw [Sync] "atomic-rmw" "AX t={=u8} s={=u32} a={=u32} o={=u8}" { t: u8, s: u32, a: u32, o: u8 },
    /// A compare-and-swap on location `a` that failed: it only read (`o` is its failure
    /// ordering); the task may be spinning.
    CasFailed [Sync] "cas-failed" "AF t={=u8} s={=u32} a={=u32} o={=u8}" { t: u8, s: u32, a: u32, o: u8 },
    /// Context `t` pended interrupt source `i` (a requested firing: happens-before the
    /// handler's next entry).
    IrqRequest [Sync] "irq-request" "J irq-request t={=u8} s={=u32} i={=u8}" { t: u8, s: u32, i: u8 },
    /// The handler of source `i`, priority `p` (NVIC numbering: lower preempts higher), began
    /// as context `t` (`IRQ_CONTEXT + i`), preempting context `by`. `f` is 1 when the firing
    /// is one every strategy makes by itself (a request firmware pended, taken as soon as it
    /// could be; an async task polled in its dispatcher's own order), 0 when the seed or a
    /// strategy chose it (what a recorded schedule must say to replay it).
    IrqEnter [Sync] "irq-enter" "J irq-enter t={=u8} i={=u8} p={=u8} by={=u8} f={=u8}" { t: u8, i: u8, p: u8, by: u8, f: u8 },
    /// The handler running as context `t` returned.
    IrqExit [Sync] "irq-exit" "J irq-exit t={=u8}" { t: u8 },
    /// Context `t` masked (`on` = 1) or unmasked (0) interrupt source `i` (`ALL_IRQS`: all).
    IrqMask [Sync] "irq-mask" "J irq-mask t={=u8} s={=u32} i={=u8} on={=u8}" { t: u8, s: u32, i: u8, on: u8 },
    /// Context `t` set the priority mask to `level`: sources of priority value `level` or
    /// more cannot fire (0: no mask); `r` is the resource whose lock this is (its address,
    /// named from the ELF's symbols; 0: a mask that names none).
    PrioMask [Sync] "prio-mask" "J prio-mask t={=u8} s={=u32} level={=u8} r={=u32}" { t: u8, s: u32, level: u8, r: u32 },
    /// Context `t` is named by the `n` bytes of text at address `a` of the image (a
    /// framework's task: the host reads the name from the ELF). Once per context and run,
    /// before its first step.
    ContextName [Results] "name" "J name t={=u8} a={=u32} n={=u32}" { t: u8, a: u32, n: u32 },
    /// Task `t` waited at site `s` for an interrupt (a framework's idle loop) and one came.
    Idle [Sync] "idle" "J idle t={=u8} s={=u32}" { t: u8, s: u32 },
    /// The handler running as context `t` would block at site `s` (`kind` as in `Blocked`,
    /// on `on`): on hardware the system hangs. The run ends with this verdict.
    HandlerBlocked [Results] "handler-blocked" "J handler-blocked t={=u8} s={=u32} kind={=u8} on={=u32}" { t: u8, s: u32, kind: u8, on: u32 },
    /// The strategy postponed task `t` before its operation at site `s` (CalFuzzer's
    /// `postponed` set).
    Postpone [Sync] "postpone" "J postpone t={=u8} s={=u32}" { t: u8, s: u32 },
    /// Every enabled task was postponed: task `t` was released and runs (thrashing).
    Thrash [Sync] "thrash" "J thrash t={=u8}" { t: u8 },
    /// Task `t` stayed postponed for the livelock bound of `steps` scheduling steps and was
    /// released (the strategy held it back that long: not a finding).
    LivelockRelease [Results] "livelock-release" "J livelock t={=u8} steps={=u32}" { t: u8, steps: u32 },
    /// Every enabled task the strategy left running could only spin: context `t`, which it
    /// held back (a postponed task, or a handler whose firing it kept in reserve), was
    /// released (`sched::spin`).
    SpinRelease [Sync] "spin-release" "J spin-release t={=u8}" { t: u8 },
    /// Task `t` repeated the same iteration for `steps` steps, alone, changing nothing, with
    /// nothing else able to act: it starves. `s` is the site of its last read and `a` the
    /// location read (0: it read nothing). The run ends with the starvation verdict.
    Starved [Results] "starved" "J starved t={=u8} s={=u32} a={=u32} steps={=u32}" { t: u8, s: u32, a: u32, steps: u32 },
    /// A real race on location `a`: task `t` at site `s` and task `t2` at site `s2` were both
    /// about to access it (one writes); `t` went first.
    RealRace [Results] "REAL RACE" "J race t={=u8} s={=u32} t2={=u8} s2={=u32} a={=u32}" { t: u8, s: u32, t2: u8, s2: u32, a: u32 },
    /// A real atomicity violation: task `t`, inside the atomic block entered at `block`, was
    /// about to re-acquire lock `l` when task `by` acquired it at site `s`.
    AtomicityViolation [Results] "ATOMICITY VIOLATION" "J atomicity t={=u8} block={=u32} l={=u32} by={=u8} s={=u32}" { t: u8, block: u32, l: u32, by: u8, s: u32 },
    /// A real unserializable interleaving (AVIO): context `t`, after its first access to
    /// location `a` and stopped before its second at site `s`, saw context `by` access `a` at
    /// site `s2` in between.
    Unserializable [Results] "UNSERIALIZABLE" "J unserializable t={=u8} s={=u32} by={=u8} s2={=u32} a={=u32}" { t: u8, s: u32, by: u8, s2: u32, a: u32 },
    /// One edge of a real deadlock cycle: task `t`, stopped at site `s`, waits for lock `l`
    /// held by `holder` (the edges follow each other around the cycle).
    DeadlockConfirmed [Results] "DEADLOCK" "J deadlock t={=u8} s={=u32} l={=u32} holder={=u8}" { t: u8, s: u32, l: u32, holder: u8 },
    /// Deadlock report: task `t`, stopped at site `s`, waits (`kind`, see `WaitKind`) on `on`, held by `holder`.
    Blocked [Results] "blocked" "J blocked t={=u8} s={=u32} kind={=u8} on={=u32} holder={=u8}" { t: u8, s: u32, kind: u8, on: u32, holder: u8 },
    /// Task `t` panicked at site `s` (the message, if any, precedes it in a side frame).
    TaskPanic [Results] "panic" "J panic t={=u8} s={=u32}" { t: u8, s: u32 },
    /// Task `t` overflowed its stack of `size` bytes (its canary was overwritten); `depth`
    /// is how deep the stack was when the kernel noticed.
    StackOverflow [Results] "stack-overflow" "J stack-overflow t={=u8} depth={=u32} size={=u32}" { t: u8, depth: u32, size: u32 },
    /// The CPU took a HardFault while task `t` ran, at `pc` (0 when the exception frame was
    /// not on the task's stack), with the fault status registers as read (the host decodes
    /// them; ARMv6-M has none and sends 0).
    HardFault [Results] "hardfault" "J hardfault t={=u8} pc={=u32} lr={=u32} xpsr={=u32} cfsr={=u32} hfsr={=u32} mmfar={=u32} bfar={=u32}" { t: u8, pc: u32, lr: u32, xpsr: u32, cfsr: u32, hfsr: u32, mmfar: u32, bfar: u32 },
    /// Task `t` spawned a task while all `max` slots of the task table were taken.
    TaskLimit [Results] "task-limit" "J task-limit t={=u8} max={=u8}" { t: u8, max: u8 },
    /// The configuration block was refused (`reason`, see `config::Rejection`).
    ConfigRejected [Results] "config-rejected" "J config-rejected reason={=u8}" { reason: u8 },
    /// The virtual clock jumped to tick `now`: nothing else could happen before the
    /// earliest deadline (see `sched::time`).
    TimeAdvance [Sync] "time" "J time now={=u64}" { now: u64 },
    /// Timer `k` fired: it woke signal `g` (`i` = `time::NO_SOURCE`) or requested interrupt
    /// source `i` (`g` = 0).
    TimerFire [Sync] "timer" "J timer k={=u32} g={=u32} i={=u8}" { k: u32, g: u32, i: u8 },
    /// Task `t` is instance `i` of the object at address `a` (an Embassy task pool, an RTIC
    /// task's static): the host names it from the symbol there.
    TaskName [Results] "task-name" "J task-name t={=u8} a={=u32} i={=u8}" { t: u8, a: u32, i: u8 },
    /// Task or handler `t` is about to wake signal `g` (its next step is that `Signal`),
    /// from code addresses `p0`..`p3` on its stack (the host resolves them through the ELF's
    /// debug information to the application's line that woke it; 0: none). Full trace only.
    WakeFrom [Full] "wake-from" "J wake-from t={=u8} g={=u32} p0={=u32} p1={=u32} p2={=u32} p3={=u32}" { t: u8, g: u32, p0: u32, p1: u32, p2: u32, p3: u32 },
    /// A lost wake-up: task `t` (`NO_TASK`: an async task with no task of its own, named by
    /// `g`) waits for its wake-up signal `g` at site `s` (0: unknown) and nothing can wake
    /// it; `p0`..`p3` are code addresses on its stack when it registered its waker, which
    /// the host resolves through the ELF's debug information (0: none).
    LostWake [Results] "LOST WAKE-UP" "J lost-wake t={=u8} s={=u32} g={=u32} p0={=u32} p1={=u32} p2={=u32} p3={=u32}" { t: u8, s: u32, g: u32, p0: u32, p1: u32, p2: u32, p3: u32 },
    /// The run ended with `verdict` (see `Verdict`) after `steps` scheduling steps.
    RunEnd [Results] "end" "J end verdict={=u8} steps={=u32}" { verdict: u8, steps: u32 },
}

/// Side frames: not events, but context the host attaches to the next event.
pub mod side {
    /// Defines a site: its id, file, line and column (emitted before a panic on the device,
    /// and before a site's first use on the host port).
    pub const SITE: &str = "J site {=u32} {=str}:{=u32}:{=u32}";
    /// The panic message of the next [`super::Event::TaskPanic`].
    pub const PANIC_MESSAGE: &str = "J panic-msg {=str}";
    /// A served boot's firmware, its run over, waits for the next run's block (see
    /// `config::SERVED`); a boot that ends with its run does not write it.
    pub const AWAITING_BLOCK: &str = "J awaiting-block";
}

impl Event {
    /// The lowest trace level at which this event is emitted.
    pub fn level(&self) -> TraceLevel {
        self.kind().level()
    }

    /// The value (`v`, with its [`ValueKind`] `k`) that the access at `events[i]` read,
    /// wrote or left: the [`Event::Value`] right after it, from the same task (a value is
    /// emitted right after its access, before any other scheduling point).
    pub fn value_after(events: &[Event], i: usize) -> Option<(u32, u8)> {
        let t = events.get(i)?.task()?;
        match *events.get(i + 1)? {
            Event::Value { t: vt, v, k } if vt == t => Some((v, k)),
            _ => None,
        }
    }

    /// The site of this event, when it has one: its `s` field, except for an atomicity
    /// violation, whose site is its block's.
    pub fn site(&self) -> Option<u32> {
        match *self {
            Event::AtomicityViolation { block, .. } => Some(block),
            // A sleeper whose site is unknown (where it waits comes from its addresses).
            Event::LostWake { s: 0, .. } => None,
            _ => self.site_field(),
        }
    }

    /// Renders the event exactly as `defmt` renders its frame (the host port prints this).
    pub fn render(&self, out: &mut impl core::fmt::Write) -> core::fmt::Result {
        let mut values = crate::fixed::Vec::<u64, 8>::new();
        self.values(&mut values);
        let mut values = values.into_iter();
        for piece in pieces(self.kind().format()) {
            match piece {
                Piece::Literal(text) => out.write_str(text)?,
                Piece::Arg => write!(out, "{}", values.next().ok_or(core::fmt::Error)?)?,
            }
        }
        Ok(())
    }

    /// Maps a rendered frame back to the typed event, given the frame's format string.
    /// Returns `None` when the format is not an event's or the text does not fit it.
    pub fn parse(format: &str, rendered: &str) -> Option<Event> {
        EventKind::ALL
            .iter()
            .find(|k| k.format() == format)?
            .parse(rendered)
    }

    /// One event of every kind, with distinct non-trivial field values: the round-trip
    /// tests emit these on the device and expect them back from the decoder.
    pub fn samples() -> impl Iterator<Item = Event> {
        EventKind::ALL.iter().enumerate().map(|(i, &kind)| {
            let i = i as u64;
            // Values that need every byte of their field, so truncation would show.
            let vals = [
                0x0123_4567_89AB_CDEF_u64 ^ i,
                0x80 + i,
                0x8000_0001 + (i << 8),
                0x2000_0F00 + i,
                0xC0DE_0000 + i,
                0x7F,
                3,
                0x1234 + i,
            ];
            let fmt = kind.format();
            let mut texts: crate::fixed::Vec<crate::fixed::String<24>, 8> =
                crate::fixed::Vec::new();
            for (n, ty) in placeholder_types(fmt).enumerate() {
                let v = vals[n % vals.len()];
                let v = match ty {
                    "u8" => v & 0x7F,
                    "u32" => v & 0xFFFF_FFFF,
                    _ => v,
                };
                let mut s = crate::fixed::String::new();
                let _ = core::fmt::write(&mut s, format_args!("{v}"));
                let _ = texts.push(s);
            }
            kind.build(texts.iter().map(|s| s.as_str()))
                .expect("samples fit their own formats")
        })
    }
}

impl EventKind {
    /// Maps text rendered from this kind's format back to the typed event; `None` when the
    /// text does not fit the format.
    pub fn parse(self, rendered: &str) -> Option<Event> {
        let mut args = crate::fixed::Vec::<&str, 8>::new();
        match_template(self.format(), rendered, &mut |arg| args.push(arg).is_ok())?;
        self.build(args.iter().copied())
    }
}

/// A piece of a format string: literal text or one `{=type}` placeholder.
enum Piece<'a> {
    Literal(&'a str),
    Arg,
}

/// Splits a defmt format string into literal pieces and placeholders.
fn pieces(format: &str) -> impl Iterator<Item = Piece<'_>> {
    let mut rest = format;
    core::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if rest.starts_with('{') {
            let end = rest.find('}')?;
            rest = &rest[end + 1..];
            return Some(Piece::Arg);
        }
        let end = rest.find('{').unwrap_or(rest.len());
        let (lit, tail) = rest.split_at(end);
        rest = tail;
        Some(Piece::Literal(lit))
    })
}

/// The type names of a format string's placeholders (`{=u32}` gives `u32`).
fn placeholder_types(format: &str) -> impl Iterator<Item = &str> {
    format
        .split('{')
        .skip(1)
        .filter_map(|p| p.split('}').next())
        .map(|p| p.trim_start_matches('='))
}

/// Matches `rendered` against `format`, passing each argument's text to `arg` in order.
/// Literals must match exactly; an argument runs to the next literal (or the end).
pub fn match_template<'r>(
    format: &str,
    rendered: &'r str,
    arg: &mut dyn FnMut(&'r str) -> bool,
) -> Option<()> {
    let mut rest = rendered;
    let mut pending_arg = false;
    for piece in pieces(format) {
        match piece {
            Piece::Arg => pending_arg = true,
            Piece::Literal(lit) => {
                if pending_arg {
                    let at = rest.find(lit)?;
                    if !arg(&rest[..at]) {
                        return None;
                    }
                    rest = &rest[at + lit.len()..];
                    pending_arg = false;
                } else {
                    rest = rest.strip_prefix(lit)?;
                }
            }
        }
    }
    if pending_arg {
        if !arg(rest) {
            return None;
        }
    } else if !rest.is_empty() {
        return None;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::string::String;

    #[test]
    fn every_kind_renders_and_parses_back() {
        let mut seen = 0;
        for ev in Event::samples() {
            let mut text = String::new();
            ev.render(&mut text).unwrap();
            assert_eq!(Event::parse(ev.kind().format(), &text), Some(ev), "{text}");
            seen += 1;
        }
        assert_eq!(seen, EventKind::ALL.len());
    }

    #[test]
    fn every_kind_builds_back_from_its_values() {
        for ev in Event::samples() {
            let mut values = crate::fixed::Vec::<u64, 8>::new();
            ev.values(&mut values);
            assert_eq!(ev.kind().from_values(&values), Some(ev));
            assert_eq!(ev.kind().from_values(&values[1..]), None);
        }
        let read = EventKind::Read;
        assert_eq!(read.from_values(&[1, 2, 3, 4]), None);
        assert_eq!(read.from_values(&[256, 2, 3]), None);
        assert_eq!(
            read.from_values(&[1, 2, 3]),
            Some(Event::Read { t: 1, s: 2, a: 3 })
        );
    }

    #[test]
    fn formats_are_distinct_and_placeholders_match_fields() {
        for (i, a) in EventKind::ALL.iter().enumerate() {
            for b in &EventKind::ALL[i + 1..] {
                assert_ne!(a.format(), b.format());
            }
        }
    }

    #[test]
    fn task_and_site_come_from_the_t_and_s_fields() {
        for e in Event::samples() {
            let fmt = e.kind().format();
            let has = |f: &str| fmt.contains(&std::format!(" {f}={{"));
            assert_eq!(e.task().is_some(), has("t"), "{fmt}");
            let site = e.kind() == EventKind::AtomicityViolation || has("s");
            assert_eq!(e.site().is_some(), site, "{fmt}");
        }
        let v = Event::AtomicityViolation {
            t: 1,
            block: 7,
            l: 2,
            by: 3,
            s: 9,
        };
        assert_eq!((v.task(), v.site()), (Some(1), Some(7)));
    }

    #[test]
    fn wrong_text_is_refused() {
        let f = EventKind::Read.format();
        assert_eq!(Event::parse(f, "R t=1 s=2 a=3 extra"), None);
        assert_eq!(Event::parse(f, "R t=300 s=2 a=3"), None);
        assert_eq!(Event::parse(f, "W t=1 s=2 a=3"), None);
        assert_eq!(Event::parse("not an event", "R t=1 s=2 a=3"), None);
        assert_eq!(
            Event::parse(f, "R t=1 s=2 a=3"),
            Some(Event::Read { t: 1, s: 2, a: 3 })
        );
    }

    #[test]
    fn verdict_codes_are_distinct() {
        for (i, v) in Verdict::ALL.iter().enumerate() {
            assert_eq!(Verdict::from_u8(*v as u8), Some(*v));
            for w in &Verdict::ALL[i + 1..] {
                assert_ne!(v.exit_code(), w.exit_code());
            }
        }
    }
}
