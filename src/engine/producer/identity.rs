//! Named producer identities: `producer-identities.json` maps a producer name
//! to `[producer_id, epoch]` (FORMATS.md). Opening a named producer again bumps
//! its epoch, which fences the older handle (E7).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::engine::error::Result;
use crate::engine::fsutil;

pub use crate::engine::layout::IDENTITIES_FILE;

/// Producer name -> (producer id, epoch), durable in its JSON file.
#[derive(Debug, Clone)]
pub struct ProducerIdentities {
    path: PathBuf,
    by_name: BTreeMap<String, (i64, i32)>,
    /// fsync replacements (`MiniKafkaConfig::sync_writes`).
    sync: bool,
}

impl ProducerIdentities {
    /// Loads the file from `data_dir`, or starts empty.
    pub fn open(data_dir: &Path) -> Result<Self> {
        let path = data_dir.join(IDENTITIES_FILE);
        let by_name = fsutil::read_json_file(&path)?.unwrap_or_default();
        Ok(Self {
            path,
            by_name,
            sync: true,
        })
    }

    /// Whether replacements are fsynced (`MiniKafkaConfig::sync_writes`).
    pub fn set_sync(&mut self, sync: bool) {
        self.sync = sync;
    }

    /// Registers `name`: a new name gets the next producer id at epoch 0; a
    /// known name keeps its id and gets the next epoch. Persisted before it
    /// returns.
    pub fn init(&mut self, name: &str) -> Result<(i64, i32)> {
        let identity = self.next_identity(name);
        self.persist_with(name, identity)?;
        Ok(identity)
    }

    /// [`Self::init`] for a name whose epochs another durable record
    /// carries (a transactional id's: each begin's journal frame, as
    /// Kafka's `__transaction_state` does): a new name is persisted (its
    /// producer id must never be given twice), a known name's next epoch
    /// only kept in memory. The caller writes the record before anyone
    /// is told the epoch, and [`Self::learn`] takes it back on open.
    pub fn init_carried(&mut self, name: &str) -> Result<(i64, i32)> {
        let identity = self.next_identity(name);
        if self.by_name.contains_key(name) {
            self.by_name.insert(name.to_string(), identity);
        } else {
            self.persist_with(name, identity)?;
        }
        Ok(identity)
    }

    /// [`Self::advance_to`] for a name whose epochs another durable record
    /// carries (see [`Self::init_carried`]).
    pub fn advance_to_carried(&mut self, name: &str, epoch: i32) -> Result<(i64, i32)> {
        match self.by_name.get(name) {
            None => self.init_carried(name),
            Some(&(id, current)) if current >= epoch => Ok((id, current)),
            Some(&(id, _)) => {
                self.by_name.insert(name.to_string(), (id, epoch));
                Ok((id, epoch))
            }
        }
    }

    /// On open: `name`'s identity is at least `identity`, the one a
    /// durable record carried past the file (see [`Self::init_carried`]).
    /// In memory only; the file catches up at its next replacement.
    pub fn learn(&mut self, name: &str, identity: (i64, i32)) {
        let known = self.by_name.get(name).copied();
        if known.is_none_or(|(id, epoch)| id == identity.0 && epoch < identity.1) {
            self.by_name.insert(name.to_string(), identity);
        }
    }

    fn next_identity(&self, name: &str) -> (i64, i32) {
        match self.by_name.get(name) {
            Some(&(id, epoch)) => (id, epoch + 1),
            None => (
                self.by_name
                    .values()
                    .map(|(id, _)| id + 1)
                    .max()
                    .unwrap_or(0),
                0,
            ),
        }
    }

    /// Replaces the file with every identity and `name`'s set to
    /// `identity`, then takes it in memory (a failed write changes
    /// nothing).
    fn persist_with(&mut self, name: &str, identity: (i64, i32)) -> Result<()> {
        let mut next = self.by_name.clone();
        next.insert(name.to_string(), identity);
        fsutil::write_atomically(
            &self.path,
            fsutil::to_book_json(&next).as_bytes(),
            self.sync,
        )?;
        self.by_name = next;
        Ok(())
    }

    /// Moves `name` (known) to `epoch` if it is behind it: the epoch a
    /// transaction version 2 end bumped it to. Persisted before it returns.
    pub fn advance_to(&mut self, name: &str, epoch: i32) -> Result<(i64, i32)> {
        let Some(&(id, current)) = self.by_name.get(name) else {
            return self.init(name);
        };
        if current >= epoch {
            return Ok((id, current));
        }
        self.persist_with(name, (id, epoch))?;
        Ok((id, epoch))
    }

    /// The current identity of `name`.
    pub fn get(&self, name: &str) -> Option<(i64, i32)> {
        self.by_name.get(name).copied()
    }

    /// All identities by name.
    pub fn all(&self) -> &BTreeMap<String, (i64, i32)> {
        &self.by_name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_names_get_new_ids_and_known_names_new_epochs_across_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut ids = ProducerIdentities::open(dir.path()).unwrap();
        assert_eq!(ids.init("a").unwrap(), (0, 0));
        assert_eq!(ids.init("b").unwrap(), (1, 0));
        assert_eq!(
            std::fs::read_to_string(dir.path().join(IDENTITIES_FILE)).unwrap(),
            r#"{"a":[0,0],"b":[1,0]}"#
        );
        let mut ids = ProducerIdentities::open(dir.path()).unwrap();
        assert_eq!(ids.init("a").unwrap(), (0, 1));
        assert_eq!(ids.get("b"), Some((1, 0)));
    }
}
