//! Synchronisation primitives with the `core::sync` API, instrumented.

pub mod atomic;
