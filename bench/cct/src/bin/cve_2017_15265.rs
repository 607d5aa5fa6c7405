//! ConVul CVE-2017-15265 (Linux ALSA sequencer port create/delete use-after-free); PERIOD
//! `evaluation/ConVul-CVE-Benchmarks/CVE-2017-15265/2017-15265.cpp`. 3 tasks: main (owns the
//! client and its port 0), t1 (creates port 1: allocates it, links it into the client's port
//! list under `ports_mutex` and `ports_lock`, unlocks, then writes its `type` and reads its
//! address) and t2 (deletes port 1: finds and unlinks it under both locks, unlocks, takes the
//! port's `use_lock` and frees it). Bug: a use-after-free write when t2 frees port 1 between
//! t1's unlock and t1's `set_port_info`. Without AddressSanitizer it does not crash, so the
//! published outcome is no bug found (0/20 for every strategy) and this port passes every
//! run by default; with `--arg 0` non-zero (the "ASan" variant) the access panics.
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;
use jostle_bench_cct::{NULL, Pool, Ptr};

const SNDRV_SEQ_PORT_FLG_GIVEN_PORT: u32 = 1 << 0;
const SNDRV_SEQ_EVENT_PORT_START: i32 = 63;
const EPERM: i32 = 1;
const ENOMEM: i32 = 12;
const ENOENT: i32 = 2;

/// List nodes: 0 is the client's `ports_list_head`, 1 is `port_test` (port 0, on main's
/// stack), 2 is the port t1 allocates (heap object 1).
type Node = usize;
const HEAD: Node = 0;
const PORT_TEST: Node = 1;
const NODES: usize = 3;

/// The heap: the one port t1 creates.
static PORTS: Pool<1> = Pool::new();
static NEXT: [Shared<Node>; NODES] = [const { Shared::new(0) }; NODES];
static PREV: [Shared<Node>; NODES] = [const { Shared::new(0) }; NODES];
// The ports' fields, per node (node 0, the list head, has none).
static ADDR_CLIENT: [Shared<u8>; NODES] = [const { Shared::new(0) }; NODES];
static ADDR_PORT: [Shared<i32>; NODES] = [const { Shared::new(0) }; NODES];
static PORT_TYPE: [Shared<u32>; NODES] = [const { Shared::new(0) }; NODES];
static USE_LOCK: [Mutex<()>; NODES] = [const { Mutex::new(()) }; NODES];
// The client (`clt_test`, on main's stack).
static CLIENT_NUMBER: Shared<i32> = Shared::new(0);
static NUM_PORTS: Shared<i32> = Shared::new(0);
static PORTS_MUTEX: Mutex<()> = Mutex::new(());
static PORTS_LOCK: Mutex<()> = Mutex::new(());
// The port info t1 passes (`info_test`).
static INFO_CLIENT: Shared<u8> = Shared::new(0);
static INFO_PORT: Shared<i32> = Shared::new(0);
static INFO_TYPE: Shared<u32> = Shared::new(0);
static INFO_FLAGS: Shared<u32> = Shared::new(0);
static STACK1: Stack<2048> = Stack::new();
static STACK2: Stack<2048> = Stack::new();

/// The node of a heap port.
fn node_of(p: Ptr) -> Node {
    PORTS.index(p) + 2
}

/// A use of port `n`'s memory (checked for use-after-free in the ASan variant).
fn port_use(n: Node) -> Node {
    if n >= 2 {
        PORTS.index(n - 1);
    }
    n
}

fn list_add_tail(entry: Node, head: Node) {
    // __list_add(entry, head->prev, head)
    let prev = PREV[head].read();
    let next = head;
    PREV[next].write(entry);
    NEXT[entry].write(next);
    PREV[entry].write(prev);
    NEXT[prev].write(entry);
}

fn list_del(entry: Node) {
    // __list_del(entry->prev, entry->next)
    let prev = PREV[entry].read();
    let next = NEXT[entry].read();
    PREV[next].write(prev);
    NEXT[prev].write(next);
}

