// memory.x on the linker search path, and a check that the firmware links with
// cortex-m-rt's and defmt's linker scripts (see jostle-board-build).
fn main() {
    jostle_board_build::board(include_bytes!("memory.x"));
}
