//! ConVul CVE-2013-1792 (Linux keyrings, `install_user_keyrings` race); PERIOD
//! `evaluation/ConVul-CVE-Benchmarks/CVE-2013-1792/2013-1792.cpp`. 3 tasks: main, t1
//! (`lookup_user_key` of the user session keyring) and t2 (`install_user_keyrings`), one mutex.
//! Install has an unlocked fast path (`if uid_keyring != NULL return`), then under the mutex
//! allocates and stores `uid_keyring` and then `session_keyring`. Bug: NULL dereference (a
//! panic; SIGSEGV in SURW). t2 stores `uid_keyring` and is preempted before `session_keyring`;
//! t1 sees `session_keyring == NULL`, calls install, takes the fast path, re-reads
//! `session_keyring` (still NULL) and increments its `usage`.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_cct::{NULL, Pool, Ptr};

const KEY_SPEC_USER_SESSION_KEYRING: i32 = -5;
const KEY_LOOKUP_FOR_UNLINK: u32 = 0x04;
const KEY_LOOKUP_PARTIAL: u32 = 0x02;
const KEY_FLAG_INSTANTIATED: u32 = 0;
const ENOKEY: i32 = 132;
const EIO: i32 = 5;
const ERESTARTSYS: i32 = 512;

/// The heap: two keys per install (only one install allocates: the second sees the first).
static KEYS: Pool<4> = Pool::new();
/// `struct key`: `usage.counter` and `flags`, per heap slot.
static KEY_USAGE: [Shared<i32>; 4] = [const { Shared::new(0) }; 4];
static KEY_FLAGS: [Shared<u32>; 4] = [const { Shared::new(0) }; 4];
/// `user_test`: the user's keyrings.
static UID_KEYRING: Shared<Ptr> = Shared::new(NULL);
static SESSION_KEYRING: Shared<Ptr> = Shared::new(NULL);
static KEY_USER_KEYRING_MUTEX: Mutex<()> = Mutex::new(());
static STACK1: Stack<2048> = Stack::new();
static STACK2: Stack<2048> = Stack::new();

fn install_user_keyrings() -> i32 {
    if UID_KEYRING.read() != NULL {
        // "has uid_keyring"
        return 0;
    }
    let g = KEY_USER_KEYRING_MUTEX.lock();
    if UID_KEYRING.read() == NULL {
        let uid_keyring = KEYS.alloc();
        let session_keyring = KEYS.alloc();
        UID_KEYRING.write(uid_keyring);
        SESSION_KEYRING.write(session_keyring);
    }
    g.unlock();
    0
}

/// `lookup_user_key`; returns the key reference, or an error.
fn lookup_user_key(id: i32, lflags: u32, perm: u32) -> Result<Ptr, i32> {
    let mut key = NULL;
    let mut key_ref = Err(-ENOKEY);
    if id == KEY_SPEC_USER_SESSION_KEYRING {
        if SESSION_KEYRING.read() == NULL {
            // "session_keyring not exist"
            let ret = install_user_keyrings();
            if ret < 0 {
                return Err(ret);
            }
        }
        key = SESSION_KEYRING.read();
        // atomic_inc(&key->usage): a plain `counter++` here
        let k = KEYS.index(key);
        let u = KEY_USAGE[k].read();
        KEY_USAGE[k].write(u + 1);
        key_ref = Ok(key);
    }
    if lflags & KEY_LOOKUP_FOR_UNLINK != 0 {
        return key_ref;
    }
    // Not reached with t1's arguments (KEY_LOOKUP_FOR_UNLINK): the rest of the lookup.
    if lflags & KEY_LOOKUP_PARTIAL == 0 {
        let ret = 0; // wait_for_key_construction
        if ret == -ERESTARTSYS || (ret != 0 && perm != 0) {
            return Err(ret);
        }
    }
    let flags = KEY_FLAGS[KEYS.index(key)].read();
    if lflags & KEY_LOOKUP_PARTIAL == 0 && flags & (1 << KEY_FLAG_INSTANTIATED) == 0 {
        return Err(-EIO);
    }
    key_ref
}

fn thread_one() {
    let _ = lookup_user_key(KEY_SPEC_USER_SESSION_KEYRING, 4, 1);
}

fn thread_two() {
    install_user_keyrings();
}

fn main_task() {
    let t1 = spawn(&STACK1, thread_one);
    let t2 = spawn(&STACK2, thread_two);
    t1.join();
    t2.join();
}

firmware!(main_task);
