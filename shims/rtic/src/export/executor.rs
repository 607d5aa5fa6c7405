//! The executor of one async (software) task, with the API both expansions call: rtic-macros
//! 2.4's (`ExecutorHolder`, `exec_new`, `exec_from_holder`: the executor in a `static`) and
//! 2.3's (`AsyncTaskExecutorPtr`, `new_N_args`, `from_ptr_N_args`: the executor on `main`'s
//! stack, a `static` pointing at it).
//!
//! Its flags are plain atomics, not instrumented ones: the scheduling points of an async
//! task are its requests (the spawn, each wake: [`super::dispatch::pended`]) and its polls,
//! which its dispatcher's handler makes one by one in an order the seed draws
//! ([`super::dispatch`]); the flags are bookkeeping of this crate. Each task is an interrupt
//! source of the kernel of its own (`Firing::Polled`), registered at its first request, so
//! that its polls are a context of their own in events, named after the task.

use core::cell::UnsafeCell;
use core::convert::Infallible;
use core::future::Future;
use core::mem::{ManuallyDrop, MaybeUninit};
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, Ordering};

use super::dispatch::{self, Task};
use super::wakers;
use core::task::{Context, RawWaker, Waker};

/// Executor for an async task.
pub struct AsyncTaskExecutor<F: Future + 'static> {
    /// The task's future, valid while `running`.
    task: UnsafeCell<MaybeUninit<F>>,
    /// A future is in `task` (spawned, not finished).
    running: AtomicBool,
    /// A wake (or the spawn) asked for a poll.
    pending: AtomicBool,
    /// The task's interrupt source in the kernel (`dispatch::NO_SOURCE` until its first
    /// request).
    source: AtomicU8,
}

// SAFETY: `task` is written only by the spawn that won `running`, and polled only by the
// dispatcher of the task's priority, which never preempts itself.
unsafe impl<F: Future + 'static> Sync for AsyncTaskExecutor<F> {}

impl<F: Future + 'static> Default for AsyncTaskExecutor<F> {
    fn default() -> Self {
        Self::new()
    }
}

macro_rules! args_constructors {
    ($($new:ident, $from_ptr:ident: $($t:ident),*;)*) => {
        impl<F: Future + 'static> AsyncTaskExecutor<F> {
            $(
                /// An executor for a task taking these arguments (rtic-macros 2.3).
                #[inline(always)]
                pub fn $new<$($t,)* Fun: Fn($($t,)*) -> F>(_f: Fun) -> Self {
                    Self::new()
                }

                /// The executor `ptr` points at (rtic-macros 2.3).
                ///
                /// # Safety
                /// `ptr` was set to an executor of this type.
                #[inline(always)]
                pub unsafe fn $from_ptr<$($t,)* Fun: Fn($($t,)*) -> F>(
                    _f: Fun,
                    ptr: &AsyncTaskExecutorPtr,
                ) -> &Self {
                    // SAFETY: per the contract.
                    unsafe { &*(ptr.get() as *const Self) }
                }
            )*
        }
    };
}

args_constructors! {
    new_0_args, from_ptr_0_args: ;
    new_1_args, from_ptr_1_args: A1;
    new_2_args, from_ptr_2_args: A1, A2;
    new_3_args, from_ptr_3_args: A1, A2, A3;
    new_4_args, from_ptr_4_args: A1, A2, A3, A4;
    new_5_args, from_ptr_5_args: A1, A2, A3, A4, A5;
    new_6_args, from_ptr_6_args: A1, A2, A3, A4, A5, A6;
    new_7_args, from_ptr_7_args: A1, A2, A3, A4, A5, A6, A7;
    new_8_args, from_ptr_8_args: A1, A2, A3, A4, A5, A6, A7, A8;
    new_9_args, from_ptr_9_args: A1, A2, A3, A4, A5, A6, A7, A8, A9;
    new_10_args, from_ptr_10_args: A1, A2, A3, A4, A5, A6, A7, A8, A9, A10;
    new_11_args, from_ptr_11_args: A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11;
    new_12_args, from_ptr_12_args: A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12;
    new_13_args, from_ptr_13_args: A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13;
    new_14_args, from_ptr_14_args: A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14;
    new_15_args, from_ptr_15_args: A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15;
    new_16_args, from_ptr_16_args: A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16;
}

