//! The book's `replication` package (E4-E6): replicas, the ISR, the high
//! watermark, acks and failover.

pub mod model;
pub mod replica;
pub mod replica_set;

pub use model::{AckMode, AppendResult, IsolationLevel};
pub use replica::Replica;
pub use replica_set::PartitionReplicaSet;
