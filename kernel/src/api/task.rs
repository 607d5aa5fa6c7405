use super::caller_site;
use crate::op::Op;
use crate::port;
use crate::stack::Stack;
use crate::task::TaskId;

/// A spawned task, to be joined.
#[must_use = "a task should be joined"]
pub struct JoinHandle {
    id: TaskId,
}

impl JoinHandle {
    /// The task's id.
    pub fn id(&self) -> TaskId {
        self.id
    }

    /// Waits for the task to end (a join: happens-before from its end to here).
    #[track_caller]
    pub fn join(self) {
        port::point(Op::Join {
            s: caller_site(),
            child: self.id,
        });
    }
}

/// Spawns a task running `entry` on `stack`. The spawn is a scheduling point.
#[track_caller]
pub fn spawn<const BYTES: usize>(stack: &'static Stack<BYTES>, entry: fn()) -> JoinHandle {
    let s = caller_site();
    let id = port::spawn(stack.region(), entry);
    port::point(Op::Spawn { s, child: id });
    JoinHandle { id }
}

/// A scheduling point with no shared effect.
#[track_caller]
pub fn yield_now() {
    port::yield_point(caller_site());
}

/// Runs `f` as an instrumented frame: entry and exit are events (DrFinder's call stacks).
#[track_caller]
pub fn frame<R>(f: impl FnOnce() -> R) -> R {
    let s = caller_site();
    port::point(Op::FrameEnter { s });
    let r = f();
    port::point(Op::FrameExit { s });
    r
}

/// The running task's id.
pub fn current_task() -> TaskId {
    port::current()
}

/// Firmware argument `i` from the configuration block (`jostle run --arg`), if given.
pub fn arg(i: usize) -> Option<u32> {
    port::arg(i)
}

/// Which of the firmware's declared tests this run runs (the configuration block's `test`;
/// `jostle::tests!` dispatches on it).
pub fn selected_test() -> u32 {
    port::test()
}

/// An input value in `0..bound` that the run's seed chooses (0 when `bound` is 0): an
/// external value the test should explore, such as a sensor reading, a received length or
/// a register the hardware sets. Runs draw different inputs as they draw different
/// schedules, and a replay draws the same ones. Not a scheduling point and not an event;
/// inputs come from a stream of their own, so drawing one changes no scheduling decision.
pub fn input(bound: u32) -> u32 {
    port::input(bound)
}

/// Firmware argument `i`, or `default` when the block does not set it.
pub fn arg_or(i: usize, default: u32) -> u32 {
    arg(i).unwrap_or(default)
}
