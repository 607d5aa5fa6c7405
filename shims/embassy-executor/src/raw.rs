//! Tasks' storage, their wakers and what a poll does. All of the shim's `unsafe` that is
//! not the CPU's (the arch file) is here.
//!
//! A task is a [`TaskHeader`] (its state, its executor, its wake-up signal) followed by its
//! future ([`TaskStorage`]); pools are arrays of storages in the statics the
//! `#[embassy_executor::task]` macro declares. Each spawned task runs as a Jostle task of
//! its own (`crate::executor`); its waker, when woken, sends the task's wake-up signal (a
//! kernel `Signal`, a scheduling point), merged as Embassy merges wakes of a task already
//! queued.

use crate::spawner::{SpawnError, SpawnToken};
use core::cell::{Cell, UnsafeCell};
use core::future::Future;
use core::mem::MaybeUninit;
use core::pin::Pin;
use core::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
use jostle_kernel::TaskId;

/// What every task is, whatever its future: the part the executor and the wakers see.
pub struct TaskHeader {
    /// Spawned and not yet finished (its storage is taken).
    spawned: Cell<bool>,
    /// The host port's run that spawned it (see [`TaskHeader::is_spawned`]).
    #[cfg(not(target_os = "none"))]
    run: Cell<u32>,
    /// Woken since its last poll began: a wake that finds it set sends nothing (the task
    /// will poll anyway), as Embassy's run queue does not queue a task twice.
    pub(crate) queued: Cell<bool>,
    /// Woken by itself during its poll, with no signal sent (see [`wake_header`]).
    pub(crate) woke_itself: Cell<bool>,
    /// The deadline of its timer, `u64::MAX` when none (see `crate::time_driver`).
    pub(crate) timer_at: Cell<u64>,
    /// The Jostle task running it (an interrupt executor's task: its handler context).
    pub(crate) task: Cell<TaskId>,
    /// An interrupt executor's task: its interrupt source (polled by the executor's line),
    /// kept for the boot once registered (`crate::executor::NO_SOURCE` before).
    pub(crate) source: Cell<u8>,
    /// Its executor's id (the lock its polls hold), 0 before it is spawned.
    pub(crate) executor: Cell<u32>,
    /// The call site that spawned it (its polls' and waits' site).
    pub(crate) site: Cell<u32>,
    /// Return addresses on its stack when it last registered its waker (where it waits).
    pub(crate) wait_pcs: Cell<[u32; 4]>,
    /// Polls its future once (the storage's monomorphised poll).
    poll_fn: unsafe fn(&'static TaskHeader) -> Poll<()>,
    /// Its pool's address and its index there, `0xFF` when the pool has one slot.
    pool: Cell<(usize, u8)>,
    pub(crate) metadata: crate::Metadata,
}

// SAFETY: the kernel runs one task or handler at a time, and a header's cells are only
// touched between two scheduling points (never across one).
unsafe impl Sync for TaskHeader {}

impl TaskHeader {
    const fn new(poll_fn: unsafe fn(&'static TaskHeader) -> Poll<()>) -> Self {
        TaskHeader {
            spawned: Cell::new(false),
            #[cfg(not(target_os = "none"))]
            run: Cell::new(0),
            queued: Cell::new(false),
            woke_itself: Cell::new(false),
            timer_at: Cell::new(u64::MAX),
            task: Cell::new(0),
            source: Cell::new(crate::executor::NO_SOURCE),
            executor: Cell::new(0),
            site: Cell::new(0),
            wait_pcs: Cell::new([0; 4]),
            poll_fn,
            pool: Cell::new((0, 0xFF)),
            metadata: crate::Metadata::new(),
        }
    }

    /// The task's wake-up signal: its header's address.
    pub(crate) fn wake_signal(&'static self) -> u32 {
        jostle_kernel::port::addr(self as *const Self as *const ())
    }

    /// Spawned and not yet finished? On the host port, in this run: one process makes many
    /// runs, and a task the previous run left unfinished was abandoned with its run, as a
    /// reset abandons it on the device (its future is forgotten, never dropped).
    pub(crate) fn is_spawned(&self) -> bool {
        #[cfg(not(target_os = "none"))]
        if self.run.get() != jostle_kernel::port::epoch() {
            return false;
        }
        self.spawned.get()
    }

    /// Takes the storage: `false` if it holds a task already.
    fn take(&self) -> bool {
        if self.is_spawned() {
            return false;
        }
        self.spawned.set(true);
        #[cfg(not(target_os = "none"))]
        self.run.set(jostle_kernel::port::epoch());
        true
    }

    /// Its pool's address and its index there (for the task's name).
    pub(crate) fn pool(&self) -> (usize, u8) {
        self.pool.get()
    }

    /// Polls the future once; `Ready` drops it and frees the storage.
    pub(crate) fn poll(&'static self) -> Poll<()> {
        // SAFETY: `poll_fn` is the storage's own, and only the task's Jostle task polls.
        unsafe { (self.poll_fn)(self) }
    }
}

/// A reference to a spawned (or spawning) task.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TaskRef {
    pub(crate) header: &'static TaskHeader,
}

// SAFETY: see `TaskHeader`'s `Sync`.
unsafe impl Send for TaskRef {}
unsafe impl Sync for TaskRef {}

impl TaskRef {
    /// The task's id: its header's address, as Embassy's.
    pub fn id(&self) -> u32 {
        self.header as *const TaskHeader as usize as u32
    }

