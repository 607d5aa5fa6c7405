//! Tasks as coroutines: each task runs on a stack of its own (`corosensei`: a guard page
//! below it, a user-space switch), all on the process's one thread, so a task switch costs
//! no OS thread and no system call. The run loop ([`resume`]) runs on the thread's own stack;
//! a task gives the thread back with [`suspend`] when the scheduler picks another (or the run
//! ends) and is resumed when it is picked again.
//!
//! At a run's end the tasks still alive are abandoned where they stand ([`abandon_all`]),
//! as a reset abandons them on the device: their frames are never unwound (a guard they hold
//! is not released, a destructor does not run), and their stacks serve the next run.

use crate::task::TaskId;
use corosensei::stack::{DefaultStack, Stack as _};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A task's stack on the host. The firmware's `Stack<N>` is sized for the device; host
/// frames are larger (64-bit, unoptimised builds, `std` formatting in a panic), so every
/// task gets this much address space. Pages are committed only when touched.
const HOST_STACK: usize = 1024 * 1024;

type Task = Coroutine<(), (), (), DefaultStack>;

thread_local! {
    /// The coroutines of the run's tasks, by id (`None`: free, or resumed right now).
    static TASKS: RefCell<Vec<Option<Task>>> = const { RefCell::new(Vec::new()) };
    /// Stacks of ended tasks, for the next ones.
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
    /// The running coroutine's way back to the run loop.
    static YIELDER: Cell<*const Yielder<(), ()>> = const { Cell::new(std::ptr::null()) };
}

/// Creates task `id`'s coroutine, which runs `body` when first resumed.
pub(super) fn create(id: TaskId, body: impl FnOnce() + 'static) {
    let stack = STACKS
        .with(|s| s.borrow_mut().pop())
        .map_or_else(|| DefaultStack::new(HOST_STACK), Ok)
        .unwrap_or_else(|e| {
            eprintln!("jostle: cannot map a task stack of {HOST_STACK} bytes: {e}");
            std::process::exit(2)
        });
    super::overflow::watch(id, stack.base().get(), stack.limit().get());
    let task = Coroutine::with_stack(stack, move |yielder: &Yielder<(), ()>, ()| {
        YIELDER.with(|y| y.set(yielder));
        body();
    });
    TASKS.with(|t| {
        let mut t = t.borrow_mut();
        let i = usize::from(id);
        if t.len() <= i {
            t.resize_with(i + 1, || None);
        }
        t[i] = Some(task);
    });
}

/// Runs task `id` until it suspends, ends or panics (the panic hook has recorded it; the
/// unwinding stops here).
pub(super) fn resume(id: TaskId) {
    let mut task = TASKS
        .with(|t| {
            t.borrow_mut()
                .get_mut(usize::from(id))
                .and_then(Option::take)
        })
        .unwrap_or_else(|| {
            panic!("jostle: the scheduler picked task {id}, which has no coroutine")
        });
    let result = catch_unwind(AssertUnwindSafe(|| task.resume(())));
    match result {
        Ok(CoroutineResult::Yield(())) => {
            TASKS.with(|t| t.borrow_mut()[usize::from(id)] = Some(task));
        }
        Ok(CoroutineResult::Return(())) | Err(_) => free(id, task),
    }
}

/// Gives the thread back to the run loop; returns when this task is resumed.
pub(super) fn suspend() {
    let yielder = YIELDER.with(Cell::get);
    assert!(
        !yielder.is_null(),
        "jostle: a scheduling point outside a task"
    );
    // SAFETY: `yielder` is the running coroutine's own (set when it started and again
    // after each resume below); it lives as long as the coroutine.
    unsafe { (*yielder).suspend(()) };
    YIELDER.with(|y| y.set(yielder));
}

/// Abandons every task of the run (see the module's documentation).
pub(super) fn abandon_all() {
    let tasks: Vec<(usize, Task)> = TASKS.with(|t| {
        t.borrow_mut()
            .drain(..)
            .enumerate()
            .filter_map(|(id, task)| Some((id, task?)))
            .collect()
    });
    for (id, mut task) in tasks {
        if !task.done() {
            // SAFETY: as a reset on the device: the frames on this stack are forgotten,
            // never returned to. What they own is leaked (firmware owns no heap), and
            // nothing outside the stack points into it once the run is over.
            unsafe { task.force_reset() };
        }
        free(id as TaskId, task);
    }
    YIELDER.with(|y| y.set(std::ptr::null()));
}

/// Forgets every task without touching its stack, before the process exits from inside one
/// (the thread's exit would otherwise drop them, unwinding the one that is running).
pub(super) fn forget_all() {
    TASKS.with(|t| {
        if let Ok(mut t) = t.try_borrow_mut() {
            std::mem::forget(std::mem::take(&mut *t));
        }
    });
}

fn free(id: TaskId, task: Task) {
    super::overflow::unwatch(id);
    let stack = task.into_stack();
    STACKS.with(|s| s.borrow_mut().push(stack));
}
