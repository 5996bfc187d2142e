//! The book's `log` package (E2): segmented, CRC-checked, append-only
//! partition logs with a sparse offset index.

pub mod index;
pub mod lineage;
pub mod partition_log;
pub mod recovery;
pub mod segment;

pub use partition_log::{BatchSummary, LogRecovery, PartitionLog};