    /// The task's metadata.
    pub fn metadata(&self) -> &'static crate::Metadata {
        &self.header.metadata
    }
}

impl core::fmt::Debug for TaskHeader {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TaskHeader")
            .field("task", &self.task.get())
            .finish_non_exhaustive()
    }
}

impl PartialEq for TaskHeader {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::eq(self, other)
    }
}
impl Eq for TaskHeader {}

/// Storage for one task: its header and its future.
#[repr(C)]
pub struct TaskStorage<F: Future + 'static> {
    header: TaskHeader,
    future: UnsafeCell<MaybeUninit<F>>,
}

// SAFETY: see `TaskHeader`'s `Sync`; the future is touched only by its own task's polls.
unsafe impl<F: Future + 'static> Sync for TaskStorage<F> {}

impl<F: Future + 'static> TaskStorage<F> {
    /// Storage with no task in it.
    pub const fn new() -> Self {
        TaskStorage {
            header: TaskHeader::new(Self::poll),
            future: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Polls the future of the storage whose header is `header`.
    ///
    /// # Safety
    /// `header` must be this storage's header (`repr(C)`: the header comes first), with a
    /// future written by `claim`.
    unsafe fn poll(header: &'static TaskHeader) -> Poll<()> {
        // SAFETY: per the contract, the header is the storage's first field.
        let this = unsafe { &*(header as *const TaskHeader as *const Self) };
        let waker = waker(header);
        let mut cx = Context::from_waker(&waker);
        // SAFETY: the future was written when the task was claimed and is never moved.
        let future = unsafe { Pin::new_unchecked((*this.future.get()).assume_init_mut()) };
        match future.poll(&mut cx) {
            Poll::Ready(_) => {
                // SAFETY: done: dropped once, then the storage is free again.
                unsafe { (*this.future.get()).assume_init_drop() };
                header.metadata.reset();
                header.spawned.set(false);
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// Takes the storage for a new task running the future `future` makes; `None` when it
    /// holds a task already.
    fn claim(&'static self, future: impl FnOnce() -> F) -> Option<TaskRef> {
        if !self.header.take() {
            return None;
        }
        // SAFETY: the storage was free: nothing else refers to its future.
        unsafe { (*self.future.get()).write(future()) };
        self.header.queued.set(false);
        self.header.woke_itself.set(false);
        self.header.timer_at.set(u64::MAX);
        self.header.executor.set(0);
        self.header.pool.set((self as *const Self as usize, 0xFF));
        Some(TaskRef {
            header: &self.header,
        })
    }

    /// Spawns a task in this storage (`Busy` if it holds one).
    pub fn spawn(
        &'static self,
        future: impl FnOnce() -> F,
    ) -> Result<SpawnToken<impl Sized>, SpawnError> {
        match self.claim(future) {
            // SAFETY: a freshly claimed task.
            Some(task) => Ok(unsafe { SpawnToken::<F>::new(task) }),
            None => Err(SpawnError::Busy),
        }
    }
}

impl<F: Future + 'static> Default for TaskStorage<F> {
    fn default() -> Self {
        Self::new()
    }
}

/// `N` storages for instances of one task function (`#[task(pool_size = N)]`).
pub struct TaskPool<F: Future + 'static, const N: usize> {
    pool: [TaskStorage<F>; N],
}

impl<F: Future + 'static, const N: usize> TaskPool<F, N> {
    /// A pool with no task in it.
    pub const fn new() -> Self {
        TaskPool {
            pool: [const { TaskStorage::new() }; N],
        }
    }

    fn spawn_impl<T>(
        &'static self,
        future: impl FnOnce() -> F,
    ) -> Result<SpawnToken<T>, SpawnError> {
        let Some(i) = self.pool.iter().position(|s| !s.header.is_spawned()) else {
            return Err(SpawnError::Busy);
        };
        let task = self.pool[i].claim(future).ok_or(SpawnError::Busy)?;
        let index = if N == 1 { 0xFF } else { i as u8 };
        task.header.pool.set((self as *const Self as usize, index));
        // SAFETY: a freshly claimed task.
        Ok(unsafe { SpawnToken::new(task) })
    }

    /// Spawns an instance in the first free storage (`Busy` if none is).
    pub fn spawn(
        &'static self,
        future: impl FnOnce() -> F,
    ) -> Result<SpawnToken<impl Sized>, SpawnError> {
        self.spawn_impl::<F>(future)
    }

    /// The macro's spawn for an `async fn` task (the token's type is the function's).
    ///
    /// # Safety
    /// `FutFn` must be the task function's type (as the macro passes it).
    pub unsafe fn _spawn_async_fn<FutFn>(
        &'static self,
        future: FutFn,
    ) -> Result<SpawnToken<impl Sized>, SpawnError>
    where
        FutFn: FnOnce() -> F,
    {
        self.spawn_impl::<FutFn>(future)
    }
}

impl<F: Future + 'static, const N: usize> Default for TaskPool<F, N> {
    fn default() -> Self {
        Self::new()
    }
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake, drop_waker);

