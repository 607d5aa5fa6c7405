// memory.x on the linker search path, unless the application brings the memory layout
// (feature `config-static`); the link check is jostle-board-qemu's.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_CONFIG_STATIC").is_none() {
        jostle_board_build::memory(include_bytes!("memory.x"));
    }
}
