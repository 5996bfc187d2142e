//! Beyond the book's `replication` package: the high-watermark checkpoint
//! file, and what the dashboard and the Kafka edge read of a replica set.

pub mod checkpoint;
pub mod epoch_end;
pub mod readers;
