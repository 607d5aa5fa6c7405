// SPIKE (temporary, until the lead's config=stdin lands): a linker fragment that puts the
// configuration block where the mps2-an385 machine's loader can write it.
fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    std::fs::write(
        out.join("jostle-spike.x"),
        "PROVIDE(JOSTLE_CONFIG = 0x203FF000);\nPROVIDE(JOSTLE_CONFIG_FLASH = 0x0003F000);\nPROVIDE(JOSTLE_BATCH = 0x203FF800);\n",
    )
    .unwrap();
    println!("cargo::rustc-link-search={}", out.display());
    println!("cargo::rerun-if-changed=build.rs");
}
