//! `Transaction`: one transaction as `begin` returned it. Like the book's
//! `Transaction`, each method delegates to the [`TransactionManager`].

use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::recovery::RecoveryReport;
use crate::engine::error::Result;
use crate::engine::transaction::coordinator::InstanceRef;
use crate::engine::transaction::manager::TransactionManager;
use crate::engine::transaction::model::CutPoint;

/// How a commit or abort ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndOutcome {
    /// Every step ran: the transaction is COMPLETE_*.
    Completed,
    /// The process "died" at the cut point and recovered; here is what
    /// recovery did.
    Crashed(RecoveryReport),
}

/// One transaction.
#[derive(Debug, Clone)]
pub struct Transaction {
    manager: TransactionManager,
    id: String,
    instance: InstanceRef,
}

impl Transaction {
    /// A handle on instance `instance` of `id` (what `begin` returned).
    pub fn new(manager: TransactionManager, id: &str, instance: InstanceRef) -> Self {
        Self {
            manager,
            id: id.to_string(),
            instance,
        }
    }

    /// The transactional id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The instance this handle was made for (and, under the kafka rules, its
    /// producer epoch).
    pub fn instance(&self) -> InstanceRef {
        self.instance
    }

    /// Kafka rules: the producer epoch this handle holds.
    pub fn producer_epoch(&self) -> Option<i32> {
        self.instance.epoch
    }

    /// Sends one value to `topic`, partition chosen as for any keyless record.
    pub async fn send(
        &self,
        topic: &str,
        value: impl Into<Vec<u8>>,
    ) -> Result<(TopicPartition, i64)> {
        self.manager
            .send(self, topic, None, None, value.into())
            .await
    }

    /// Sends one value to `partition` of `topic` (the book's
    /// `tx.send(topic, value=…, partition=…)`).
    pub async fn send_to(
        &self,
        topic: &str,
        partition: u32,
        value: impl Into<Vec<u8>>,
    ) -> Result<(TopicPartition, i64)> {
        self.manager
            .send(self, topic, Some(partition), None, value.into())
            .await
    }

    /// Sends one record, to `partition` if given, else by key, else
    /// round-robin.
    pub async fn send_record(
        &self,
        topic: &str,
        partition: Option<u32>,
        key: Option<&[u8]>,
        value: impl Into<Vec<u8>>,
    ) -> Result<(TopicPartition, i64)> {
        self.manager
            .send(self, topic, partition, key, value.into())
            .await
    }

    /// Sends several records as one transactional batch, to `partition` if
    /// given, else by the first record's key, else round-robin.
    pub async fn send_batch(
        &self,
        topic: &str,
        partition: Option<u32>,
        records: Vec<crate::engine::Record>,
    ) -> Result<(TopicPartition, i64)> {
        self.manager
            .send_batch(self, topic, partition, records)
            .await
    }

    /// Sends a Kafka client's batch numbered as the client numbered it
    /// ([`TransactionManager::send_batch_as`]).
    pub async fn send_batch_as(
        &self,
        topic: &str,
        partition: Option<u32>,
        records: Vec<crate::engine::Record>,
        wire: Option<(i64, i32, i32)>,
    ) -> Result<super::manager::Sent> {
        self.manager
            .send_batch_as(self, topic, partition, records, wire)
            .await
    }

    /// Stages consumer offsets for `group`; published only by commit.
    pub async fn send_offsets(
        &self,
        group: &str,
        offsets: impl IntoIterator<Item = (TopicPartition, i64)>,
    ) -> Result<()> {
        self.manager
            .send_offsets(self, group, offsets.into_iter().collect())
            .await
    }

    /// Commits: the chapter's four steps, in order.
    pub async fn commit(&self) -> Result<()> {
        self.manager.commit(self, None).await.map(|_| ())
    }

    /// Aborts: PREPARE_ABORT, ABORT markers, staged offsets discarded,
    /// COMPLETE_ABORT.
    pub async fn abort(&self) -> Result<()> {
        self.manager.abort(self, None).await.map(|_| ())
    }

    /// Commits, but stops after `cut` and crashes the cluster (E13).
    pub async fn commit_until(&self, cut: Option<CutPoint>) -> Result<EndOutcome> {
        self.manager.commit(self, cut).await
    }

    /// Aborts, but stops after `cut` and crashes the cluster (E13).
    pub async fn abort_until(&self, cut: Option<CutPoint>) -> Result<EndOutcome> {
        self.manager.abort(self, cut).await
    }
}
