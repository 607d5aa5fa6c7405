// Refuses, in one line (`lib.rs`), a build without Jostle's embassy-executor (the app's
// `[patch.crates-io]` line for it went unused, e.g. for an embassy-executor other than
// 0.10): the kernel's build script says whether it is there (its feature `embassy`).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(jostle_no_executor)");
    println!("cargo::rerun-if-env-changed=DEP_JOSTLE_KERNEL_EXECUTOR");
    if std::env::var("DEP_JOSTLE_KERNEL_EXECUTOR").as_deref() != Ok("embassy") {
        println!("cargo::rustc-cfg=jostle_no_executor");
    }
}
