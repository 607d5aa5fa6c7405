// Refuses, in one line (`lib.rs`), a build whose kernel has no port: the app did not get
// Jostle's embassy-executor (its `[patch.crates-io]` line went unused, e.g. for an
// embassy-executor other than 0.10), so nothing would run the events this crate emits.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(jostle_no_port)");
    println!("cargo::rerun-if-env-changed=DEP_JOSTLE_KERNEL_PORT");
    match std::env::var("DEP_JOSTLE_KERNEL_PORT").as_deref() {
        Ok("cortex-m" | "host") => {}
        _ => println!("cargo::rustc-cfg=jostle_no_port"),
    }
}
