//! What an active run aims at, and how the kernel tells that it happened for real.
//!
//! The host writes a candidate's *breakpoints* into the configuration block: each is a site
//! and an `aux` word whose top byte is the site's [`role`] and whose low byte is an index
//! (the component of a deadlock cycle). [`Tracker`] keeps the per-task facts the strategies
//! and the checks need (atomic-block nesting, locks acquired in the block, acquire sites of
//! held locks); [`Targets::before`] is CalFuzzer's *check* hook (calfuzzer-cav09 Algorithm 1):
//! run before an operation executes, it reports a race or an atomicity violation that the
//! operation makes real, whatever the strategy (so Random and PCT runs are measured the
//! same way as the active ones).

use crate::event::{EXECUTOR_CLASS, Event, IRQ_CONTEXT};
use crate::interrupt::MAX_IRQS;
use crate::op::{AtomicKind, Op, Slot};
use crate::task::{MAX_TASKS, TaskId, TaskSet};

/// Maximum breakpoint entries in a configuration block.
pub const MAX_BREAKPOINTS: usize = 16;

/// One breakpoint: a site (and an auxiliary word whose meaning depends on the strategy).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Breakpoint {
    /// The site id (device: address of the `Location`).
    pub site: u32,
    /// Strategy-specific (e.g. a lock class).
    pub aux: u32,
}

/// Roles of a breakpoint (top byte of `aux`).
pub mod role {
    /// One site of a racing pair (RaceFuzzer's RaceSet).
    pub const RACE: u8 = 1;
    /// The site of a targeted atomic block (`AtomicEnter`).
    pub const BLOCK: u8 = 2;
    /// A re-acquire site inside a targeted block.
    pub const REACQUIRE: u8 = 3;
    /// The acquire of a deadlock-cycle component (index = component).
    pub const ACQUIRE: u8 = 4;
    /// An acquire site of a lock the component holds (index = component).
    pub const CONTEXT: u8 = 5;
    /// A DrFinder may-trigger relation `mt(frame, class)`: `site` is the frame's site; the
    /// [`CLASS`] breakpoint with the same index carries the class.
    pub const RELATION: u8 = 6;
    /// The lock class of the relation with the same index (in the `site` field).
    pub const CLASS: u8 = 7;
    /// The first access `a1` of an access triple (a context's two consecutive accesses to
    /// one location, another context's access `a2` in between: AVIO's unserializable
    /// interleavings).
    pub const FIRST: u8 = 8;
    /// The second access `a3` of the triple.
    pub const SECOND: u8 = 9;
    /// The remote access `a2` of the triple.
    pub const REMOTE: u8 = 10;
    /// The interrupt source whose handler holds the other side (of a race, or a triple's
    /// remote access): `site` is the source's index, the low byte the side (0 or 1) of a
    /// race.
    pub const FIRE: u8 = 11;
    /// SURW: an access site of the location the run aims at (its *interesting* operations,
    /// [`crate::strategy::Surw`]).
    pub const INTERESTING: u8 = 12;
    /// SURW: the initial weight of consecutive tasks. `site` holds the weight. The low byte of
    /// `aux` holds the first task, and the next byte holds how many tasks share the weight.
    pub const WEIGHT: u8 = 13;
    /// Schedule: at the decision where task `A` (byte 1 of `aux`) has run `site` operations,
    /// task `B` (the low byte) runs next ([`crate::strategy::Schedule`]).
    pub const SWITCH: u8 = 14;
    /// Schedule: at that decision, interrupt source `i` (the low byte) fires first.
    pub const FIRE_AT: u8 = 15;
    /// AtomFuzzer: an acquire site where another task takes the lock a targeted block
    /// releases. A task there is held back until the block is paused (it would otherwise
    /// take the lock too early, before the block, and the violation would never happen).
    pub const INTERLEAVER: u8 = 16;
    /// Schedule: at the decision of the context `A` (byte 1 of `aux`) that executed last,
    /// having run `site` operations, the dispatcher polls async task `i` (the low byte, a
    /// source index) next.
    pub const POLL_AT: u8 = 17;
}

/// The `aux` word of a breakpoint with `role` and `index`.
pub const fn aux(role: u8, index: u8) -> u32 {
    ((role as u32) << 24) | index as u32
}

/// The role of an `aux` word.
pub const fn role_of(aux: u32) -> u8 {
    (aux >> 24) as u8
}

/// Most locks tracked per task (held, or acquired inside the current atomic block).
pub const MAX_TRACKED: usize = 4;

