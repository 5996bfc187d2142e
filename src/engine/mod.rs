//! The MiniKafka model (SPEC §3, E1-E8): log, topics, replication, acks,
//! failover, idempotent producer and offsets. Module names mirror the book's
//! `src/minikafka/` so a lecturer can point at the same names.
//!
//! This layer knows nothing of terminals. Time comes only from a [`clock::Clock`];
//! every map that reaches output is ordered.

pub mod clock;
pub mod config;
pub mod consumer;
pub mod core;
pub mod error;
pub mod fault;
pub mod fsutil;
pub mod io_fault;
pub mod log;
pub mod producer;
pub mod replication;
pub mod transaction;

pub use self::clock::{Clock, ManualClock, SystemClock};
pub use self::config::MiniKafkaConfig;
pub use self::core::batch::{ControlType, RecordBatch};
pub use self::core::cluster::BrokerCluster;
pub use self::core::metadata::TopicPartition;
pub use self::core::record::{Header, Record};
pub use self::core::recovery::RecoveryReport;
pub use self::error::{MiniKafkaError, Result};
pub use self::replication::model::{AckMode, AppendResult, IsolationLevel};
