// Tells the Cortex-M port which context-switch variant the target needs.
fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo::rustc-check-cfg=cfg(jostle_armv6m)");
    println!("cargo::rustc-check-cfg=cfg(jostle_fpu)");
    println!("cargo::rustc-check-cfg=cfg(jostle_stack_limit)");
    if target.starts_with("thumbv6m") {
        println!("cargo::rustc-cfg=jostle_armv6m");
    }
    // ARMv8-M mainline: the stack limit registers (PSPLIM) guard the tasks' stacks.
    if target.starts_with("thumbv8m.main") {
        println!("cargo::rustc-cfg=jostle_stack_limit");
    }
    if target.starts_with("thumb") && target.ends_with("eabihf") {
        println!("cargo::rustc-cfg=jostle_fpu");
    }
    // The port, for the build scripts of crates that depend on the kernel
    // (`DEP_JOSTLE_KERNEL_PORT`): `cortex-m`, `host`, or `none` (the checker's and host tools'
    // kernel, or a firmware whose framework shim is missing).
    let port = if std::env::var_os("CARGO_FEATURE_CORTEX_M").is_some() {
        "cortex-m"
    } else if std::env::var_os("CARGO_FEATURE_HOST").is_some() {
        "host"
    } else {
        "none"
    };
    println!("cargo::metadata=port={port}");
    println!("cargo::rerun-if-changed=build.rs");
}
