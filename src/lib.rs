//! mk-tui: a terminal dashboard hosting a live, embedded MiniKafka cluster.
//! The library is named after the book's package, `minikafka`.
//!
//! Layers (SPEC §2), dependencies pointing down: `cli` -> `ui` -> `session` ->
//! [`engine`]. The engine is the MiniKafka model; [`demo`] builds the demo
//! cluster that plain `mk-tui` starts on.
//!
//! Cargo features (`docs/build.md`): `ui`, `cli` and the binary need the
//! default `tui` feature, which brings the terminal and argument-parsing
//! crates; without it the library is the engine and session layers alone.
//! The `serve` feature (default) adds [`kafka`], the Kafka wire protocol
//! server of `mk-tui serve`.
//! `perf` and `fuzzing` exist only with `testkit`, which the crate's own
//! tests, benches, examples and `fuzz/` turn on.

#[cfg(feature = "tui")]
pub mod cli;
pub mod demo;
pub mod engine;
#[cfg(feature = "testkit")]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(feature = "serve")]
pub mod kafka;
pub mod lab;
#[cfg(feature = "serve")]
pub mod observe;
#[cfg(feature = "testkit")]
#[doc(hidden)]
pub mod perf;
pub mod session;
#[cfg(feature = "tui")]
pub mod ui;