impl<F: Future + 'static> AsyncTaskExecutor<F> {
    /// An executor with no task.
    #[inline(always)]
    pub const fn new() -> Self {
        Self {
            task: UnsafeCell::new(MaybeUninit::uninit()),
            running: AtomicBool::new(false),
            pending: AtomicBool::new(false),
            source: AtomicU8::new(dispatch::NO_SOURCE),
        }
    }

    /// This executor, type-erased, as the dispatcher handles it.
    fn task(&self, wake: fn()) -> Task {
        Task {
            exec: self as *const Self as *const (),
            poll: Self::poll_erased,
            ready: Self::ready_erased,
            source: Self::source_erased,
            name: core::any::type_name::<F>(),
            wake,
        }
    }

    /// # Safety
    /// `exec` is an `AsyncTaskExecutor<F>`.
    unsafe fn poll_erased(exec: *const (), wake: fn()) {
        // SAFETY: per the contract.
        unsafe { (*(exec as *const Self)).poll_now(wake) }
    }

    /// # Safety
    /// As for `poll_erased`.
    unsafe fn ready_erased(exec: *const ()) -> bool {
        // SAFETY: per the contract.
        let exec = unsafe { &*(exec as *const Self) };
        exec.is_running() && exec.pending.load(Ordering::Acquire)
    }

    /// # Safety
    /// As for `poll_erased`.
    unsafe fn state_erased(exec: *const ()) -> (bool, bool) {
        // SAFETY: per the contract.
        let exec = unsafe { &*(exec as *const Self) };
        (exec.is_running(), exec.pending.load(Ordering::Acquire))
    }

    /// # Safety
    /// As for `poll_erased`.
    unsafe fn source_erased(exec: *const ()) -> &'static AtomicU8 {
        // SAFETY: per the contract; executors live as long as the program (a `static`, or
        // `main`'s frame).
        unsafe { &(*(exec as *const Self)).source }
    }

    /// Is a task spawned and not finished?
    #[inline(always)]
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::Relaxed)
    }

    /// Asks for a poll (a wake, or the spawn): a request of the task's source, made when
    /// the expansion pends the dispatcher right after.
    #[inline(always)]
    pub fn set_pending(&self) {
        self.pending.store(true, Ordering::Release);
        wakers::woken(self as *const Self as *const ());
        dispatch::pended(self.task(dispatch::no_wake));
    }

    /// Reserves the executor for a spawn; `false` when its task still runs.
    ///
    /// # Safety
    /// When it returns `true`, [`AsyncTaskExecutor::spawn`] must follow.
    #[inline(always)]
    pub unsafe fn try_allocate(&self) -> bool {
        // A load and a store (ARMv6-M has no swap): under Jostle nothing runs between two
        // instructions that are no scheduling point.
        if self.running.load(Ordering::Acquire) {
            return false;
        }
        self.running.store(true, Ordering::Release);
        true
    }

    /// Puts the spawned task's future in place and asks for its first poll.
    ///
    /// # Safety
    /// After a successful [`AsyncTaskExecutor::try_allocate`].
    #[inline(always)]
    pub unsafe fn spawn(&self, future: F) {
        // SAFETY: `running` was won by this spawn, so nothing else touches `task`.
        unsafe { self.task.get().write(MaybeUninit::new(future)) };
        self.set_pending();
    }

    /// A waker that calls `wake` (the expansion's: set this executor pending, pend the
    /// dispatcher), for the application to keep (the expansion's `task_waker()`): counted
    /// among the task's wakers alive ([`wakers`]).
    #[inline(always)]
    pub fn waker(&self, wake: fn()) -> Waker {
        wakers::made(wake);
        // SAFETY: the vtable's functions treat the data as the `fn()` it is.
        unsafe { Waker::from_raw(RawWaker::new(wake as *const (), &wakers::COUNTED)) }
    }

    /// The dispatcher's call for this task: inside a dispatcher's handler, the task joins
    /// the polls the dispatcher makes after its body ([`dispatch`]); elsewhere (the
    /// priority-0 dispatcher of `main`) it is polled at once.
    #[inline(always)]
    pub fn poll(&self, wake: fn()) {
        if dispatch::collect(self.task(wake)) {
            return;
        }
        if !self.is_running() || !self.pending.load(Ordering::Acquire) {
            dispatch::idle_poll(self as *const Self as *const ());
            return;
        }
        dispatch::progress();
        self.poll_now(wake);
    }

    /// Polls the task once if it is running and was asked for a poll (clearing the ask).
    #[inline(always)]
    fn poll_now(&self, wake: fn()) {
        if !self.is_running() || !self.pending.load(Ordering::Acquire) {
            return;
        }
        self.pending.store(false, Ordering::Relaxed);
        let me = self as *const Self as *const ();
        let k = self.source.load(Ordering::Relaxed);
        wakers::bind(k, wake, me, Self::state_erased);
        // The waker lent to the poll is the counted kind, so that it `will_wake` like its
        // clones (rtic-common's and embassy-sync's registrations keep a waker that does and
        // wake one that does not: with two kinds, every poll that registers would wake its
        // own task again). It counts while the poll runs and dies with it.
        wakers::lent(wake);
        // SAFETY: the vtable's functions treat the data as the `fn()` it is; the waker is
        // never dropped (`ManuallyDrop`): `wakers::returned` ends its count.
        let waker = ManuallyDrop::new(unsafe {
            Waker::from_raw(RawWaker::new(wake as *const (), &wakers::COUNTED))
        });
        let mut cx = Context::from_waker(&waker);
        // SAFETY: a running executor's `task` holds the future, pinned in this executor
        // (a `static`, or `main`'s frame, which never returns).
        let future = unsafe { Pin::new_unchecked(&mut *(self.task.get() as *mut F)) };
        let ready = future.poll(&mut cx).is_ready();
        wakers::returned(wake);
        if ready {
            // As RTIC's executor: the finished future stays in place (a next spawn writes
            // over it).
            self.running.store(false, Ordering::Release);
            wakers::woken(me);
        } else {
            wakers::suspended(k);
        }
    }
}

