// The check that the firmware links with cortex-m-rt's and defmt's linker scripts (the
// machine's crate puts its memory.x on the link path; see jostle-board-build).
fn main() {
    jostle_board_build::board_without_memory();
}
