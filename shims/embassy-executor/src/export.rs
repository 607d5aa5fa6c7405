//! What the `#[embassy_executor::task]` and `main` macros of embassy-executor-macros 0.8
//! name in `embassy_executor::_export` (not covered by semver, as in Embassy): the task
//! function's future type, the pool's storage with the size and alignment of a
//! [`TaskPool`], and the `!` type.

use crate::raw::TaskPool;
use core::cell::UnsafeCell;
use core::future::Future;
use core::mem::MaybeUninit;

/// What a task's future may resolve to: `()` or `!`.
#[diagnostic::on_unimplemented(
    message = "task futures must resolve to `()` or `!`",
    note = "use `async fn` or change the return type to `impl Future<Output = ()>`"
)]
pub trait TaskReturnValue {}
impl TaskReturnValue for () {}
impl TaskReturnValue for Never {}

/// A task function taking `Args`, and the future it returns.
#[diagnostic::on_unimplemented(
    message = "task futures must resolve to `()` or `!`",
    note = "use `async fn` or change the return type to `impl Future<Output = ()>`"
)]
pub trait TaskFn<Args>: Copy {
    /// The future the function returns.
    type Fut: Future<Output: TaskReturnValue> + 'static;
}

macro_rules! task_fn {
    ($($arg:ident),*) => {
        impl<F, Fut, $($arg,)*> TaskFn<($($arg,)*)> for F
        where
            F: Copy + FnOnce($($arg,)*) -> Fut,
            Fut: Future<Output: TaskReturnValue> + 'static,
        {
            type Fut = Fut;
        }
    };
}

task_fn!();
task_fn!(A0);
task_fn!(A0, A1);
task_fn!(A0, A1, A2);
task_fn!(A0, A1, A2, A3);
task_fn!(A0, A1, A2, A3, A4);
task_fn!(A0, A1, A2, A3, A4, A5);
task_fn!(A0, A1, A2, A3, A4, A5, A6);
task_fn!(A0, A1, A2, A3, A4, A5, A6, A7);
task_fn!(A0, A1, A2, A3, A4, A5, A6, A7, A8);
task_fn!(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9);
task_fn!(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10);
task_fn!(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11);

/// A pool's bytes: `SIZE` bytes aligned to `ALIGN` (the macro transmutes a [`TaskPool`]
/// into it, then reads it back as one).
#[repr(C)]
pub struct TaskPoolHolder<const SIZE: usize, const ALIGN: usize>
where
    Align<ALIGN>: Alignment,
{
    data: UnsafeCell<[MaybeUninit<u8>; SIZE]>,
    align: Align<ALIGN>,
}

// SAFETY: as a `TaskPool`'s (one task or handler runs at a time).
unsafe impl<const SIZE: usize, const ALIGN: usize> Send for TaskPoolHolder<SIZE, ALIGN> where
    Align<ALIGN>: Alignment
{
}
// SAFETY: as above.
unsafe impl<const SIZE: usize, const ALIGN: usize> Sync for TaskPoolHolder<SIZE, ALIGN> where
    Align<ALIGN>: Alignment
{
}

impl<const SIZE: usize, const ALIGN: usize> TaskPoolHolder<SIZE, ALIGN>
where
    Align<ALIGN>: Alignment,
{
    /// The pool's first byte.
    pub const fn get(&self) -> *const u8 {
        self.data.get().cast()
    }
}

/// The size of the pool of a task function's `POOL_SIZE` instances.
pub const fn task_pool_size<F, Args, Fut, const POOL_SIZE: usize>(_: F) -> usize
where
    F: TaskFn<Args, Fut = Fut>,
    Fut: Future + 'static,
{
    size_of::<TaskPool<Fut, POOL_SIZE>>()
}

/// The alignment of that pool.
pub const fn task_pool_align<F, Args, Fut, const POOL_SIZE: usize>(_: F) -> usize
where
    F: TaskFn<Args, Fut = Fut>,
    Fut: Future + 'static,
{
    align_of::<TaskPool<Fut, POOL_SIZE>>()
}

/// That pool, empty.
pub const fn task_pool_new<F, Args, Fut, const POOL_SIZE: usize>(_: F) -> TaskPool<Fut, POOL_SIZE>
where
    F: TaskFn<Args, Fut = Fut>,
    Fut: Future + 'static,
{
    TaskPool::new()
}

/// A zero-sized field aligned to `N`.
#[repr(transparent)]
pub struct Align<const N: usize>([<Self as Alignment>::Archetype; 0])
where
    Self: Alignment;

/// Alignments a pool may need.
pub trait Alignment {
    /// A zero-sized type of that alignment.
    type Archetype: Copy + Eq + Send + Sync + Unpin;
}

macro_rules! alignments {
    ($($name:ident = $n:literal),* $(,)?) => {
        $(
            #[doc(hidden)]
            #[derive(Copy, Clone, PartialEq, Eq)]
            #[repr(align($n))]
            pub struct $name;
            impl Alignment for Align<$n> {
                type Archetype = $name;
            }
        )*
    };
}

alignments!(
    A1 = 1,
    A2 = 2,
    A4 = 4,
    A8 = 8,
    A16 = 16,
    A32 = 32,
    A64 = 64,
    A128 = 128,
    A256 = 256,
    A512 = 512,
    A1024 = 1024,
    A2048 = 2048,
    A4096 = 4096,
    A8192 = 8192,
    A16384 = 16384,
    A32768 = 32768,
    A65536 = 65536,
);

/// The type `!` names in a return type.
pub trait HasOutput {
    /// The output.
    type Output;
}

impl<O> HasOutput for fn() -> O {
    type Output = O;
}

/// `!`.
pub type Never = <fn() -> ! as HasOutput>::Output;
