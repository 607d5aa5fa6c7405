//! CS/twostage: ESBMC's `twostage_bad.c` via SCTBench; PERIOD `evaluation/CS/twostage/twostage_bad.c`.
//! 3 tasks: main, 1 two-stage writer, 1 reader (created in that order, joined in that
//! order). The program is [`jostle_bench_cct::twostage`].
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

/// Two-stage writers (`iTThreads`).
const WRITERS: usize = 1;
/// Readers (`iRThreads`).
const READERS: usize = 1;

static WRITER_STACKS: [Stack<2048>; WRITERS] = [const { Stack::new() }; WRITERS];
static READER_STACKS: [Stack<2048>; READERS] = [const { Stack::new() }; READERS];

fn main_task() {
    jostle_bench_cct::twostage::run(&WRITER_STACKS, &READER_STACKS);
}

firmware!(main_task);