/// A small set of u32 (locks or sites), oldest first; when full, the oldest is forgotten
/// (a deeper nesting than [`MAX_TRACKED`] only loses targeting precision, never safety).
#[derive(Clone, Copy, Debug, Default)]
pub struct Small {
    items: [u32; MAX_TRACKED],
    len: u8,
}

impl Small {
    /// Adds `v` (kept once).
    pub fn insert(&mut self, v: u32) {
        if !self.contains(v) {
            self.push(v);
        }
    }

    /// Pushes `v` even if present (a stack of acquire sites).
    pub fn push(&mut self, v: u32) {
        if self.len as usize == MAX_TRACKED {
            self.items.copy_within(1.., 0);
            self.len -= 1;
        }
        self.items[self.len as usize] = v;
        self.len += 1;
    }

    /// Keeps the first `len` entries.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len as u8);
    }

    /// Removes the entry at `i`.
    pub fn remove_at(&mut self, i: usize) {
        if i < self.len as usize {
            self.items.copy_within(i + 1..self.len as usize, i);
            self.len -= 1;
        }
    }

    /// Is `v` in the set?
    pub fn contains(&self, v: u32) -> bool {
        self.as_slice().contains(&v)
    }

    /// The entries, oldest first.
    pub fn as_slice(&self) -> &[u32] {
        &self.items[..self.len as usize]
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

/// Per-task facts about locks and atomic blocks.
#[derive(Clone, Copy, Debug, Default)]
pub struct TaskFacts {
    /// Atomic-block nesting depth.
    pub depth: u8,
    /// Site of the outermost open atomic block.
    pub block: u32,
    /// Locks acquired inside the open atomic block (atomfuzzer-fse08 `alreadyAcquired`).
    pub acquired: Small,
    /// Locks held, in acquisition order, and the sites that acquired them.
    pub held: Small,
    /// The acquire site of each lock in `held`.
    pub held_sites: Small,
    /// Sites of the open instrumented frames, innermost last (DrFinder's call stack).
    pub frames: Small,
    /// A heuristic block (no `AtomicEnter` open), for a targeted block site that is a lock
    /// acquire: 0, none; 1, opened by an outermost acquire at that site, until the task's
    /// next outermost critical section; 2, in that next section (the block ends with it).
    /// The checker's Atomizer heuristic predicts such blocks (an outermost critical
    /// section, or two in turn); `acquired` tracks their locks as an annotated block's.
    pub sections: u8,
}

impl TaskFacts {
    /// As [`TaskFacts::default`], in place: a few stores, where writing a default over it
    /// had the compiler build and copy each [`Small`] byte by byte.
    pub fn clear(&mut self) {
        // Named field by field, with no `..`: a field added here must be cleared.
        let TaskFacts {
            depth,
            block,
            acquired,
            held,
            held_sites,
            frames,
            sections,
        } = self;
        *depth = 0;
        *block = 0;
        acquired.clear();
        held.clear();
        held_sites.clear();
        frames.clear();
        *sections = 0;
    }
}

/// Most triple windows open at once per context (see [`Windows`]).
pub const MAX_WINDOWS: usize = 2;

/// A context's open triple windows: the locations of its latest accesses at a targeted
/// [`role::FIRST`] site (`a1`), each with whether it wrote, until the context's next access
/// to that location closes it. More than one, because `a1`'s site may touch several
/// locations before `a3` (a getter called for elements 1 then 2, `a3` back on element 1:
/// racebench 024 and 029); when full, the oldest is forgotten.
#[derive(Clone, Copy, Debug, Default)]
pub struct Windows {
    locations: [u32; MAX_WINDOWS],
    /// Bit `i`: the access that opened window `i` wrote.
    writes: u8,
    /// Bit `i`: the context crossed a section boundary (a lock, the critical section, a
    /// mask) since window `i` opened. A remote access landing after that is not recorded:
    /// `a1` and `a3` are then in two sections the programmer drew, and an access between
    /// them is the design, not a violation (the checker predicts such triples; only
    /// CTrigger's hold at `a3` confirms them, see [`Targets::before`]). Except between two
    /// polls of an Embassy task ([`Tracker::between_polls`]): there the task gave the CPU
    /// away at an `.await`, and what lands is recorded.
    crossed: u8,
    len: u8,
}

/// The latest access by another context that landed in a window: a targeted remote access
/// `a2`, or any write (so that a remote read after its own context's write is known to
/// read that write, not `a1`'s value: racebench 009's handler stores to its local, points
/// at it, and reads it back).
#[derive(Clone, Copy, Debug)]
pub struct Remote {
    /// The window's location.
    pub a: u32,
    /// The context that made it.
    pub by: TaskId,
    /// Its site.
    pub s2: u32,
    /// Whether it wrote.
    pub writes: bool,
    /// Whether its site is the triple's [`role::REMOTE`] (only then is it `a2`).
    pub targeted: bool,
}

impl Windows {
    /// Whether the window open on `a` was opened by a write (`None`: no window on `a`).
    pub fn first(&self, a: u32) -> Option<bool> {
        let i = self.position(a)?;
        Some(self.writes & (1 << i) != 0)
    }

    /// Has the context crossed a section boundary since it opened the window on `a`?
    pub fn crossed(&self, a: u32) -> bool {
        self.position(a)
            .is_some_and(|i| self.crossed & (1 << i) != 0)
    }

    /// Does the context have a window it has not crossed a section boundary in?
    pub fn any_uncrossed(&self) -> bool {
        let all = (1u8 << self.len) - 1;
        self.crossed & all != all
    }

    fn position(&self, a: u32) -> Option<usize> {
        self.locations[..self.len as usize]
            .iter()
            .position(|&l| l == a)
    }

    fn close(&mut self, a: u32) {
        if let Some(i) = self.position(a) {
            let len = self.len as usize;
            self.locations.copy_within(i + 1..len, i);
            let without_bit_i =
                |bits: u8| (bits & ((1 << i) - 1)) | ((bits >> 1) & !((1 << i) - 1));
            self.writes = without_bit_i(self.writes);
            self.crossed = without_bit_i(self.crossed);
            self.len -= 1;
        }
    }

    fn open(&mut self, a: u32, writes: bool) {
        self.close(a);
        if self.len as usize == MAX_WINDOWS {
            let oldest = self.locations[0];
            self.close(oldest);
        }
        let i = self.len as usize;
        self.locations[i] = a;
        self.writes = (self.writes & !(1 << i)) | (u8::from(writes) << i);
        self.crossed &= !(1 << i);
        self.len += 1;
    }

    /// The context crossed a section boundary: every open window is crossed.
    fn cross(&mut self) {
        self.crossed = (1u8 << self.len) - 1;
    }
}

/// Tracks [`TaskFacts`] for every task, from the operations as they execute, and the open
/// triple windows of every context (tasks and handlers).
#[derive(Clone, Debug)]
pub struct Tracker {
    /// Facts per task id.
    pub tasks: [TaskFacts; MAX_TASKS],
    /// Per task: its open triple windows.
    windows: [Windows; MAX_TASKS],
    /// The same for each interrupt source's handler.
    irq_windows: [Windows; MAX_IRQS],
    /// The latest access by another context that landed in an uncrossed window of a
    /// context, for the last few contexts it happened to (the remote access `a2` wherever
    /// the context stood, AVIO's definition: `a2` between `a1` and `a3` in the execution;
    /// the triple is reported when the context makes `a3`, [`Targets::before`]). A table
    /// rather than a field of every context's windows: it is rarely more than one entry.
    remotes: [Option<(TaskId, Remote)>; MAX_REMOTES],
    /// The executor's lock (class [`EXECUTOR_CLASS`]) once a task took it. One per run:
    /// Jostle's embassy-executor has one thread-mode executor, and its interrupt executors'
    /// polls take no lock.
    executor: Option<u32>,
    /// Tasks inside a poll (holding the executor's lock).
    polling: TaskSet,
    /// Tasks between two of their polls: a poll of theirs returned (`Pending`: it released
    /// the executor's lock) and the next has not started (acquired it again).
    between_polls: TaskSet,
}

/// Most contexts with a remote access recorded at once (the oldest is forgotten).
pub const MAX_REMOTES: usize = 4;

impl Default for Tracker {
    fn default() -> Self {
        Tracker {
            tasks: [TaskFacts::default(); MAX_TASKS],
            windows: [Windows::default(); MAX_TASKS],
            irq_windows: [Windows::default(); MAX_IRQS],
            remotes: [None; MAX_REMOTES],
            executor: None,
            polling: TaskSet::EMPTY,
            between_polls: TaskSet::EMPTY,
        }
    }
}

impl Tracker {
    /// Forgets everything of the first `tasks` tasks and `irqs` handlers, in place (a new
    /// run on the same tracker, see [`crate::sched::Core::restart`]): the others' entries
    /// are at rest, as no context of theirs ran.
    pub fn clear(&mut self, tasks: usize, irqs: usize) {
        self.tasks[..tasks].iter_mut().for_each(TaskFacts::clear);
        self.windows[..tasks].fill(Windows::default());
        self.irq_windows[..irqs].fill(Windows::default());
        self.remotes.fill(None);
        self.executor = None;
        self.polling = TaskSet::EMPTY;
        self.between_polls = TaskSet::EMPTY;
    }

    /// The open triple windows of context `ctx` (a task or a handler).
    pub fn windows(&self, ctx: TaskId) -> Windows {
        if (ctx as usize) < MAX_TASKS {
            self.windows[ctx as usize]
        } else {
            let i = ctx.wrapping_sub(IRQ_CONTEXT) as usize;
            self.irq_windows.get(i).copied().unwrap_or_default()
        }
    }

    fn windows_mut(&mut self, ctx: TaskId) -> Option<&mut Windows> {
        if (ctx as usize) < MAX_TASKS {
            Some(&mut self.windows[ctx as usize])
        } else {
            self.irq_windows
                .get_mut(ctx.wrapping_sub(IRQ_CONTEXT) as usize)
        }
    }

    /// The remote access `a2` that landed last in context `ctx`'s open window on `a`.
    pub fn remote(&self, ctx: TaskId, a: u32) -> Option<Remote> {
        let (_, r) = self.remotes.iter().flatten().find(|(u, _)| *u == ctx)?;
        (r.a == a && r.targeted && self.windows(ctx).position(a).is_some()).then_some(*r)
    }

    /// Records `remote` as the latest access that landed in `ctx`'s window.
    fn set_remote(
        remotes: &mut [Option<(TaskId, Remote)>; MAX_REMOTES],
        ctx: TaskId,
        remote: Remote,
    ) {
        let i = (remotes
            .iter()
            .position(|e| e.is_some_and(|(u, _)| u == ctx)))
        .or_else(|| remotes.iter().position(Option::is_none))
        .unwrap_or_else(|| {
            remotes.copy_within(1.., 0);
            MAX_REMOTES - 1
        });
        remotes[i] = Some((ctx, remote));
    }

    /// Does context `ctx` have a triple window open that it has not crossed a section
    /// boundary in?
    pub fn in_window(&self, ctx: TaskId) -> bool {
        self.windows(ctx).any_uncrossed()
    }

    /// Is context `ctx` a task between two of its polls (an Embassy task whose last poll
    /// returned `Pending`, not polled again yet)? Only there does its executor run other
    /// tasks, so only there can another task's access land between two accesses it made in
    /// two polls.
    pub fn between_polls(&self, ctx: TaskId) -> bool {
        (ctx as usize) < MAX_TASKS && self.between_polls.contains(ctx)
    }

    /// Is task `t` inside a poll (holding its executor's lock, which no other task of the
    /// executor can take before the poll returns)?
    pub fn in_poll(&self, t: TaskId) -> bool {
        (t as usize) < MAX_TASKS && self.polling.contains(t)
    }

    /// Is task `t` between two of its polls with a triple window open in which no targeted
    /// remote access has landed yet (where Avio pauses it)?
    pub fn awaits_remote(&self, t: TaskId) -> bool {
        let w = self.windows(t);
        self.between_polls(t)
            && w.locations[..w.len as usize]
                .iter()
                .any(|&a| self.remote(t, a).is_none())
    }

    /// When `op` by context `ctx` is the second access `a3` of a targeted triple whose first
    /// access `a1` it made (the window on `op`'s location is open): whether `a1` wrote.
    pub fn at_second(&self, ctx: TaskId, op: &Op, targets: &Targets) -> Option<bool> {
        // `before` asks at every checked operation: the flag first, then the decoding.
        if !targets.triple {
            return None;
        }
        let (s, a, _) = access(op)?;
        if !targets.has(s, role::SECOND) {
            return None;
        }
        self.windows(ctx).first(a)
    }

    /// Records a triple's first and second accesses by context `ctx` (any context; the rest
    /// of [`Tracker::after`] is for tasks). An access at a [`role::FIRST`] site opens a
    /// window on its location; any other access to that location closes it (at `a3` the
    /// window is done; elsewhere `a1` and `a3` would no longer be consecutive).
    pub fn after_access(&mut self, ctx: TaskId, op: &Op, targets: &Targets) {
        if !targets.triple {
            return;
        }
        let Some((s, a, writes)) = access(op) else {
            return;
        };
        let targeted = targets.has(s, role::REMOTE);
        if targeted || writes {
            let remote = Remote {
                a,
                by: ctx,
                s2: s,
                writes,
                targeted,
            };
            let others = self
                .windows
                .iter()
                .enumerate()
                .map(|(u, w)| (u as TaskId, w));
            let handlers =
                (self.irq_windows.iter().enumerate()).map(|(i, w)| (IRQ_CONTEXT + i as TaskId, w));
            for (u, w) in others.chain(handlers) {
                let reads_its_own_write = !writes
                    && self
                        .remotes
                        .iter()
                        .flatten()
                        .any(|(v, r)| *v == u && r.a == a && r.by == ctx && r.writes);
                // A crossed window records only what lands between two polls of its task.
                let open = !w.crossed(a) || self.between_polls(u);
                if u != ctx && w.position(a).is_some() && open && !reads_its_own_write {
                    Self::set_remote(&mut self.remotes, u, remote);
                }
            }
        }
        // The context's own access to `a` opens or closes its window there: what landed in
        // the one before is forgotten.
        for entry in self.remotes.iter_mut() {
            if entry.is_some_and(|(u, r)| u == ctx && r.a == a) {
                *entry = None;
            }
        }
        if let Some(windows) = self.windows_mut(ctx) {
            if targets.has(s, role::FIRST) {
                windows.open(a, writes);
            } else {
                windows.close(a);
            }
        }
    }

    /// Contexts stopped before the second access of a targeted triple whose first access
    /// they made: stopped tasks, and `handlers` (preempted handlers and their pending
    /// operations). Each with its first access and its pending operation.
    pub fn waiting_at_second<'a>(
        &'a self,
        slots: &'a [Slot],
        handlers: &'a [(TaskId, Op)],
        targets: &'a Targets,
    ) -> impl Iterator<Item = (TaskId, bool, Op)> + 'a {
        let tasks = slots
            .iter()
            .enumerate()
            .filter_map(|(u, slot)| Some((u as TaskId, *slot.pending()?)));
        tasks
            .chain(handlers.iter().copied())
            .filter_map(move |(u, pending)| {
                Some((u, self.at_second(u, &pending, targets)?, pending))
            })
    }
    /// Records that `t` executed `op` (CalFuzzer's *analyze* hook for lock and block state);
    /// `targets` says which acquire sites open heuristic blocks. Out of line: only runs that
    /// track call it, and inlined into the loop's `run` it cost every untargeted Embassy
    /// poll step register moves (`scripts/poll-trace`).
    #[inline(never)]
    pub fn after(&mut self, t: TaskId, op: &Op, targets: &Targets) {
        if targets.triple
            && matches!(
                op,
                Op::Acquire { .. }
                    | Op::Release { .. }
                    | Op::CsEnter
                    | Op::CsExit
                    | Op::IrqMask { .. }
                    | Op::PrioMask { .. }
            )
        {
            self.windows[t as usize].cross();
            // A poll starts (its executor's lock taken) or returns (released).
            match *op {
                Op::Acquire {
                    l,
                    c: EXECUTOR_CLASS,
                    ..
                } => {
                    self.executor = Some(l);
                    self.polling.insert(t);
                    self.between_polls.remove(t);
                }
                Op::Release { l, .. } if self.executor == Some(l) => {
                    self.polling.remove(t);
                    self.between_polls.insert(t);
                }
                _ => {}
            }
        }
        let f = &mut self.tasks[t as usize];
        match *op {
            Op::AtomicEnter { s } => {
                if f.depth == 0 {
                    f.block = s;
                    f.acquired.clear();
                    f.sections = 0;
                }
                f.depth = f.depth.saturating_add(1);
            }
            Op::AtomicExit { .. } => {
                f.depth = f.depth.saturating_sub(1);
                if f.depth == 0 {
                    // atomfuzzer-fse08 Algorithm 2, line 12.
                    f.acquired.clear();
                }
            }
            Op::Acquire { s, l, .. } => {
                if f.depth == 0 && f.held.as_slice().is_empty() && targets.atomicity {
                    match f.sections {
                        0 if targets.has(s, role::BLOCK) => {
                            f.sections = 1;
                            f.block = s;
                            f.acquired.clear();
                        }
                        1 => f.sections = 2,
                        _ => {}
                    }
                }
                if f.depth > 0 || f.sections > 0 {
                    // Algorithm 2, line 19.
                    f.acquired.insert(l);
                }
                f.held.push(l);
                f.held_sites.push(s);
            }
            Op::Release { l, .. } => {
                if let Some(i) = f.held.as_slice().iter().rposition(|h| *h == l) {
                    f.held.remove_at(i);
                    f.held_sites.remove_at(i);
                }
                if f.sections == 2 && f.held.as_slice().is_empty() {
                    f.sections = 0;
                    f.acquired.clear();
                }
            }
            Op::FrameEnter { s } => f.frames.push(s),
            Op::FrameExit { s } => {
                // drfinder-fse15 Algorithm 1, lines 8–11: pop the frame (and any left open).
                if let Some(i) = f.frames.as_slice().iter().rposition(|x| *x == s) {
                    f.frames.truncate(i);
                }
            }
            _ => {}
        }
    }

    /// Is `op` by `t` the re-acquire, inside an atomic block, of a lock `t` already acquired
    /// and released in it (atomfuzzer-fse08 Algorithm 2, lines 14–15)?
    pub fn is_reacquire(&self, t: TaskId, op: &Op) -> bool {
        let f = &self.tasks[t as usize];
        matches!(*op, Op::Acquire { l, .. } if f.depth > 0 && f.acquired.contains(l))
    }

    /// Is `op` by `t` an acquire, inside a block (annotated or heuristic), after the block
    /// released a lock it acquired? Atomizer's reduction (atomfuzzer-fse08 §1: a block is
    /// atomic when its acquires all come before its releases) fails there: another task may
    /// take the released lock in between. This includes the re-acquire of the same lock
    /// ([`Tracker::is_reacquire`]) and a block that takes two locks in turn.
    pub fn breaks_block(&self, t: TaskId, op: &Op) -> bool {
        let f = &self.tasks[t as usize];
        matches!(*op, Op::Acquire { .. })
            && f.acquired
                .as_slice()
                .iter()
                .any(|&l| self.released_in_block(t, l))
    }

    /// Did `t`'s open block (annotated or heuristic) acquire `l` and release it since?
    pub fn released_in_block(&self, t: TaskId, l: u32) -> bool {
        let f = &self.tasks[t as usize];
        (f.depth > 0 || f.sections > 0) && f.acquired.contains(l) && !f.held.contains(l)
    }
}

