//! Spawning: tokens, errors and the two spawners, with embassy-executor 0.10's API.

use crate::raw::{self, TaskRef};
use core::future::{Future, poll_fn};
use core::marker::PhantomData;
use core::task::Poll;

/// A task instance ready to spawn (a task function's return value): pass it to
/// [`Spawner::spawn`]. Dropping it panics, as Embassy's does.
#[must_use = "Calling a task function does nothing on its own. You must spawn the returned SpawnToken, typically with Spawner::spawn()"]
pub struct SpawnToken<S> {
    pub(crate) task: TaskRef,
    phantom: PhantomData<*mut S>,
}

impl<S> SpawnToken<S> {
    /// # Safety
    /// `task` must be a freshly claimed task.
    pub(crate) unsafe fn new(task: TaskRef) -> Self {
        SpawnToken {
            task,
            phantom: PhantomData,
        }
    }

    /// The task's id.
    pub fn id(&self) -> u32 {
        self.task.id()
    }

    /// The task's metadata, to set before it is spawned.
    pub fn metadata(&self) -> &crate::Metadata {
        self.task.metadata()
    }
}

impl<S> Drop for SpawnToken<S> {
    fn drop(&mut self) {
        panic!("SpawnToken instances may not be dropped. You must pass them to Spawner::spawn()")
    }
}

/// Why a spawn failed.
#[derive(Copy, Clone, PartialEq, Eq)]
pub enum SpawnError {
    /// Every storage of the task's pool holds a running instance.
    Busy,
}

impl core::fmt::Debug for SpawnError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Display::fmt(self, f)
    }
}

impl core::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SpawnError::Busy => f.write_str(
                "Busy - Too many instances of this task are already running. Check the `pool_size` attribute of the task.",
            ),
        }
    }
}

impl core::error::Error for SpawnError {}

/// Spawns tasks into an executor (not `Send`: use it from that executor's tasks).
#[derive(Copy, Clone)]
pub struct Spawner {
    pub(crate) executor: &'static crate::executor::ExecutorCore,
    not_send: PhantomData<*mut ()>,
}

impl Spawner {
    pub(crate) fn new(executor: &'static crate::executor::ExecutorCore) -> Self {
        Spawner {
            executor,
            not_send: PhantomData,
        }
    }

    /// The spawner of the executor running the current task.
    ///
    /// # Safety
    /// Only with a `Context` the executor made (as Embassy's).
    pub unsafe fn for_current_executor() -> impl Future<Output = Self> {
        poll_fn(|cx| Poll::Ready(Spawner::new(current_executor(cx))))
    }

    /// Spawns the task: it becomes a Jostle task of its own, at a scheduling point here.
    #[track_caller]
    pub fn spawn<S>(&self, token: SpawnToken<S>) {
        let task = token.task;
        core::mem::forget(token);
        self.executor.spawn(
            task,
            jostle_kernel::port::site(core::panic::Location::caller()),
        );
    }

    /// A spawner that may be sent to other executors (for `Send` tasks only).
    pub fn make_send(&self) -> SendSpawner {
        SendSpawner {
            executor: self.executor,
        }
    }

    /// The executor's unique id.
    pub fn executor_id(&self) -> usize {
        self.executor.id() as usize
    }
}

/// Spawns `Send` tasks into an executor, from anywhere.
#[derive(Copy, Clone)]
pub struct SendSpawner {
    pub(crate) executor: &'static crate::executor::ExecutorCore,
}

impl SendSpawner {
    /// The spawner of the executor running the current task.
    pub fn for_current_executor() -> impl Future<Output = Self> {
        poll_fn(|cx| {
            Poll::Ready(SendSpawner {
                executor: current_executor(cx),
            })
        })
    }

    /// Spawns the task (see [`Spawner::spawn`]).
    #[track_caller]
    pub fn spawn<S: Send>(&self, token: SpawnToken<S>) {
        let task = token.task;
        core::mem::forget(token);
        self.executor.spawn(
            task,
            jostle_kernel::port::site(core::panic::Location::caller()),
        );
    }
}

/// The executor of the task whose waker `cx` holds.
fn current_executor(cx: &core::task::Context<'_>) -> &'static crate::executor::ExecutorCore {
    let task = raw::task_from_waker(cx.waker());
    crate::executor::ExecutorCore::of(task.header.executor.get())
}
