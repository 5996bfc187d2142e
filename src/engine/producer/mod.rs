//! The book's `producer` package (E7): idempotent producer state per partition,
//! named producer identities, the producer handle, and its batching
//! accumulator and sticky partitioner (E17).

pub mod accumulator;
pub mod client;
pub mod identity;
pub mod partitioner;
pub mod state;

pub use accumulator::{BatchAccumulator, PendingPartition, PendingRecord};
pub use client::{Producer, SentBatch};
pub use identity::ProducerIdentities;
pub use state::{ProducerStateManager, SequenceCheck};