fn snd_seq_set_port_info(port: Node) -> i32 {
    let ty = INFO_TYPE.read();
    PORT_TYPE[port_use(port)].write(ty);
    0
}

fn snd_seq_create_port(port: i32) -> Ptr {
    let new_port = PORTS.alloc(); // kzalloc
    let n = node_of(new_port);
    let number = CLIENT_NUMBER.read();
    ADDR_CLIENT[n].write(number as u8);
    ADDR_PORT[n].write(-1);
    let mut num = if port >= 0 { port } else { 0 };

    let g1 = PORTS_MUTEX.lock();
    let g2 = PORTS_LOCK.lock();
    let mut p = NEXT[HEAD].read();
    while p != HEAD {
        if ADDR_PORT[p].read() > num {
            break;
        }
        if port < 0 {
            num = ADDR_PORT[p].read() + 1;
        }
        p = NEXT[p].read();
    }
    list_add_tail(n, p);
    let c = NUM_PORTS.read();
    NUM_PORTS.write(c + 1);
    ADDR_PORT[n].write(num);
    g2.unlock();
    g1.unlock();
    new_port
}

fn snd_seq_ioctl_create_port() -> i32 {
    if INFO_CLIENT.read() as i32 != CLIENT_NUMBER.read() {
        return -EPERM;
    }
    let given = INFO_FLAGS.read() & SNDRV_SEQ_PORT_FLG_GIVEN_PORT != 0;
    let port = snd_seq_create_port(if given { INFO_PORT.read() } else { -1 });
    if port == NULL {
        return -ENOMEM;
    }
    let n = node_of(port);
    snd_seq_set_port_info(n);
    // snd_seq_system_client_ev_port_start(port->addr.client, port->addr.port)
    let _client = ADDR_CLIENT[port_use(n)].read();
    let _port = ADDR_PORT[port_use(n)].read();
    let _event = SNDRV_SEQ_EVENT_PORT_START;
    0
}

fn port_delete(port: Node) -> i32 {
    let held = USE_LOCK[port].lock();
    PORTS.free(port - 1); // kfree
    // The port's mutex is freed while locked: it is never released.
    core::mem::forget(held);
    0
}

fn snd_seq_delete_port(port: i32) -> i32 {
    let mut found = None;
    let g1 = PORTS_MUTEX.lock();
    let g2 = PORTS_LOCK.lock();
    let mut p = NEXT[HEAD].read();
    while p != HEAD {
        let _shown = ADDR_PORT[p].read(); // printf("found %d,port = %d\n", p->addr.port, port)
        if ADDR_PORT[p].read() == port {
            list_del(p);
            let c = NUM_PORTS.read();
            NUM_PORTS.write(c - 1);
            found = Some(p);
            break;
        }
        p = NEXT[p].read();
    }
    g2.unlock();
    g1.unlock();
    match found {
        Some(p) => port_delete(p),
        None => -ENOENT,
    }
}

fn thread_one() {
    snd_seq_ioctl_create_port();
}

fn thread_two() {
    snd_seq_delete_port(1);
}

fn main_task() {
    ADDR_CLIENT[PORT_TEST].write(1);
    ADDR_PORT[PORT_TEST].write(0);
    NEXT[PORT_TEST].write(HEAD);
    PREV[PORT_TEST].write(HEAD);
    CLIENT_NUMBER.write(1);
    NUM_PORTS.write(1);
    NEXT[HEAD].write(PORT_TEST);
    PREV[HEAD].write(PORT_TEST);
    INFO_CLIENT.write(1);
    INFO_PORT.write(1);
    INFO_FLAGS.write(1);

    let t1 = spawn(&STACK1, thread_one);
    let t2 = spawn(&STACK2, thread_two);
    t1.join();
    t2.join();
}

firmware!(main_task);
