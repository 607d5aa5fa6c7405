//! The application's own memory layout (the board's is off), as a PAC would bring it:
//! QEMU mps2-an385's first 256 KiB of flash and 64 KiB of RAM.
fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out.join("memory.x"), include_bytes!("memory.x")).expect("memory.x");
    println!("cargo::rustc-link-search={}", out.display());
    println!("cargo::rerun-if-changed=memory.x");
}
