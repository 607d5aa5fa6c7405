// memory.x on the linker search path (unless the application brings the memory layout:
// feature `memory-x` off), and a check that the firmware links with cortex-m-rt's and
// defmt's linker scripts (see jostle-board-build).
fn main() {
    if std::env::var_os("CARGO_FEATURE_MEMORY_X").is_some() {
        jostle_board_build::board(include_bytes!("memory.x"));
    } else {
        jostle_board_build::board_without_memory();
    }
}
