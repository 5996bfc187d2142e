//! What the dashboard, the Kafka edge and the tests read of the
//! transaction coordinator (`state.transactions()`), and the calls the
//! cluster makes on it when a leader changes.

use std::path::Path;
use std::sync::Arc;

use crate::engine::config::RuleSwitches;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::error::MiniKafkaError;
use crate::engine::error::Result;
use crate::engine::log::PartitionLog;
use crate::engine::transaction::journal::{JournalFrame, TransactionJournal, parse_line};
use crate::engine::transaction::manager::TransactionCoordinator;
use crate::engine::transaction::model::TransactionData;
use crate::engine::txn_support::group_commit::{GroupCommit, JournalTicket};
use crate::engine::txn_support::instances::{Markers, MarkersOn};
use imbl::Vector;

impl TransactionCoordinator {
    /// The current state of `id` (its latest instance).
    pub fn get(&self, id: &str) -> Option<&TransactionData> {
        self.transactions.get(id)
    }

    /// An instance by index.
    pub fn instance(&self, index: usize) -> &TransactionData {
        self.transactions.instance(index)
    }

    /// The latest instance of every id, by id.
    pub fn current(&self) -> impl Iterator<Item = &TransactionData> {
        self.transactions.current()
    }

    /// Every instance ever seen, in begin order.
    pub fn instances(&self) -> &Vector<TransactionData> {
        self.transactions.all()
    }

    /// The instance that wrote a transactional batch of `id` at `offset`
    /// on `tp` (see [`crate::engine::txn_support::instances`]).
    pub fn owner(&self, id: &str, tp: &TopicPartition, offset: i64) -> Option<&TransactionData> {
        self.transactions.owner(id, tp, offset)
    }

    /// Where the latest instance of `id` has written markers.
    pub fn markers_of(&self, id: &str) -> Vec<(TopicPartition, i64)> {
        self.transactions.markers_of(id)
    }

    /// After a promotion (E6): the markers known on `tp` become those the
    /// new leader's log holds ("missing" means missing from the current
    /// leader's log). Markers it lacks are forgotten (they had not reached
    /// it), so a resumed commit or abort writes them again instead of
    /// waiting at an offset the new leader never had; markers it holds are
    /// known again, also those an earlier promotion forgot, so a resumed
    /// commit or abort waits for them instead of writing a second one.
    /// An open walks each leader's log with it too, where it cannot keep
    /// the markers a crashed coordinator knew ([`Self::adopt_markers`]).
    pub fn learn_markers(&mut self, tp: &TopicPartition, leader: &PartitionLog) {
        self.transactions.learn_markers(tp, leader);
    }

    /// A crash's reopen: the markers the crashed coordinator knew on each
    /// partition, to carry where its leader's log is unchanged
    /// ([`TransactionInstances::adopt_markers`]).
    pub(crate) fn carry_markers(&self) -> Markers {
        self.transactions.markers.clone()
    }

    /// See [`TransactionInstances::adopt_markers`].
    pub(crate) fn adopt_markers(
        &mut self,
        tp: &TopicPartition,
        carried: Option<MarkersOn>,
        leader: &PartitionLog,
    ) {
        self.transactions.adopt_markers(tp, carried, leader);
    }

    /// The journal's frames, oldest first.
    pub fn journal_frames(&self) -> &Vector<JournalFrame> {
        self.journal.frames()
    }

    /// The transaction state journal frame `frame` holds (read-only).
    pub fn read_journal_frame(&self, frame: &JournalFrame) -> Result<TransactionData> {
        self.journal.read_frame(frame)
    }

    /// The journal's size in bytes.
    pub fn journal_size(&self) -> u64 {
        self.journal.size()
    }

    /// The journal file's path (the torn-tail target).
    pub fn journal_path(&self) -> &Path {
        self.journal.path()
    }

    /// How many journal frames the open that made this coordinator parsed
    /// and replayed: every frame on a first open, only those written since
    /// the last recovery on a crash's reopen.
    pub fn replayed_on_open(&self) -> usize {
        self.replayed_on_open
    }

    /// Whether journal frames are fsynced (`MiniKafkaConfig::sync_writes`).
    pub fn set_sync(&mut self, sync: bool) {
        self.journal.set_sync(sync);
    }

    /// Kafka rules: journal frames are group-committed (call after
    /// [`Self::set_sync`]; without syncs there is nothing to group).
    pub fn set_group_commit(&mut self, on: bool) -> Result<()> {
        self.journal.set_group_commit(on)
    }

    /// What a request that wrote journal frames waits for, outside the
    /// state lock, before it is answered (see [`JournalTicket`]).
    pub fn journal_ticket(&self) -> JournalTicket {
        self.journal.ticket()
    }

    /// The journal's group commit, if the rules switched it on.
    pub fn journal_group_commit(&self) -> Option<&Arc<GroupCommit>> {
        self.journal.group_commit()
    }

    /// The rule switches in force.
    pub fn rules(&self) -> RuleSwitches {
        self.rules
    }
}

impl TransactionJournal {
    /// The transaction state frame `frame` holds, read back from the file
    /// (positioned read: the append position does not move). The snapshot
    /// decodes only the frames a screen shows, so this reads one line.
    pub fn read_frame(&self, frame: &JournalFrame) -> Result<TransactionData> {
        use std::os::unix::fs::FileExt;
        let len = usize::try_from(frame.len).unwrap_or(usize::MAX);
        let mut line = vec![0; len];
        self.file
            .read_exact_at(&mut line, frame.offset)
            .map_err(|e| MiniKafkaError::io(&self.path, e))?;
        let line = line.strip_suffix(b"\n").unwrap_or(&line);
        parse_line(line).map(|(_, data)| data).map_err(|why| {
            MiniKafkaError::corrupt(&self.path, format!("frame {}: {why}", frame.number))
        })
    }

    /// Whether frames are fsynced (`MiniKafkaConfig::sync_writes`).
    pub fn set_sync(&mut self, sync: bool) {
        self.sync = sync;
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every valid frame, oldest first.
    pub fn frames(&self) -> &Vector<JournalFrame> {
        &self.frames
    }

    /// Bytes in the file.
    pub fn size(&self) -> u64 {
        self.size
    }
}
