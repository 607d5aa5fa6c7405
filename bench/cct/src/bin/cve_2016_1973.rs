//! ConVul CVE-2016-1973 (Firefox WebRTC `GetStaticInstance` reference-count race); PERIOD
//! `evaluation/ConVul-CVE-Benchmarks/CVE-2016-1973/2016-1973.cpp`. 3 tasks: main, t2 (created
//! first: gets the `SSRCDatabase` and reads its map's size) and t1 (gets it, reads the size,
//! releases it). `GetStaticInstance` keeps an atomic `instance_count` and an `instance`
//! pointer published by an atomic exchange. Bug: NULL dereference (a panic; SIGSEGV in SURW).
//! A thread sees `count == 0`, creates an instance and increments `count` to 1, and is
//! preempted before publishing it; the other sees `count != 0`, increments it to 2 (so it
//! does not create) and returns `instance`, still NULL; its `map.size()` dereferences NULL.
//! (Reading the instance after t1's release deleted it is silent unless `--arg 0` is non-zero.)
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use jostle::*;
use jostle_bench_cct::{NULL, Pool, Ptr};

#[derive(Clone, Copy, PartialEq, Eq)]
enum CountOperation {
    Release,
    AddRef,
    #[allow(dead_code)] // not used by this harness
    AddRefNoCreate,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CreateOperation {
    InstanceExists,
    Create,
    Destroy,
}

/// The heap: `SSRCDatabase` objects (each thread creates at most one per `AddRef`).
static DATABASES: Pool<4> = Pool::new();
/// `SSRCDatabase::_ssrcMap`'s element count, per heap slot.
static MAP_SIZE: [Shared<usize>; 4] = [const { Shared::new(0) }; 4];
/// `GetStaticInstance`'s function-local statics.
static INSTANCE_COUNT: AtomicI64 = AtomicI64::new(0);
static INSTANCE: AtomicUsize = AtomicUsize::new(NULL);
static STACK1: Stack<4096> = Stack::new();
static STACK2: Stack<4096> = Stack::new();

/// `InterlockedIncrement`: `fetch_add(1) + 1`.
fn interlocked_increment() -> i64 {
    INSTANCE_COUNT.fetch_add(1, Ordering::SeqCst) + 1
}

/// `InterlockedDecrement`: `fetch_sub(1) - 1`.
fn interlocked_decrement() -> i64 {
    INSTANCE_COUNT.fetch_sub(1, Ordering::SeqCst) - 1
}

/// `SSRCDatabase::CreateInstance`: `new SSRCDatabase()` (an empty map).
fn create_instance() -> Ptr {
    let p = DATABASES.alloc();
    MAP_SIZE[DATABASES.index(p)].write(0);
    p
}

/// `delete`: the map's destructor reads its size, then the object is freed.
fn delete(p: Ptr) {
    let _ = MAP_SIZE[DATABASES.index(p)].read();
    DATABASES.free(p);
}

fn get_static_instance(count_operation: CountOperation) -> Ptr {
    let mut state = CreateOperation::InstanceExists;
    if count_operation == CountOperation::AddRefNoCreate
        && INSTANCE_COUNT.load(Ordering::SeqCst) == 0
    {
        return NULL;
    }
    if count_operation == CountOperation::AddRefNoCreate {
        if interlocked_increment() == 1 {
            interlocked_decrement();
            panic!("assert(false): AddRefNoCreate on a dead instance");
        }
        if INSTANCE.load(Ordering::Relaxed) == NULL {
            panic!("assert(false): AddRefNoCreate without an instance");
        }
    } else if count_operation == CountOperation::AddRef {
        if INSTANCE_COUNT.load(Ordering::SeqCst) == 0 {
            state = CreateOperation::Create;
        } else if interlocked_increment() == 1 {
            interlocked_decrement();
            state = CreateOperation::Create;
        }
    } else {
        let new_value = interlocked_decrement();
        if new_value == 0 {
            state = CreateOperation::Destroy;
        }
    }

    if state == CreateOperation::Create {
        let new_instance = create_instance();
        if interlocked_increment() == 1 {
            INSTANCE.swap(new_instance, Ordering::SeqCst);
        } else {
            interlocked_decrement();
            if new_instance != NULL {
                delete(new_instance);
            }
        }
    } else if state == CreateOperation::Destroy {
        let old_value = INSTANCE.swap(NULL, Ordering::SeqCst);
        if old_value != NULL {
            delete(old_value);
        }
        return NULL;
    }
    // `return instance`: a plain (volatile) load.
    INSTANCE.load(Ordering::Relaxed)
}

/// `accessMap`: `ssrcdb->_ssrcMap.size()`.
fn access_map(ssrcdb: Ptr) -> usize {
    MAP_SIZE[DATABASES.index(ssrcdb)].read()
}

fn thread_one() {
    let ssrcdb = get_static_instance(CountOperation::AddRef);
    access_map(ssrcdb);
    get_static_instance(CountOperation::Release);
}

fn thread_two() {
    let ssrcdb = get_static_instance(CountOperation::AddRef);
    access_map(ssrcdb);
}

fn main_task() {
    let t2 = spawn(&STACK2, thread_two);
    let t1 = spawn(&STACK1, thread_one);
    t2.join();
    t1.join();
}

firmware!(main_task);
