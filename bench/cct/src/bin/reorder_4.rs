//! CS/reorder_4: ESBMC's `reorder_bad.c` via SCTBench; PERIOD
//! `evaluation/CS/reorder_4/reorder_4_bad.c` (a preprocessed copy with 3 setters, 1 checker).
//! 5 tasks: main, 3 setters, 1 checker (created in that order, joined in that order). The program is [`jostle_bench_cct::reorder`].
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use jostle::*;

/// Setter threads (`iSet`).
const SETTERS: usize = 3;
/// Checker threads (`iCheck`).
const CHECKERS: usize = 1;

static SET_STACKS: [Stack<2048>; SETTERS] = [const { Stack::new() }; SETTERS];
static CHECK_STACKS: [Stack<2048>; CHECKERS] = [const { Stack::new() }; CHECKERS];

fn main_task() {
    jostle_bench_cct::reorder::run(&SET_STACKS, &CHECK_STACKS);
}

firmware!(main_task);
