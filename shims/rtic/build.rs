//! Exactly one of RTIC's backend features, and one the stand-in supports (as the real crate's
//! build script checks): the backend decides which lock `#[rtic::app]` expands to.

use std::env;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!(
        "cargo::rustc-check-cfg=cfg(implementation, values(\"cortex-m-basepri\", \"cortex-m-source-masking\"))"
    );
    let backends: Vec<String> = env::vars()
        .filter_map(|(k, _)| {
            k.strip_prefix("CARGO_FEATURE_")
                .filter(|f| f.ends_with("_BACKEND"))
                .map(|f| f.to_lowercase().replace('_', "-"))
        })
        .collect();
    let implementation = match backends.as_slice() {
        [] => {
            println!(
                "cargo::error=rtic (Jostle): no backend feature selected (thumbv6-backend, thumbv7-backend, thumbv8base-backend or thumbv8main-backend)"
            );
            return;
        }
        [b] if b == "thumbv7-backend" || b == "thumbv8main-backend" => "cortex-m-basepri",
        [b] if b == "thumbv6-backend" || b == "thumbv8base-backend" => "cortex-m-source-masking",
        [b] => {
            println!(
                "cargo::error=rtic (Jostle): the backend `{b}` is not supported: Jostle runs RTIC on Cortex-M (thumbv6-backend, thumbv7-backend, thumbv8base-backend, thumbv8main-backend)"
            );
            return;
        }
        more => {
            println!("cargo::error=rtic (Jostle): more than one backend selected: {more:?}");
            return;
        }
    };
    println!("cargo::rustc-cfg=implementation=\"{implementation}\"");
}