/// The breakpoints of a run, by role.
#[derive(Clone, Debug, Default)]
pub struct Targets {
    breakpoints: crate::fixed::Vec<Breakpoint, MAX_BREAKPOINTS>,
    /// Some breakpoint has the [`role::RACE`] role.
    pub race: bool,
    /// Some breakpoint has the [`role::BLOCK`] or [`role::REACQUIRE`] role.
    pub atomicity: bool,
    /// Every atomic block is targeted (AtomFuzzer with no block breakpoint).
    pub all_blocks: bool,
    /// Some breakpoint has the [`role::SECOND`] role (an access triple is targeted).
    pub triple: bool,
    /// Some breakpoint has the [`role::INTERLEAVER`] role (AtomFuzzer holds tasks there
    /// back): without one, an acquire needs no scan of the breakpoints for it.
    pub interleaving: bool,
    /// One bit per access site the breakpoints aim at (race sides, triple accesses), by
    /// [`filter_bit`]: a site whose bit is clear is none of them, which the kernel's lean
    /// path learns in three instructions instead of a scan.
    access_filter: u32,
}

/// A site's bit in [`Targets`]' race filter. Sites are `Location` records 16 bytes apart on
/// the device (hence the shift: 32 consecutive records have 32 bits) and FNV-1a hashes on
/// the host port. One bit-field extract and one shift on Thumb-2.
#[inline(always)]
pub fn filter_bit(site: u32) -> u32 {
    1 << ((site >> 4) & 31)
}

