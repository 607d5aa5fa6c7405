//! Inspect_benchmarks/qsort_mt: Diomidis Spinellis' multithreaded quicksort (FreeBSD qsort with a
//! thread pool) via SCTBench; PERIOD `evaluation/Inspect_benchmarks/qsort_mt/qsort_mt.c`, run as
//! `-n 32 -f 4 -h 4 -v`. 5 tasks: main and 4 pool workers; per worker a state (idle, work,
//! term), a range `(a, n)`, a mutex and a condition variable, plus the pool's `mtx_al`. A worker
//! whose partition leaves two halves above 4 elements hands the left one to an idle worker.
//! Bug: assertion ("Failed to verify sorted list"). A worker has just gone idle (state set,
//! `mtx_al` released) but not yet re-locked its own mutex; another worker's `allocate_thread`
//! sets its state to work and is preempted before locking that mutex; the first worker sees
//! `work`, skips the wait and sorts its stale range, and the new range is never sorted.
//! `--arg 1` non-zero keeps the array's elements out of the instrumentation (faster runs).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_cct::CondVar;

/// `-n 32`: elements.
const NELEM: usize = 32;
/// `-f 4`: fork threshold.
const FORKELEM: usize = 4;
/// `-h 4`: pool threads.
const THREADS: usize = 4;
/// The input, `rand() % 32` for the first 32 values of glibc's `rand()` (default seed 1).
const INPUT: [u32; NELEM] = [
    7, 6, 9, 19, 17, 31, 10, 12, 9, 13, 26, 11, 18, 27, 3, 6, 28, 2, 20, 24, 27, 8, 7, 13, 22, 26,
    14, 3, 19, 31, 9, 26,
];

/// `enum thread_state`.
const TS_IDLE: u8 = 0;
const TS_WORK: u8 = 1;
const TS_TERM: u8 = 2;

// The array (`xmalloc`'d in main): instrumented, or private with `--arg 1`.
static ELEMS: [Shared<u32>; NELEM] = [const { Shared::new(0) }; NELEM];
static PRIVATE_ELEMS: [PerRun<u32>; NELEM] = [const { PerRun::new(0) }; NELEM];
static PRIVATE: PerRun<bool> = PerRun::new(false);

// The pool (`struct qsort`, one per worker): state, range, mutex, condition variable.
static ST: [Shared<u8>; THREADS] = [const { Shared::new(TS_IDLE) }; THREADS];
static QS_A: [Shared<usize>; THREADS] = [const { Shared::new(0) }; THREADS];
static QS_N: [Shared<usize>; THREADS] = [const { Shared::new(0) }; THREADS];
static MTX_ST: [Mutex<()>; THREADS] = [const { Mutex::new(()) }; THREADS];
static COND_ST: [CondVar; THREADS] = [const { CondVar::new() }; THREADS];

// `struct common` (on main's stack).
static NTHREADS: Shared<usize> = Shared::new(0);
static IDLETHREADS: Shared<usize> = Shared::new(0);
static FORK_ELEM: Shared<usize> = Shared::new(0);
static MTX_AL: Mutex<()> = Mutex::new(());
static STACKS: [Stack<4096>; THREADS] = [const { Stack::new() }; THREADS];

fn get(i: usize) -> u32 {
    if PRIVATE.get() {
        PRIVATE_ELEMS[i].get()
    } else {
        ELEMS[i].read()
    }
}

fn set(i: usize, v: u32) {
    if PRIVATE.get() {
        PRIVATE_ELEMS[i].set(v);
    } else {
        ELEMS[i].write(v);
    }
}

/// `num_compare`: `*a - *b`.
fn cmp(x: usize, y: usize) -> i32 {
    get(x) as i32 - get(y) as i32
}

/// `swap` (byte-wise in the C, `swaptype` 2: one element at a time here).
fn swap(x: usize, y: usize) {
    let t = get(x);
    let u = get(y);
    set(x, u);
    set(y, t);
}

/// `vecswap(a, b, n)`.
fn vecswap(a: usize, b: usize, n: usize) {
    for i in 0..n {
        swap(a + i, b + i);
    }
}

fn med3(a: usize, b: usize, c: usize) -> usize {
    if cmp(a, b) < 0 {
        if cmp(b, c) < 0 {
            b
        } else if cmp(a, c) < 0 {
            c
        } else {
            a
        }
    } else if cmp(b, c) > 0 {
        b
    } else if cmp(a, c) < 0 {
        a
    } else {
        c
    }
}

fn insertion_sort(a: usize, n: usize) {
    for pm in a + 1..a + n {
        let mut pl = pm;
        while pl > a && cmp(pl - 1, pl) > 0 {
            swap(pl, pl - 1);
            pl -= 1;
        }
    }
}

/// `allocate_thread`: an idle worker, its state set to work and its mutex held.
fn allocate_thread() -> Option<(usize, MutexGuard<'static, ()>)> {
    let al = MTX_AL.lock();
    let mut i = 0;
    while i < NTHREADS.read() {
        if ST[i].read() == TS_IDLE {
            let idle = IDLETHREADS.read();
            IDLETHREADS.write(idle - 1);
            ST[i].write(TS_WORK);
            let st = MTX_ST[i].lock();
            al.unlock();
            return Some((i, st));
        }
        i += 1;
    }
    al.unlock();
    None
}

