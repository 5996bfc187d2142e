//! `cluster.json`: what a data directory remembers of how it was made. The
//! rules, the configuration and the engine clock are not in any file the book
//! defines (FORMATS.md), so a directory reopened by `--data-dir` alone used to
//! come back under the book's rules, the default configuration and a clock at
//! 0. This extra file keeps them; the book's files keep the book's format, and
//! the book's code ignores this one.
//!
//! ```text
//! {"clock_ms":3600000,"config":{"broker_ids":[1,2,3],…,"segment_max_bytes":300,…},
//!  "rules":"kafka","unix_origin_ms":1796190000000,"version":1}
//! ```
//!
//! Compact JSON with sorted keys, replaced atomically (`.tmp`, fsync,
//! rename, fsync of the directory) as `metadata.json` is. Written by the
//! driver of a data directory a user keeps (never a private temporary
//! one): when the cluster is made, after a step that moved the clock (as
//! often as the HW checkpoint), when serve fixes its wall-clock origin, and
//! when the driver closes. docs/reliability.md, "What the data directory
//! remembers".

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::config::{BrokerId, MiniKafkaConfig, Rules, TransactionVersion};
use crate::engine::error::MiniKafkaError;
use crate::engine::fsutil;
use crate::session::error::SessionError;
use crate::session::limits::MAX_CLOCK_MS;

/// The file's name in the data directory.
pub const CLUSTER_FILE: &str = "cluster.json";

/// The only format version of `cluster.json`.
pub const CLUSTER_FILE_VERSION: u32 = 1;

/// The configuration as `cluster.json` keeps it: every field of
/// [`MiniKafkaConfig`] a recording header or the defaults can set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredConfig {
    pub broker_ids: Vec<BrokerId>,
    pub group_session_timeout_ms: u64,
    pub index_interval_bytes: u64,
    /// `"at_fetch"` or `"by_clock"` (a recording may set it apart from the
    /// rules).
    pub isr_evaluation: String,
    pub min_insync_replicas: usize,
    pub replica_fetch_max_bytes: u64,
    pub replica_lag_max_offsets: u64,
    pub replica_lag_time_ms: u64,
    pub segment_max_bytes: u64,
    pub transaction_timeout_ms: u64,
    /// Kafka's `transaction.version`, 1 or 2; written only when 2, so a
    /// version 1 file keeps its bytes.
    #[serde(default = "version_one", skip_serializing_if = "is_version_one")]
    pub transaction_version: u8,
}

fn version_one() -> u8 {
    1
}

fn is_version_one(v: &u8) -> bool {
    *v == 1
}

/// The contents of `cluster.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterFile {
    /// The engine clock when the file was written: a reopen starts there.
    pub clock_ms: u64,
    pub config: StoredConfig,
    /// `"minikafka"` or `"kafka"`.
    pub rules: String,
    /// `mk-tui serve`: the Unix time (ms) of the engine clock's 0. Serve's
    /// clock is the wall clock's time since then, across restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unix_origin_ms: Option<i64>,
    pub version: u64,
}

/// Only the version, read first, so a newer file is refused as newer
/// rather than as corrupt.
#[derive(Deserialize)]
struct VersionOnly {
    version: u64,
}

impl ClusterFile {
    /// What `config` (opened under `rules`) and the clock at `clock_ms`
    /// are, as the file keeps them.
    pub fn of(config: &MiniKafkaConfig, rules: Rules, clock_ms: u64) -> Self {
        Self {
            clock_ms,
            config: StoredConfig {
                broker_ids: config.broker_ids.clone(),
                group_session_timeout_ms: config.group_session_timeout_ms,
                index_interval_bytes: config.index_interval_bytes,
                isr_evaluation: if config.rules.isr_by_clock {
                    "by_clock"
                } else {
                    "at_fetch"
                }
                .to_string(),
                min_insync_replicas: config.min_insync_replicas,
                replica_fetch_max_bytes: config.replica_fetch_max_bytes,
                replica_lag_max_offsets: config.replica_lag_max_offsets,
                replica_lag_time_ms: config.replica_lag_time_ms,
                segment_max_bytes: config.segment_max_bytes,
                transaction_timeout_ms: config.transaction_timeout_ms,
                transaction_version: config.rules.transaction_version.number(),
            },
            rules: rules.name().to_string(),
            unix_origin_ms: None,
            version: u64::from(CLUSTER_FILE_VERSION),
        }
    }