impl Targets {
    /// The targets of a configuration's breakpoints.
    pub fn new(breakpoints: &[Breakpoint]) -> Self {
        let has = |r: u8| breakpoints.iter().any(|b| role_of(b.aux) == r);
        Targets {
            breakpoints: crate::fixed::Vec::from_slice(breakpoints).unwrap_or_default(),
            race: has(role::RACE),
            atomicity: has(role::BLOCK) || has(role::REACQUIRE),
            all_blocks: false,
            triple: has(role::SECOND),
            interleaving: has(role::INTERLEAVER),
            access_filter: breakpoints
                .iter()
                .filter(|b| {
                    matches!(
                        role_of(b.aux),
                        role::RACE | role::FIRST | role::SECOND | role::REMOTE
                    )
                })
                .fold(0, |f, b| f | filter_bit(b.site)),
        }
    }

    /// May the plain access or yield `op` (the lean path's operations; for others the
    /// answer means nothing) be aimed at: a race side, a triple's access? `false` is
    /// certain; `true` means "look with [`Targets::has`]". The site is only read when some
    /// access is aimed at (untargeted runs need no hash).
    #[inline(always)]
    pub fn may_aim_at_op(&self, op: &crate::op::Op) -> bool {
        self.access_filter != 0
            && op
                .site()
                .is_some_and(|s| self.access_filter & filter_bit(s) != 0)
    }