/// The waker of `header`'s task.
fn waker(header: &'static TaskHeader) -> Waker {
    // SAFETY: the vtable's functions take the header's address as their data.
    unsafe { Waker::from_raw(RawWaker::new(header as *const _ as *const (), &VTABLE)) }
}

fn clone(data: *const ()) -> RawWaker {
    // SAFETY: the data is a `&'static TaskHeader` (see `waker`).
    let header = unsafe { &*(data as *const TaskHeader) };
    // A clone is the registration of the waker somewhere (a Signal's, a Channel's
    // WakerRegistration): the stack says where the task waits.
    let me = jostle_kernel::port::current();
    if header.task.get() == me {
        header.wait_pcs.set(waiter_return_addresses(me));
    }
    RawWaker::new(data, &VTABLE)
}

/// Return addresses on the stack of the task `me` registering its waker.
fn waiter_return_addresses(me: TaskId) -> [u32; 4] {
    #[cfg(target_os = "none")]
    if me >= jostle_kernel::event::IRQ_CONTEXT {
        // An interrupt executor's task, polled by its handler on the main stack.
        return jostle_kernel::port::return_addresses();
    }
    let _ = me;
    crate::arch::return_addresses()
}

fn wake(data: *const ()) {
    // SAFETY: as in `clone`.
    let header = unsafe { &*(data as *const TaskHeader) };
    wake_header(header);
}