/// Asserts (in types) that a task returning `!` is backed by a function returning `!`.
pub fn assert_task_diverges<F, I>(f: F) -> F
where
    I: Into<Infallible>,
    F: Future<Output = I>,
{
    f
}

//============ rtic-macros 2.3: the executor on main's stack, a static pointing at it

/// Where a task's executor is (rtic-macros 2.3: on `main`'s stack).
pub struct AsyncTaskExecutorPtr {
    ptr: AtomicPtr<()>,
}

impl AsyncTaskExecutorPtr {
    /// No executor yet.
    pub const fn new() -> Self {
        Self {
            ptr: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// Points at `executor` (in `main`, which never returns).
    #[inline(always)]
    pub fn set_in_main<F: Future + 'static>(&self, executor: &ManuallyDrop<AsyncTaskExecutor<F>>) {
        self.ptr
            .store(&**executor as *const _ as *mut (), Ordering::Relaxed);
    }

    /// The executor's address.
    #[inline(always)]
    pub fn get(&self) -> *const () {
        self.ptr.load(Ordering::Relaxed)
    }
}

impl Default for AsyncTaskExecutorPtr {
    fn default() -> Self {
        Self::new()
    }
}

//============ rtic-macros 2.4: the executor in a static of bytes

/// Binds the future type of an `async fn` (so that its size can be asked in a `const`).
pub trait ExecFn<Args>: Copy {
    /// The future the function returns.
    type Fut: Future + 'static;
}

macro_rules! exec_fn_impl {
    ($($t:ident),*) => {
        impl<Fun, Fut, $($t,)*> ExecFn<($($t,)*)> for Fun
        where
            Fun: Copy + FnOnce($($t,)*) -> Fut,
            Fut: Future + 'static,
        {
            type Fut = Fut;
        }
    };
}

exec_fn_impl!();
exec_fn_impl!(T0);
exec_fn_impl!(T0, T1);
exec_fn_impl!(T0, T1, T2);
exec_fn_impl!(T0, T1, T2, T3);
exec_fn_impl!(T0, T1, T2, T3, T4);
exec_fn_impl!(T0, T1, T2, T3, T4, T5);
exec_fn_impl!(T0, T1, T2, T3, T4, T5, T6);
exec_fn_impl!(T0, T1, T2, T3, T4, T5, T6, T7);
exec_fn_impl!(T0, T1, T2, T3, T4, T5, T6, T7, T8);
exec_fn_impl!(T0, T1, T2, T3, T4, T5, T6, T7, T8, T9);
exec_fn_impl!(T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10);
exec_fn_impl!(T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11);
exec_fn_impl!(T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12);
exec_fn_impl!(T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13);
exec_fn_impl!(
    T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14
);
exec_fn_impl!(
    T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14, T15
);

/// The size of a task's executor (`ExecutorHolder`'s first parameter).
pub const fn exec_size<F, Args, Fut>(_f: F) -> usize
where
    F: ExecFn<Args, Fut = Fut>,
    Fut: Future + 'static,
{
    size_of::<AsyncTaskExecutor<Fut>>()
}

/// The alignment of a task's executor (`ExecutorHolder`'s second parameter).
pub const fn exec_align<F, Args, Fut>(_f: F) -> usize
where
    F: ExecFn<Args, Fut = Fut>,
    Fut: Future + 'static,
{
    align_of::<AsyncTaskExecutor<Fut>>()
}

/// A task's executor, to be transmuted into the `ExecutorHolder` that stores it.
pub const fn exec_new<F, Args, Fut>(_f: F) -> AsyncTaskExecutor<Fut>
where
    F: ExecFn<Args, Fut = Fut>,
    Fut: Future + 'static,
{
    AsyncTaskExecutor::new()
}

/// Storage for one executor whose future type cannot be named: bytes of its size and
/// alignment.
#[allow(private_bounds)]
#[repr(C)]
pub struct ExecutorHolder<const SIZE: usize, const ALIGN: usize>
where
    Align<ALIGN>: Alignment,
{
    data: UnsafeCell<[MaybeUninit<u8>; SIZE]>,
    align: Align<ALIGN>,
}

// SAFETY: as for `AsyncTaskExecutor`.
unsafe impl<const SIZE: usize, const ALIGN: usize> Sync for ExecutorHolder<SIZE, ALIGN> where
    Align<ALIGN>: Alignment
{
}

/// The executor a holder was initialised with.
///
/// # Safety
/// `holder` was initialised by transmuting [`exec_new`] of the same function.
#[allow(private_bounds)]
#[inline(always)]
pub unsafe fn exec_from_holder<F, Args, Fut, const SIZE: usize, const ALIGN: usize>(
    _f: F,
    holder: &'static ExecutorHolder<SIZE, ALIGN>,
) -> &'static AsyncTaskExecutor<Fut>
where
    F: ExecFn<Args, Fut = Fut>,
    Fut: Future + 'static,
    Align<ALIGN>: Alignment,
{
    const {
        assert!(SIZE == size_of::<AsyncTaskExecutor<Fut>>());
        assert!(ALIGN == align_of::<AsyncTaskExecutor<Fut>>());
    }
    // SAFETY: per the contract, the bytes are that executor.
    unsafe { &*holder.data.get().cast() }
}

/// A zero-sized field of alignment `N`.
#[allow(private_bounds)]
#[repr(transparent)]
pub struct Align<const N: usize>([<Self as Alignment>::Archetype; 0])
where
    Self: Alignment;

trait Alignment {
    type Archetype: Copy;
}

macro_rules! aligns {
    ($($name:ident: $n:literal,)*) => {
        $(
            #[derive(Clone, Copy)]
            #[repr(align($n))]
            struct $name;

            impl Alignment for Align<$n> {
                type Archetype = $name;
            }
        )*
    };
}

aligns!(
    Align1: 1,
    Align2: 2,
    Align4: 4,
    Align8: 8,
    Align16: 16,
    Align32: 32,
    Align64: 64,
    Align128: 128,
    Align256: 256,
    Align512: 512,
    Align1024: 1024,
    Align2048: 2048,
    Align4096: 4096,
);