    /// The path of the file in `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(CLUSTER_FILE)
    }

    /// Reads `dir/cluster.json`; `None` if there is none (a directory made
    /// by the book's code or by an mk-tui before this file). A file that is
    /// not one (a FIFO, a symlink), does not parse, is of a newer version
    /// or holds values no mk-tui writes is an error naming it.
    pub fn read(dir: &Path) -> Result<Option<Self>, SessionError> {
        let path = Self::path(dir);
        let corrupt = |reason: String| SessionError::from(MiniKafkaError::corrupt(&path, reason));
        let Some(version) = fsutil::read_json_file::<VersionOnly>(&path)? else {
            return Ok(None);
        };
        if version.version != u64::from(CLUSTER_FILE_VERSION) {
            return Err(MiniKafkaError::unsupported_version(
                &path,
                version.version,
                CLUSTER_FILE_VERSION,
            )
            .into());
        }
        let file = fsutil::read_json_file::<Self>(&path)?.expect("read just before");
        file.rules.parse::<Rules>().map_err(corrupt)?;
        if !matches!(file.config.isr_evaluation.as_str(), "at_fetch" | "by_clock") {
            return Err(corrupt(format!(
                "isr_evaluation {:?} is not \"at_fetch\" or \"by_clock\"",
                file.config.isr_evaluation
            )));
        }
        if file.clock_ms > MAX_CLOCK_MS {
            return Err(corrupt(format!(
                "clock_ms {} is past the clock's cap, {MAX_CLOCK_MS} ms",
                file.clock_ms
            )));
        }
        Ok(Some(file))
    }

    /// The rules, parsed.
    pub fn rules_parsed(&self) -> Result<Rules, SessionError> {
        self.rules.parse().map_err(SessionError::Rules)
    }

    /// The configuration the file describes, on `dir`.
    pub fn config(&self, dir: &Path) -> Result<MiniKafkaConfig, SessionError> {
        let rules = self.rules_parsed()?;
        let c = &self.config;
        let mut config = MiniKafkaConfig::new(dir)
            .with_brokers(c.broker_ids.iter().copied())
            .with_rules(rules);
        config.group_session_timeout_ms = c.group_session_timeout_ms;
        config.index_interval_bytes = c.index_interval_bytes;
        config.rules.isr_by_clock = c.isr_evaluation == "by_clock";
        config.min_insync_replicas = c.min_insync_replicas;
        config.replica_fetch_max_bytes = c.replica_fetch_max_bytes;
        config.replica_lag_max_offsets = c.replica_lag_max_offsets;
        config.replica_lag_time_ms = c.replica_lag_time_ms;
        config.segment_max_bytes = c.segment_max_bytes;
        config.transaction_timeout_ms = c.transaction_timeout_ms;
        config.rules.transaction_version =
            TransactionVersion::from_number(c.transaction_version.into()).ok_or_else(|| {
                SessionError::Rules(format!(
                    "transaction_version {} is not 1 or 2",
                    c.transaction_version
                ))
            })?;
        Ok(config)
    }

    /// Refuses `--rules` given on a reopen when it is not the rules the
    /// directory was made under, naming both; rules that agree (or none
    /// given) are fine.
    pub fn check_given(&self, dir: &Path, given: Option<Rules>) -> Result<(), SessionError> {
        match given {
            Some(given) if given.name() != self.rules => Err(SessionError::flag(
                format!("--rules {}", given.name()),
                format!(
                    "{} was made under --rules {} ({}); leave --rules out to reopen it as it was made",
                    dir.display(),
                    self.rules,
                    Self::path(dir).display()
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Replaces `dir/cluster.json` with this (atomically; fsynced when
    /// `sync`).
    pub fn write(&self, dir: &Path, sync: bool) -> crate::engine::error::Result<()> {
        let json = fsutil::to_book_json(self);
        fsutil::write_atomically(&Self::path(dir), json.as_bytes(), sync)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_compact_sorted_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = MiniKafkaConfig::new(dir.path())
            .with_brokers([3, 1, 2])
            .with_rules(Rules::Kafka);
        config.segment_max_bytes = 300;
        let mut file = ClusterFile::of(&config, Rules::Kafka, 3_600_000);
        file.unix_origin_ms = Some(1_700_000_000_000);
        file.write(dir.path(), false).unwrap();
        let text = std::fs::read_to_string(dir.path().join(CLUSTER_FILE)).unwrap();
        assert_eq!(
            text,
            r#"{"clock_ms":3600000,"config":{"broker_ids":[3,1,2],"group_session_timeout_ms":10000,"index_interval_bytes":4096,"isr_evaluation":"by_clock","min_insync_replicas":1,"replica_fetch_max_bytes":1048576,"replica_lag_max_offsets":10000,"replica_lag_time_ms":10000,"segment_max_bytes":300,"transaction_timeout_ms":60000},"rules":"kafka","unix_origin_ms":1700000000000,"version":1}"#
        );
        let back = ClusterFile::read(dir.path()).unwrap().unwrap();
        assert_eq!(back, file);
        assert_eq!(back.config(dir.path()).unwrap(), config);
    }

    #[test]
    fn a_missing_file_is_none_and_a_bad_one_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(ClusterFile::read(dir.path()).unwrap(), None);
        let path = dir.path().join(CLUSTER_FILE);
        std::fs::write(&path, r#"{"version":2}"#).unwrap();
        let err = ClusterFile::read(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("written by a newer mk-tui (format version 2"),
            "{err}"
        );
        let file = ClusterFile::of(&MiniKafkaConfig::new(dir.path()), Rules::Minikafka, 0);
        let mut json = serde_json::to_value(&file).unwrap();
        json["rules"] = "book".into();
        std::fs::write(&path, json.to_string()).unwrap();
        let err = ClusterFile::read(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("cluster.json") && err.contains("\"book\""),
            "{err}"
        );
        json["rules"] = "kafka".into();
        json["clock_ms"] = serde_json::json!(u64::MAX);
        std::fs::write(&path, json.to_string()).unwrap();
        let err = ClusterFile::read(dir.path()).unwrap_err().to_string();
        assert!(err.contains("past the clock's cap"), "{err}");
    }

    #[test]
    fn rules_that_contradict_are_refused_naming_both() {
        let dir = Path::new("/d");
        let file = ClusterFile::of(&MiniKafkaConfig::new(dir), Rules::Kafka, 0);
        assert!(file.check_given(dir, None).is_ok());
        assert!(file.check_given(dir, Some(Rules::Kafka)).is_ok());
        assert_eq!(
            file.check_given(dir, Some(Rules::Minikafka))
                .unwrap_err()
                .to_string(),
            "--rules minikafka: /d was made under --rules kafka (/d/cluster.json); leave --rules out to reopen it as it was made"
        );
    }
}
