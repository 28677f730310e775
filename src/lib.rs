//! Capability Graph engine: providers declare capabilities; hosts discover, select, resolve
//! and read them within a trusted scope, on stable revisions, with honest completeness.
//!
//! Everything but [`binding`] is plain Rust, tested with `cargo test`; the binding converts at
//! the Node.js boundary (JSON text in, JSON text out).

pub mod config;
pub mod cursor;
pub mod definitions;
pub mod encoder;
pub mod engine;
pub mod error;
pub mod fsx;
pub mod hostcall;
pub mod ids;
pub mod json;
pub mod knowledge;
pub mod lane;
pub mod matching;
pub mod memory;
pub mod opcount;
pub mod query;
pub mod scope;
pub mod snapshot;
pub mod sources;
pub mod store;
pub mod workers;

#[cfg(test)]
mod scale_tests;

// napi registers its glue only outside `cargo test`, so tests leave the binding out entirely.
#[cfg(not(test))]
mod binding;
