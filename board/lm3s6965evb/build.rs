// With feature `memory-x`, the machine's memory.x on the linker search path (native Jostle
// firmware); without it the application's PAC brings the layout (an RTIC app's `lm3s6965`).
// The link check is jostle-board-qemu's.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_MEMORY_X").is_some() {
        jostle_board_build::memory(include_bytes!("memory.x"));
    }
}