fn drop_waker(_: *const ()) {}

/// Where the waker's `clone` and `wake` start (the host port's stack walk keeps the frames
/// above them).
#[cfg(not(target_os = "none"))]
pub(crate) fn waker_entries() -> [usize; 2] {
    [clone as *const () as usize, wake as *const () as usize]
}

/// Wakes the task: its wake-up signal, unless it is queued already. At the full trace
/// level the wake names where it comes from (`WakeFrom`: the return addresses on the
/// waker's stack, which the host resolves to the application's line). A task that wakes
/// itself (only its poll runs its code: `yield_now`, a future that asks to be polled
/// again) sends nothing: only it waits on its signal, so the signal and its own wait would
/// cancel out, an edge of its own program order; it is marked instead, and after the poll
/// it goes back to the executor's lock without waiting.
#[track_caller]
fn wake_header(header: &'static TaskHeader) {
    if !header.is_spawned() || header.executor.get() == 0 || header.queued.replace(true) {
        return;
    }
    #[cfg(target_os = "none")]
    if crate::executor::ExecutorCore::of(header.executor.get()).is_interrupt() {
        return crate::interrupt::request(header, core::panic::Location::caller());
    }
    if header.task.get() == jostle_kernel::port::current() {
        header.woke_itself.set(true);
        return;
    }
    let g = header.wake_signal();
    if jostle_kernel::port::values_traced() {
        jostle_kernel::clock::note_wake(g, crate::arch::return_addresses());
    }
    // No decision before it (`Core::execute_now`: a signal commutes with every other
    // context's operation); in a handler, a point as any other.
    jostle_kernel::port::execute_now(jostle_kernel::Op::Signal {
        s: jostle_kernel::port::site(core::panic::Location::caller()),
        g,
    });
}

/// The task a waker wakes.
///
/// # Panics
/// If the waker is not an Embassy task's (this executor's).
pub fn task_from_waker(waker: &Waker) -> TaskRef {
    match try_task_from_waker(waker) {
        Some(task) => task,
        None => panic!("Found waker not created by the Embassy executor."),
    }
}

/// The task a waker wakes, if it is an Embassy task's.
pub(crate) fn try_task_from_waker(waker: &Waker) -> Option<TaskRef> {
    if waker.vtable() != &VTABLE {
        return None;
    }
    // SAFETY: our vtable's data is a `&'static TaskHeader`.
    Some(TaskRef {
        header: unsafe { &*(waker.data() as *const TaskHeader) },
    })
}

/// Wakes a task.
pub fn wake_task(task: TaskRef) {
    wake_header(task.header);
}

/// Wakes a task (the pender is the kernel: the same as [`wake_task`]).
pub fn wake_task_no_pend(task: TaskRef) {
    wake_header(task.header);
}

/// The executor whose id (its static's address) is `id`.
#[cfg(target_os = "none")]
pub(crate) fn executor_of(id: u32) -> &'static crate::executor::ExecutorCore {
    assert!(id != 0, "a task that was never spawned has no executor");
    // SAFETY: ids are addresses of `ExecutorCore` statics (`ExecutorCore::id`).
    unsafe { &*(id as usize as *const crate::executor::ExecutorCore) }
}

/// The executor whose id is `id`: on the host port, ids are numbers the kernel gives
/// addresses in each run, and the thread-mode executor is the only one.
#[cfg(not(target_os = "none"))]
pub(crate) fn executor_of(id: u32) -> &'static crate::executor::ExecutorCore {
    assert!(id != 0, "a task that was never spawned has no executor");
    crate::executor::thread()
}
