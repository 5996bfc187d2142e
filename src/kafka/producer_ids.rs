//! The producer ids `serve` gives out, kept in the data directory so that
//! none is ever given twice, across restarts too, and the identity
//! InitProducerId gave each transactional id (the engine keeps none under
//! the book's rules, and under the kafka rules takes a new epoch at each
//! `begin` while the client keeps its own).
//!
//! Kafka's brokers take producer ids in blocks of 1,000 from the
//! controller, which writes each block to the metadata log before a broker
//! hands out any id of it; a restarted broker takes a new block. Here the
//! block's end is written to `serve-producer-ids.json` (atomically, as the
//! book writes its JSON files) before the first id of the block is given,
//! so a restart goes on from the end of the last block. A producer id
//! reused would let a new client's batches pass for an old client's
//! retries (E7), acknowledged and never appended.
//!
//! The numbers of consumer group members go the same way
//! (`member_block_end`): a group's membership is the server's and is not
//! kept, so a restarted server would otherwise name a new member as it
//! named one of the last life, whose client still holds that id and whose
//! heartbeats and commits would pass for the new member's. Kafka names a
//! member with a random UUID; here the number goes on from the last block
//! (`rdkafka-1` in a server's first life, `rdkafka-1001` after a restart).
//!
//! Group generations too (`generation_block_end`): a group's generation
//! starts again after a restart, and a member of the last life that
//! rejoins still claims its partitions at its old generation, which a
//! cooperative assignor trusts over a lower one (a new user's trial: a
//! franz-go member took back a partition another had processed for
//! seconds, and its stale position duplicated 25,000 records). Every
//! generation a JoinGroup can be answered is reserved before the request
//! is handled, and a restarted server starts its groups above the last
//! reservation, so no generation of a new life is below one of the last.
//! Kafka keeps each group's generation in `__consumer_offsets` instead.
//!
//! The file is this server's, not the book's (FORMATS.md has no such
//! file): `{"version":1,"block_end":2000,"transactional":{"tx":[1000,3]},
//! "member_block_end":1001,"generation_block_end":1001}` (the last two
//! keys only once a member joined).
//! docs/reliability.md, *What `serve` promises a client across restarts*.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::fsutil;
use crate::session::SessionError;

/// The file's name in the data directory.
pub const FILE: &str = "serve-producer-ids.json";

/// The ids the server gives out itself start here; the engine's own ids
/// (its named producers, and transactional ids under `--rules kafka`)
/// count up from 0, so the two are told apart at a glance.
pub const FIRST_SERVER_PRODUCER_ID: i64 = 1000;

/// Ids reserved by one write of the file, as Kafka's blocks.
pub const BLOCK: i64 = 1000;

const VERSION: u32 = 1;

/// What the file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Stored {
    version: u32,
    /// Every id below it may have been given out.
    block_end: i64,
    /// Each transactional id's producer id and epoch, as its client holds
    /// them.
    #[serde(default)]
    transactional: BTreeMap<String, (i64, i16)>,
    /// Every member number below it may have been given out.
    #[serde(default, skip_serializing_if = "is_zero")]
    member_block_end: u64,
    /// No group generation above it was given out.
    #[serde(default, skip_serializing_if = "is_zero_generation")]
    generation_block_end: i32,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_generation(n: &i32) -> bool {
    *n == 0
}

/// The server's producer id allocator, persisted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerIds {
    path: PathBuf,
    next: i64,
    next_member: u64,
    /// The generation this life's groups start from: the last life's
    /// reservation.
    generation_floor: i32,
    stored: Stored,
    sync: bool,
}

impl ProducerIds {
    /// Opens the file of `data_dir`, or starts a new one. `floor`: an id
    /// the cluster's logs or journal already hold, plus one (a data
    /// directory written before this file existed); the first id given
    /// is at least it.
    pub fn open(data_dir: &Path, floor: i64, sync: bool) -> Result<Self, SessionError> {
        let path = data_dir.join(FILE);
        let stored: Stored = fsutil::read_json_file(&path)?.unwrap_or_default();
        if stored.version > VERSION {
            return Err(SessionError::path(
                &path,
                format!(
                    "version {} is newer than this mk-tui reads ({VERSION})",
                    stored.version
                ),
            ));
        }
        let next = stored.block_end.max(floor).max(FIRST_SERVER_PRODUCER_ID);
        let next_member = stored.member_block_end.max(1);
        Ok(Self {
            path,
            next,
            next_member,
            generation_floor: stored.generation_block_end.max(0),
            stored: Stored {
                version: VERSION,
                block_end: next,
                ..stored
            },
            sync,
        })
    }

    /// The next producer id, never given before: a new block is written
    /// first when the last is used up. `Err` if the file cannot be
    /// written (a full disk): then no id is given.
    pub fn allocate(&mut self) -> Result<i64, SessionError> {
        if self.next >= self.stored.block_end {
            let mut stored = self.stored.clone();
            stored.block_end = self.next + BLOCK;
            self.write(&stored)?;
            self.stored = stored;
        }
        let id = self.next;
        self.next += 1;
        Ok(id)
    }

    /// The next consumer group member number, never given before (from 1
    /// in a new directory): a new block is written first when the last is
    /// used up. `Err` if the file cannot be written: then none is given.
    pub fn allocate_member(&mut self) -> Result<u64, SessionError> {
        if self.next_member >= self.stored.member_block_end {
            let mut stored = self.stored.clone();
            stored.member_block_end = self.next_member + BLOCK as u64;
            self.write(&stored)?;
            self.stored = stored;
        }
        let n = self.next_member;
        self.next_member += 1;
        Ok(n)
    }

