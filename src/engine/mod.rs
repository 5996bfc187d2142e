//! The MiniKafka model (SPEC §3, E1-E8): log, topics, replication, acks,
//! failover, idempotent producer and offsets. Module names mirror the book's
//! `src/minikafka/` so a lecturer can point at the same names.
//!
//! This layer knows nothing of terminals. Time comes only from a [`clock::Clock`];
//! every map that reaches output is ordered.
//!
//! | module | the book's | what it holds |
//! | --- | --- | --- |
//! | [`core`] | `minikafka/core` | `BrokerCluster` (the facade), batches, the `MKB1` codec, topics and `metadata.json` |
//! | [`log`] | `minikafka/log` | segments, the sparse index, recovery of a torn tail |
//! | [`replication`] | `minikafka/replication` | replica sets, the ISR, the HW, acks (chapters 5 and 6) |
//! | [`repl_support`] | (none) | the HW checkpoint file; what the dashboard reads of a replica set |
//! | [`producer`] | `minikafka/producer` | the idempotent producer: ids, epochs, sequences |
//! | [`consumer`] | `minikafka/consumer` | `offsets.json`, the group coordinator and its assignor, a member's consumer |
//! | [`transaction`] | `minikafka/transaction` | the journal, the coordinator, commit and abort (chapter 8) |
//! | [`fault`] | (the book's labs) | crash cut points and torn tails |
//! | [`layout`] | (none) | the names of a data directory's files |
//! | [`shared_files`] | (none) | time travel's copies of a data directory, sharing the files no one writes in place |
//! | [`vector_ext`] | (none) | the slice methods the engine's persistent lists (`imbl::Vector`) lack; why they are persistent |
//! | [`time_travel`] | (none) | memos (a checkpoint's state, restored without reading files) and carries (a crash's reopen reads only what changed) |
//!
//! The book's examples, in Rust (chapters 5, 6 and 8): an `acks=all` append
//! waits for the follower; under the book's rules the ISR is judged after a
//! fetch round, not as the clock moves; a transaction's record is read by
//! `read_committed` once its commit is done.
//!
//! ```
//! use minikafka::engine::*;
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let dir = tempfile::tempdir().unwrap();
//! let clock = ManualClock::new();
//! let config = MiniKafkaConfig::new(dir.path()).with_brokers([1, 2]);
//! let cluster = BrokerCluster::open(config, clock.clone())?;
//! cluster.create_topic("out", 1, 2)?;
//! let tp = TopicPartition::new("out", 0);
//!
//! // Chapter 5: acks=all completes when the follower has fetched the batch.
//! let ack = cluster.append_batch(&tp, RecordBatch::of_values(["v"]), AckMode::All);
//! cluster.replicate_all_once()?;
//! assert_eq!(ack.await?.base_offset(), Some(0));
//!
//! // Chapter 6: the clock alone changes no ISR; the next fetch round does.
//! cluster.stop_broker(2)?;
//! clock.advance(10_001);
//! cluster.tick()?;
//! assert_eq!(cluster.replica_set(&tp)?.isr(), [1, 2]);
//! cluster.replicate_all_once()?;
//! assert_eq!(cluster.replica_set(&tp)?.isr(), [1]);
//! cluster.start_broker(2)?;
//! cluster.replicate_all_once()?;
//!
//! // Chapter 8: read_committed sees a transaction's record after its commit.
//! let tx = cluster.transactions().begin("tx-1").await?;
//! let send = tokio::spawn({ let tx = tx.clone(); async move { tx.send_to("out", 0, "pending").await } });
//! tokio::task::yield_now().await;
//! cluster.replicate_all_once()?;
//! send.await.unwrap()?;
//! let commit = tokio::spawn({ let tx = tx.clone(); async move { tx.commit().await } });
//! tokio::task::yield_now().await;
//! cluster.replicate_all_once()?;
//! commit.await.unwrap()?;
//! let read = cluster.fetch(&tp, 0, 10, IsolationLevel::ReadCommitted)?;
//! assert_eq!(read.last().unwrap().value.as_deref(), Some(&b"pending"[..]));
//! cluster.close()?;
//! # Ok::<(), MiniKafkaError>(()) }).unwrap();
//! ```

pub mod clock;
pub mod config;
pub mod consumer;
pub mod core;
pub mod error;
pub mod fault;
pub mod fsutil;
pub mod io_fault;
pub mod layout;
pub mod log;
pub mod producer;
pub mod repl_support;
pub mod replication;
pub mod shared_files;
pub mod time_travel;
pub mod transaction;
pub mod txn_support;
pub mod vector_ext;

pub use self::clock::{Clock, ManualClock, SystemClock};
pub use self::config::MiniKafkaConfig;
pub use self::core::batch::{ControlType, RecordBatch};
pub use self::core::cluster::BrokerCluster;
pub use self::core::metadata::TopicPartition;
pub use self::core::record::{Header, Record};
pub use self::core::recovery::RecoveryReport;
pub use self::error::{MiniKafkaError, Result};
pub use self::replication::model::{AckMode, AppendResult, IsolationLevel};
