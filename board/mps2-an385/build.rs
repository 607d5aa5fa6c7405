// memory.x on the linker search path (with feature `config-static` only as a fallback: an
// application's own memory.x comes first on the path and replaces it); the link check is
// jostle-board-qemu's.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    jostle_board_build::memory(include_bytes!("memory.x"));
}
