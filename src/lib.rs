//! mk-tui: a terminal dashboard hosting a live, embedded MiniKafka cluster.
//! The library is named after the book's package, `minikafka`.
//!
//! Layers (SPEC §2), dependencies pointing down: `cli` -> `ui` -> `session` ->
//! [`engine`]. The engine is the MiniKafka model; [`demo`] builds the demo
//! cluster that plain `mk-tui` starts on.

pub mod cli;
pub mod demo;
pub mod engine;
#[doc(hidden)]
pub mod fuzzing;
#[doc(hidden)]
pub mod perf;
pub mod session;
pub mod ui;
