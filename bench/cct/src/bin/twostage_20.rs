//! CS/twostage_20: ESBMC's `twostage_bad.c` via SCTBench; PERIOD `evaluation/CS/twostage_20/twostage_20_bad.c` (a preprocessed copy of
//! `twostage_bad.c` with other thread counts).
//! 21 tasks: main, 10 two-stage writers, 10 readers (created in that order, joined in that
//! order). The program is [`jostle_bench_cct::twostage`].
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

/// Two-stage writers (`iTThreads`).
const WRITERS: usize = 10;
/// Readers (`iRThreads`).
const READERS: usize = 10;

static WRITER_STACKS: [Stack<2048>; WRITERS] = [const { Stack::new() }; WRITERS];
static READER_STACKS: [Stack<2048>; READERS] = [const { Stack::new() }; READERS];

fn main_task() {
    jostle_bench_cct::twostage::run(&WRITER_STACKS, &READER_STACKS);
}

firmware!(main_task);