/// `qsort_algo(qs)` for worker `me`.
fn qsort_algo(me: usize) {
    let mut a = QS_A[me].read();
    let mut n = QS_N[me].read();
    loop {
        // top:
        let mut swap_cnt = false;
        if n < 7 {
            insertion_sort(a, n);
            return;
        }
        let mut pm = a + n / 2;
        if n > 7 {
            let mut pl = a;
            let mut pn = a + n - 1;
            if n > 40 {
                let d = n / 8;
                pl = med3(pl, pl + d, pl + 2 * d);
                pm = med3(pm - d, pm, pm + d);
                pn = med3(pn - 2 * d, pn - d, pn);
            }
            pm = med3(pl, pm, pn);
        }
        swap(a, pm);
        let (mut pa, mut pb) = (a + 1, a + 1);
        let (mut pc, mut pd) = (a + n - 1, a + n - 1);
        loop {
            while pb <= pc {
                let r = cmp(pb, a);
                if r > 0 {
                    break;
                }
                if r == 0 {
                    swap_cnt = true;
                    swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb <= pc {
                let r = cmp(pc, a);
                if r < 0 {
                    break;
                }
                if r == 0 {
                    swap_cnt = true;
                    swap(pc, pd);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb > pc {
                break;
            }
            swap(pb, pc);
            swap_cnt = true;
            pb += 1;
            pc -= 1;
        }
        if !swap_cnt {
            // Switch to insertion sort.
            insertion_sort(a, n);
            return;
        }

        let pn = a + n;
        let r = (pa - a).min(pb - pa);
        vecswap(a, pb - r, r);
        let r = (pd - pc).min(pn - pd - 1);
        vecswap(pb, pn - r, r);

        let nl = pb - pa;
        let nr = pd - pc;

        // Now try to launch subthreads.
        let mut farmed = false;
        if nl > FORK_ELEM.read()
            && nr > FORK_ELEM.read()
            && let Some((w, st)) = allocate_thread()
        {
            QS_A[w].write(a);
            QS_N[w].write(nl);
            COND_ST[w].signal();
            st.unlock();
            farmed = true;
        }
        if !farmed && nl > 0 {
            QS_A[me].write(a);
            QS_N[me].write(nl);
            qsort_algo(me);
        }
        if nr > 0 {
            a = pn - nr;
            n = nr;
            continue;
        }
        return;
    }
}

/// `qsort_thread` for pool slot `ME`.
fn qsort_thread<const ME: usize>() {
    loop {
        // again: wait for work to be allocated.
        let mut st = MTX_ST[ME].lock();
        while ST[ME].read() == TS_IDLE {
            st = COND_ST[ME].wait(&MTX_ST[ME], st);
        }
        st.unlock();
        if ST[ME].read() == TS_TERM {
            return;
        }
        assert!(ST[ME].read() == TS_WORK, "qs->st == ts_work");

        qsort_algo(ME);

        let al = MTX_AL.lock();
        ST[ME].write(TS_IDLE);
        let idle = IDLETHREADS.read();
        IDLETHREADS.write(idle + 1);
        if IDLETHREADS.read() == NTHREADS.read() {
            // All threads idle: signal shutdown.
            let mut i = 0;
            while i < NTHREADS.read() {
                if i != ME {
                    let st2 = MTX_ST[i].lock();
                    ST[i].write(TS_TERM);
                    COND_ST[i].signal();
                    st2.unlock();
                }
                i += 1;
            }
            al.unlock();
            return;
        }
        al.unlock();
    }
}

fn main_task() {
    PRIVATE.set(arg_or(1, 0) != 0);
    for (i, v) in INPUT.iter().enumerate() {
        set(i, *v);
    }

    // qsort_mt(int_elem, 32, sizeof(uint32_t), num_compare, 4, 4): n >= forkelem.
    let entries: [fn(); THREADS] = [
        qsort_thread::<0>,
        qsort_thread::<1>,
        qsort_thread::<2>,
        qsort_thread::<3>,
    ];
    let workers: [JoinHandle; THREADS] = core::array::from_fn(|i| {
        ST[i].write(TS_IDLE);
        spawn(&STACKS[i], entries[i])
    });

    // Initialise the common elements.
    FORK_ELEM.write(FORKELEM);
    NTHREADS.write(THREADS);
    IDLETHREADS.write(THREADS);

    // Hand out the first work batch.
    let st = MTX_ST[0].lock();
    QS_A[0].write(0);
    QS_N[0].write(NELEM);
    ST[0].write(TS_WORK);
    let idle = IDLETHREADS.read();
    IDLETHREADS.write(idle - 1);
    COND_ST[0].signal();
    st.unlock();

    // Wait for all threads to finish.
    for h in workers {
        h.join();
    }

    // -v: verify the result.
    for i in 1..NELEM {
        if get(i - 1) > get(i) {
            panic!("Failed to verify sorted list!");
        }
    }
}

firmware!(main_task);