    /// The generation this life's consumer groups start from (0 in a new
    /// directory): every generation of the last life is at most it.
    pub fn generation_floor(&self) -> i32 {
        self.generation_floor
    }

    /// Reserves every group generation up to `generation` before one is
    /// given: a new block is written first when it goes past the last.
    /// `Err` if the file cannot be written: then none may be given.
    pub fn reserve_generation(&mut self, generation: i32) -> Result<(), SessionError> {
        if generation > self.stored.generation_block_end {
            let mut stored = self.stored.clone();
            stored.generation_block_end = generation.saturating_add(BLOCK as i32);
            self.write(&stored)?;
            self.stored = stored;
        }
        Ok(())
    }

    /// The identity the server last gave `txn`.
    pub fn transactional(&self, txn: &str) -> Option<(i64, i16)> {
        self.stored.transactional.get(txn).copied()
    }

    /// Records the identity given to `txn`, durably, before the client
    /// hears of it.
    pub fn set_transactional(
        &mut self,
        txn: &str,
        identity: (i64, i16),
    ) -> Result<(), SessionError> {
        let mut stored = self.stored.clone();
        stored.transactional.insert(txn.to_string(), identity);
        self.write(&stored)?;
        self.stored = stored;
        Ok(())
    }

    fn write(&self, stored: &Stored) -> Result<(), SessionError> {
        Ok(fsutil::write_atomically(
            &self.path,
            fsutil::to_book_json(stored).as_bytes(),
            self.sync,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_go_on_from_the_last_block_after_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut ids = ProducerIds::open(dir.path(), 0, false).unwrap();
        assert_eq!(ids.allocate().unwrap(), 1000);
        assert_eq!(ids.allocate().unwrap(), 1001);
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert_eq!(text, r#"{"version":1,"block_end":2000,"transactional":{}}"#);
        // A restart: the rest of the block is skipped, never reused.
        let mut ids = ProducerIds::open(dir.path(), 0, false).unwrap();
        assert_eq!(ids.allocate().unwrap(), 2000);
        for expected in 2001..3000 {
            assert_eq!(ids.allocate().unwrap(), expected);
        }
        assert_eq!(ids.allocate().unwrap(), 3000, "a new block");
        let mut ids = ProducerIds::open(dir.path(), 0, false).unwrap();
        assert_eq!(ids.allocate().unwrap(), 4000);
    }

    #[test]
    fn a_reopen_starts_group_generations_above_every_one_reserved_before() {
        let dir = tempfile::tempdir().unwrap();
        let mut ids = ProducerIds::open(dir.path(), 0, false).unwrap();
        assert_eq!(
            ids.generation_floor(),
            0,
            "a new directory: Kafka's 1 first"
        );
        ids.reserve_generation(1).unwrap();
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert!(text.ends_with(r#""generation_block_end":1001}"#), "{text}");
        ids.reserve_generation(1001).unwrap();
        ids.reserve_generation(1002).unwrap();
        let ids = ProducerIds::open(dir.path(), 0, false).unwrap();
        assert_eq!(
            ids.generation_floor(),
            2002,
            "above every generation reserved in the last life"
        );
    }

    #[test]
    fn ids_the_logs_hold_are_not_given_and_transactional_ids_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut ids = ProducerIds::open(dir.path(), 1500, false).unwrap();
        assert_eq!(ids.allocate().unwrap(), 1500);
        ids.set_transactional("tx", (1500, 2)).unwrap();
        let ids = ProducerIds::open(dir.path(), 0, false).unwrap();
        assert_eq!(ids.transactional("tx"), Some((1500, 2)));
        assert_eq!(ids.transactional("other"), None);
    }

    #[test]
    fn member_numbers_go_on_from_the_last_block_after_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut ids = ProducerIds::open(dir.path(), 0, false).unwrap();
        assert_eq!(ids.allocate_member().unwrap(), 1);
        assert_eq!(ids.allocate_member().unwrap(), 2);
        assert_eq!(ids.allocate().unwrap(), 1000, "producer ids apart");
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert_eq!(
            text,
            r#"{"version":1,"block_end":2000,"transactional":{},"member_block_end":1001}"#
        );
        // A restart: no number of the last life is given again.
        let mut ids = ProducerIds::open(dir.path(), 0, false).unwrap();
        assert_eq!(ids.allocate_member().unwrap(), 1001);
        for expected in 1002..2001 {
            assert_eq!(ids.allocate_member().unwrap(), expected);
        }
        assert_eq!(ids.allocate_member().unwrap(), 2001, "a new block");
        let mut ids = ProducerIds::open(dir.path(), 0, false).unwrap();
        assert_eq!(ids.allocate_member().unwrap(), 3001);
        assert_eq!(
            ids.allocate().unwrap(),
            2000,
            "producer ids kept their block"
        );
    }

    #[test]
    fn a_newer_file_is_refused_and_a_failed_write_gives_no_id() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), r#"{"version":9,"block_end":5}"#).unwrap();
        let e = ProducerIds::open(dir.path(), 0, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("version 9 is newer"), "{e}");
        let gone = dir.path().join("gone");
        let mut ids = ProducerIds::open(&gone, 0, false).unwrap();
        assert!(
            ids.allocate().is_err(),
            "no directory to write the block in"
        );
        std::fs::create_dir(&gone).unwrap();
        assert_eq!(ids.allocate().unwrap(), 1000, "the id was not used up");
    }
}
