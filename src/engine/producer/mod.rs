//! The book's `producer` package (E7): idempotent producer state per partition,
//! named producer identities, and the producer handle.

pub mod client;
pub mod identity;
pub mod state;

pub use client::Producer;
pub use identity::ProducerIdentities;
pub use state::{ProducerStateManager, SequenceCheck};