    /// The interrupt source whose handler holds side `side` of the targeted race, or the
    /// remote access of the targeted triple (`side` 0).
    pub fn fire_source(&self, side: u8) -> Option<u8> {
        self.breakpoints
            .iter()
            .find(|b| b.aux == aux(role::FIRE, side))
            .map(|b| b.site as u8)
    }

    /// Does a [`role::FIRE`] breakpoint name source `i` (the strategy fires it)?
    pub fn fires(&self, i: u8) -> bool {
        self.breakpoints
            .iter()
            .any(|b| role_of(b.aux) == role::FIRE && b.site == u32::from(i))
    }

    /// The side (0 or 1) of the targeted race that `site` is on, if any.
    pub fn race_side(&self, site: u32) -> Option<u8> {
        self.breakpoints
            .iter()
            .find(|b| b.site == site && role_of(b.aux) == role::RACE)
            .map(|b| b.aux as u8)
    }

    /// Is `site` on side `side` (0 or 1) of the targeted race?
    fn on_race_side(&self, site: u32, side: u8) -> bool {
        self.breakpoints
            .iter()
            .any(|b| b.site == site && b.aux == aux(role::RACE, side))
    }

    /// The side (0 or 1) of the targeted race that `site` is on, when it is on one side only
    /// (a site racing with itself is on both: its two tasks have no sides).
    pub fn sole_race_side(&self, site: u32) -> Option<u8> {
        match (self.on_race_side(site, 0), self.on_race_side(site, 1)) {
            (true, false) => Some(0),
            (false, true) => Some(1),
            _ => None,
        }
    }

