// Tells the Cortex-M port which context-switch variant the target needs.
fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo::rustc-check-cfg=cfg(jostle_armv6m)");
    println!("cargo::rustc-check-cfg=cfg(jostle_fpu)");
    if target.starts_with("thumbv6m") {
        println!("cargo::rustc-cfg=jostle_armv6m");
    }
    if target.starts_with("thumb") && target.ends_with("eabihf") {
        println!("cargo::rustc-cfg=jostle_fpu");
    }
    println!("cargo::rerun-if-changed=build.rs");
}
