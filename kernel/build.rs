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
    // Whose executor runs the tasks, for the build scripts of crates that depend on the
    // kernel (`DEP_JOSTLE_KERNEL_EXECUTOR`): `embassy` when Jostle's embassy-executor is in
    // the build, `none` otherwise.
    let executor = if std::env::var_os("CARGO_FEATURE_EMBASSY").is_some() {
        "embassy"
    } else {
        "none"
    };
    println!("cargo::metadata=executor={executor}");
    println!("cargo::rerun-if-changed=build.rs");
}