    /// The breakpoints.
    pub fn breakpoints(&self) -> &[Breakpoint] {
        &self.breakpoints
    }

    /// Is `site` a breakpoint with role `r`?
    pub fn has(&self, site: u32, r: u8) -> bool {
        self.breakpoints
            .iter()
            .any(|b| b.site == site && role_of(b.aux) == r)
    }

    /// Does any breakpoint have role `r`?
    pub fn any(&self, r: u8) -> bool {
        self.breakpoints.iter().any(|b| role_of(b.aux) == r)
    }

    /// Is the access `op` at a site of the targeted racing pair?
    pub fn is_race_site(&self, op: &Op) -> bool {
        self.race && access(op).is_some_and(|(s, _, _)| self.has(s, role::RACE))
    }

    /// Do two accesses at sites `a` and `b` form the targeted pair? The pair's two sides are
    /// the race breakpoints with index 0 and 1 (a side may list several sites: one source
    /// location can have several `Location` records); a pair whose sides are the same site
    /// is one site racing with itself.
    pub fn is_pair(&self, a: u32, b: u32) -> bool {
        (self.on_race_side(a, 0) && self.on_race_side(b, 1))
            || (self.on_race_side(a, 1) && self.on_race_side(b, 0))
    }

    /// Is the atomic-block pattern of `t` at its pending `op` targeted? (No block or
    /// re-acquire breakpoints: every block is, as in atomfuzzer-fse08.)
    pub fn is_atomicity_target(&self, facts: &TaskFacts, op: &Op) -> bool {
        let blocks = self.any(role::BLOCK);
        let sites = self.any(role::REACQUIRE);
        (!blocks || self.has(facts.block, role::BLOCK))
            && (!sites || op.site().is_some_and(|s| self.has(s, role::REACQUIRE)))
    }

