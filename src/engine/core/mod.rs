//! The book's `core` package: records, batches, the MKB1 codec, topic metadata
//! and the `BrokerCluster` facade.

pub mod batch;
pub mod batch_view;
pub mod cluster;
pub mod codec;
pub mod metadata;
pub mod partitioner;
pub mod record;
pub mod recovery;
