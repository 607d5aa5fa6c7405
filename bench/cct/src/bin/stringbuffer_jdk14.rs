//! CB/stringbuffer-jdk1.4: Jie Yu's C++ model of the JDK 1.4 `StringBuffer.append(StringBuffer)`
//! atomicity bug, via SCTBench; PERIOD `evaluation/CB/stringbuffer-jdk1.4/` (`main.cpp`,
//! `stringbuffer.cpp`; main's part moved into a second thread). 3 tasks: main, t1 (erase then
//! re-append "abc" on the global buffer) and t2 (append the global buffer to a new one), each
//! buffer with its own mutex. Bug: assertion. `append(sb)` reads `len = sb.length()` and later
//! calls `sb.getChars(0, len, ..)`, two separately locked calls; it fails (`srcEnd > count`)
//! when t1's erase runs between them and its re-append after them.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

/// Room for every buffer's characters (`new char[]`; no buffer here grows past 19).
const CAPACITY: usize = 64;
const INTEGER_MAX_VALUE: i32 = 0x7fff_ffff;

/// A `StringBuffer`: the characters (copied by `memcpy`, in libc: no scheduling points) live
/// with the buffer's mutex; `count` and `value_length` are the shared fields.
struct StringBuffer {
    mutex_lock: Mutex<[u8; CAPACITY]>,
    value_length: Shared<i32>,
    count: Shared<i32>,
}

impl StringBuffer {
    const fn new() -> Self {
        StringBuffer {
            mutex_lock: Mutex::new([0; CAPACITY]),
            value_length: Shared::new(0),
            count: Shared::new(0),
        }
    }

    /// `StringBuffer()`.
    fn construct(&self) {
        self.value_length.write(16);
        self.count.write(0);
    }

    /// `StringBuffer(char *str)`.
    fn construct_from(&self, s: &[u8]) {
        self.value_length.write(s.len() as i32 + 16);
        self.count.write(0);
        self.append_str(s);
    }

    fn length(&self) -> i32 {
        let g = self.mutex_lock.lock();
        let ret = self.count.read();
        g.unlock();
        ret
    }

    /// Copies characters `src_begin..src_end` into `dst` at `dst_begin`.
    fn get_chars(&self, src_begin: i32, src_end: i32, dst: &mut [u8; CAPACITY], dst_begin: i32) {
        let value = self.mutex_lock.lock();
        if src_begin < 0 {
            panic!("srcBegin < 0");
        }
        if src_end < 0 || src_end > self.count.read() {
            panic!("srcEnd > count");
        }
        if src_begin > src_end {
            panic!("srcBegin > srcEnd");
        }
        let (from, n, to) = (
            src_begin as usize,
            (src_end - src_begin) as usize,
            dst_begin as usize,
        );
        dst[to..to + n].copy_from_slice(&value[from..from + n]);
        value.unlock();
    }

    /// `append(StringBuffer *sb)`; `None` stands for a NULL argument.
    fn append_buffer(&self, sb: Option<&StringBuffer>) {
        let mut value = self.mutex_lock.lock();
        let sb = sb.unwrap_or(&NULL_BUFFER);
        let len = sb.length();
        let newcount = self.count.read() + len;
        if newcount > self.value_length.read() {
            self.expand_capacity(newcount);
        }
        let count = self.count.read();
        sb.get_chars(0, len, &mut value, count);
        self.count.write(newcount);
        value.unlock();
    }

    /// `append(char *str)`.
    fn append_str(&self, s: &[u8]) {
        let mut value = self.mutex_lock.lock();
        let len = s.len() as i32;
        let newcount = self.count.read() + len;
        if newcount > self.value_length.read() {
            self.expand_capacity(newcount);
        }
        let at = self.count.read() as usize;
        value[at..at + s.len()].copy_from_slice(s);
        self.count.write(newcount);
        value.unlock();
    }

    /// `erase(start, end)`.
    fn erase(&self, start: i32, mut end: i32) {
        let mut value = self.mutex_lock.lock();
        if start < 0 {
            panic!("start < 0");
        }
        if end > self.count.read() {
            end = self.count.read();
        }
        if start > end {
            panic!("start > end");
        }
        let len = end - start;
        if len > 0 {
            let tail = (self.count.read() - end) as usize;
            let (s, e) = (start as usize, end as usize);
            value.copy_within(e..e + tail, s);
            let c = self.count.read();
            self.count.write(c - len);
        }
        value.unlock();
    }

    /// `expandCapacity`, called with the buffer's mutex held (the characters stay in place:
    /// the backing array is sized for every buffer of this program).
    fn expand_capacity(&self, minimum_capacity: i32) {
        let mut new_capacity = (self.value_length.read() + 1) * 2;
        if new_capacity < 0 {
            new_capacity = INTEGER_MAX_VALUE;
        } else if minimum_capacity > new_capacity {
            new_capacity = minimum_capacity;
        }
        assert!(
            new_capacity as usize <= CAPACITY,
            "model: buffer larger than modelled"
        );
        self.value_length.write(new_capacity);
    }
}

/// `StringBuffer::null_buffer`, appended in place of a NULL buffer.
static NULL_BUFFER: StringBuffer = StringBuffer::new();
/// The global `buffer`, created from "abc".
static BUFFER: StringBuffer = StringBuffer::new();
/// The buffer t2 allocates (`new StringBuffer()`).
static SB: StringBuffer = StringBuffer::new();
static STACK1: Stack<2048> = Stack::new();
static STACK2: Stack<2048> = Stack::new();

fn thread_main1() {
    BUFFER.erase(0, 3);
    BUFFER.append_str(b"abc");
}

fn thread_main2() {
    SB.construct();
    SB.append_buffer(Some(&BUFFER));
}

fn main_task() {
    // The static initialisers, before main.
    NULL_BUFFER.construct_from(b"null");
    BUFFER.construct_from(b"abc");

    let thd1 = spawn(&STACK1, thread_main1);
    let thd2 = spawn(&STACK2, thread_main2);
    thd1.join();
    thd2.join();
}

firmware!(main_task);