    /// The tasks, among `among`, whose pending access races with `op` of `t` on the targeted
    /// pair: same location, at least one write, sites forming the pair (RaceFuzzer's
    /// `Racing(s, t, postponed)`, racefuzzer-pldi08 Algorithm 2).
    pub fn racing(&self, t: TaskId, op: &Op, slots: &[Slot], among: TaskSet) -> TaskSet {
        let mut racing = TaskSet::EMPTY;
        for u in among.iter() {
            if u != t
                && let Some(pending) = slots[u as usize].pending()
                && self.race_between(op, pending).is_some()
            {
                racing.insert(u);
            }
        }
        racing
    }

    /// `(s, s2, a)` when `op` (at site `s`) and another context's `pending` operation (at
    /// `s2`) access location `a`, one of them writes, and their sites form the targeted pair.
    fn race_between(&self, op: &Op, pending: &Op) -> Option<(u32, u32, u32)> {
        let (s, a, w) = access(op)?;
        let (s2, a2, w2) = access(pending)?;
        (a2 == a && (w || w2) && self.is_pair(s, s2)).then_some((s, s2, a))
    }

    /// CalFuzzer's check, before `t` executes `op`: the race or atomicity violation it makes
    /// real, reported through `emit`. Returns the tasks whose targeted pattern was completed
    /// (an atomicity victim), which a strategy no longer needs to hold back.
    pub fn before(
        &self,
        t: TaskId,
        op: &Op,
        slots: &[Slot],
        handlers: &[(TaskId, Op)],
        tracker: &Tracker,
        emit: &mut impl FnMut(Event),
    ) -> TaskSet {
        let mut done = TaskSet::EMPTY;
        if self.is_race_site(op) {
            let tasks = Slot::stopped(slots)
                .iter()
                .filter_map(|u| Some((u, slots[u as usize].pending()?)));
            // A handler preempted at the other side races as a stopped task does (nested
            // handlers).
            let preempted = handlers.iter().map(|(u, pending)| (*u, pending));
            for (u, pending) in tasks.chain(preempted) {
                if u != t
                    && let Some((s, s2, a)) = self.race_between(op, pending)
                {
                    emit(Event::RealRace { t, s, t2: u, s2, a });
                }
            }
        }
        if self.triple
            && let Some((s2, a, remote_writes)) = access(op)
            && self.has(s2, role::REMOTE)
        {
            // The remote access `a2` lands between a context's `a1` and the `a3` it is held
            // (or preempted) at: CTrigger's interleaving. A task goes on. The tracker records
            // `a2` in an uncrossed window, reported at `a3`; a crossed one is reported now.
            for (u, first_writes, pending) in tracker.waiting_at_second(slots, handlers, self) {
                if let Some((s3, a3, second_writes)) = access(&pending)
                    && u != t
                    && a3 == a
                    && unserializable(first_writes, remote_writes, second_writes)
                {
                    if tracker.windows(u).crossed(a) {
                        emit(Event::Unserializable {
                            t: u,
                            s: s3,
                            by: t,
                            s2,
                            a,
                        });
                    }
                    if (u as usize) < MAX_TASKS {
                        done.insert(u);
                    }
                }
            }
        }
        if let Some(first_writes) = tracker.at_second(t, op, self)
            && let Some((s, a, second_writes)) = access(op)
            && let Some(r) = tracker.remote(t, a)
            && unserializable(first_writes, r.writes, second_writes)
        {
            // `t` makes `a3` with a remote `a2` in its window, wherever `t` stood when it
            // landed (held at `a3`, or earlier in the window when a handler was fired).
            emit(Event::Unserializable {
                t,
                s,
                by: r.by,
                s2: r.s2,
                a,
            });
        }
        if (self.atomicity || self.all_blocks)
            && let Op::Acquire { s, l, .. } = *op
        {
            // atomfuzzer-fse08 Algorithm 2, lines 25–27: another task acquires L while a
            // task is stopped before re-acquiring L inside its atomic block. A targeted
            // block also breaks when it is stopped before any acquire after releasing L
            // (two locks in turn: `Tracker::breaks_block`).
            for (p, slot) in slots.iter().enumerate() {
                let p = p as TaskId;
                let Some(pending) = slot.pending() else {
                    continue;
                };
                let facts = &tracker.tasks[p as usize];
                let reacquire = matches!(*pending, Op::Acquire { l: l2, .. } if l2 == l)
                    && tracker.is_reacquire(p, pending);
                let in_turn = self.atomicity
                    && matches!(*pending, Op::Acquire { .. })
                    && tracker.released_in_block(p, l);
                if p != t && (reacquire || in_turn) && self.is_atomicity_target(facts, pending) {
                    emit(Event::AtomicityViolation {
                        t: p,
                        block: facts.block,
                        l,
                        by: t,
                        s,
                    });
                    done.insert(p);
                }
            }
        }
        done
    }
}

/// An access's site, location and whether it writes (atomic accesses included: a load
/// reads, every other atomic operation may write).
pub fn access(op: &Op) -> Option<(u32, u32, bool)> {
    match *op {
        Op::Read { s, a } => Some((s, a, false)),
        Op::Write { s, a } | Op::Update { s, a } => Some((s, a, true)),
        Op::AtomicAccess { s, a, kind, .. } => Some((s, a, kind != AtomicKind::Load)),
        _ => None,
    }
}

/// Is the triple (a1, a2, a3), given whether each writes, unserializable (AVIO: R-W-R,
/// W-W-R, R-W-W, W-R-W)? No serial order of `a2` before or after the pair explains what
/// `a1` and `a3` see.
pub fn unserializable(a1: bool, a2: bool, a3: bool) -> bool {
    if a2 { !(a1 && a3) } else { a1 && a3 }
}
