//! CS/reorder_20: ESBMC's `reorder_bad.c` via SCTBench; PERIOD
//! `evaluation/CS/reorder_20/reorder_20_bad.c` (a preprocessed copy with 10 setters, 10 checkers).
//! 21 tasks: main, 10 setters, 10 checkers (created in that order, joined in that order). The program is [`jostle_bench_cct::reorder`].
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

/// Setter threads (`iSet`).
const SETTERS: usize = 10;
/// Checker threads (`iCheck`).
const CHECKERS: usize = 10;

static SET_STACKS: [Stack<2048>; SETTERS] = [const { Stack::new() }; SETTERS];
static CHECK_STACKS: [Stack<2048>; CHECKERS] = [const { Stack::new() }; CHECKERS];

fn main_task() {
    jostle_bench_cct::reorder::run(&SET_STACKS, &CHECK_STACKS);
}

firmware!(main_task);
