//! The book's `Transaction` (in `manager.py`): one transaction as `begin`
//! returned it. Each method delegates to the [`TransactionManager`]. The
//! handle's other ways to send and to stop at a cut point are in
//! `txn_support::steps`.

use crate::engine::core::metadata::TopicPartition;
use crate::engine::error::Result;
use crate::engine::transaction::manager::TransactionManager;
use crate::engine::txn_support::steps::InstanceRef;

/// One transaction (the book's `manager` and `data`: here the id and the
/// instance `begin` made).
#[derive(Debug, Clone)]
pub struct Transaction {
    pub(crate) manager: TransactionManager,
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

    /// `send`: one value to `topic`, partition chosen as for any keyless
    /// record.
    pub async fn send(
        &self,
        topic: &str,
        value: impl Into<Vec<u8>>,
    ) -> Result<(TopicPartition, i64)> {
        self.manager
            .send(self, topic, None, None, value.into())
            .await
    }

    /// `send_offsets`: stages consumer offsets for `group`; published only
    /// by commit.
    pub async fn send_offsets(
        &self,
        group: &str,
        offsets: impl IntoIterator<Item = (TopicPartition, i64)>,
    ) -> Result<()> {
        self.manager
            .send_offsets(self, group, offsets.into_iter().collect())
            .await
    }

    /// `commit`: the chapter's four steps, in order.
    pub async fn commit(&self) -> Result<()> {
        self.manager.commit(self, None).await.map(|_| ())
    }

    /// `abort`: PREPARE_ABORT, ABORT markers, staged offsets discarded,
    /// COMPLETE_ABORT.
    pub async fn abort(&self) -> Result<()> {
        self.manager.abort(self, None).await.map(|_| ())
    }
}
