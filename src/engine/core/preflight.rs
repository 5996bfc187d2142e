//! Read-only checks of an existing data directory, run before opening it
//! writes anything (SPEC §5: errors leave nothing written).
//!
//! Opening repairs as it goes: it rebuilds indexes, cuts a torn journal tail,
//! cuts the bad tail of each replica's active segment. The refusals it can
//! meet part-way (E2: an invalid frame in a closed segment; a replica on a
//! broker that is not configured) would then leave the directory half
//! repaired. [`check_data_dir`] finds those first, reading only, so a
//! directory that will be refused is refused untouched.

use std::fs;
use std::path::Path;

use crate::engine::config::MiniKafkaConfig;
use crate::engine::core::cluster::replica_dir;
use crate::engine::core::codec;
use crate::engine::core::metadata::{MetadataStore, TopicPartition};
use crate::engine::error::{MiniKafkaError, Result};

/// Checks what opening `config.data_dir` would refuse after writing: the
/// metadata (and its format version), every replica's broker, and every
/// closed segment's frames, with the same rules and messages as the open.
pub fn check_data_dir(config: &MiniKafkaConfig) -> Result<()> {
    let metadata = MetadataStore::open(&config.data_dir)?;
    for (name, topic) in metadata.topics() {
        for (p, meta) in topic.partitions() {
            let tp = TopicPartition::new(name.clone(), p);
            for &broker in &meta.replicas {
                if !config.broker_ids.contains(&broker) {
                    return Err(MiniKafkaError::corrupt(
                        metadata.path(),
                        format!("{tp} has a replica on broker {broker}, which is not configured"),
                    ));
                }
                check_closed_segments(&replica_dir(config, broker, &tp))?;
            }
        }
    }
    Ok(())
}

/// Validates every segment of the log in `dir` but the last (the active one,
/// whose bad tail the open cuts as a repair). A missing `dir` is a new log.
fn check_closed_segments(dir: &Path) -> Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(MiniKafkaError::io(dir, e)),
    };
    let mut bases = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| MiniKafkaError::io(dir, e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some(stem) = name.strip_suffix(".log") else {
            continue;
        };
        if stem.len() == 20 && stem.bytes().all(|b| b.is_ascii_digit()) {
            bases.push(stem.parse::<i64>().map_err(|_| {
                MiniKafkaError::corrupt(entry.path(), "segment base offset out of range")
            })?);
        }
    }
    bases.sort_unstable();
    let mut next_min = 0;
    for &base in bases.iter().rev().skip(1).rev() {
        let path = dir.join(format!("{base:020}.log"));
        let bytes = fs::read(&path).map_err(|e| MiniKafkaError::io(&path, e))?;
        next_min = check_frames(&path, &bytes, base, next_min)?;
    }
    Ok(())
}

/// The rules of `Segment::open` for a closed segment: every frame valid, each
/// batch after the previous one and within 2^32 offsets of the base. Returns
/// the offset after the last batch.
fn check_frames(path: &Path, bytes: &[u8], base: i64, min_base: i64) -> Result<i64> {
    let mut next_min = min_base.max(base);
    let mut pos = 0;
    while pos < bytes.len() {
        let reason = match codec::validate(&bytes[pos..]) {
            Ok((header, _))
                if header
                    .last_offset()
                    .checked_sub(base)
                    .and_then(|d| u32::try_from(d).ok())
                    .is_none() =>
            {
                format!(
                    "batch at offset {} is not within 2^32 offsets of the segment base",
                    header.base_offset
                )
            }
            Ok((header, len)) if header.base_offset >= next_min => {
                next_min = header.last_offset() + 1;
                pos += len;
                continue;
            }
            Ok((header, _)) => format!(
                "batch at offset {} does not follow offset {}",
                header.base_offset,
                next_min - 1
            ),
            Err(e) => e.to_string(),
        };
        return Err(MiniKafkaError::corrupt(
            path,
            format!("closed segment has an invalid frame at byte {pos}: {reason}"),
        ));
    }
    Ok(next_min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::log::PartitionLog;
    use crate::engine::log::partition_log::LogConfig;
    use crate::engine::{ManualClock, RecordBatch};

    const CONFIG: LogConfig = LogConfig {
        segment_max_bytes: 150,
        index_interval_bytes: 4096,
        fsync: false,
    };

    /// A log of several segments under `dir`.
    fn rolled_log(dir: &Path) -> Vec<std::path::PathBuf> {
        let (mut log, _) = PartitionLog::open(dir, CONFIG).unwrap();
        for i in 0..8 {
            let mut batch = RecordBatch::of_values([format!("value-{i}")]);
            batch.base_offset = log.log_end_offset();
            log.append(&batch).unwrap();
        }
        let paths: Vec<_> = log
            .segments()
            .iter()
            .map(|s| s.path().to_path_buf())
            .collect();
        assert!(paths.len() >= 3, "the log rolled: {paths:?}");
        paths
    }

    /// The check refuses exactly what the open refuses, with the same
    /// message, at every corrupted byte of a closed segment.
    #[test]
    fn agrees_with_the_open_on_every_corrupted_byte() {
        let dir = tempfile::tempdir().unwrap();
        let paths = rolled_log(dir.path());
        let closed = &paths[1];
        let intact = fs::read(closed).unwrap();
        for at in 0..intact.len() {
            let mut bytes = intact.clone();
            bytes[at] ^= 0x5a;
            fs::write(closed, &bytes).unwrap();
            let checked = check_closed_segments(dir.path()).map_err(|e| e.to_string());
            let opened = PartitionLog::open(dir.path(), CONFIG)
                .map(|_| ())
                .map_err(|e| e.to_string());
            assert_eq!(checked, opened, "byte {at}");
        }
        fs::write(closed, &intact).unwrap();
        // A bad active segment is the open's to repair, not an error.
        let active = paths.last().unwrap();
        let mut bytes = fs::read(active).unwrap();
        bytes.truncate(bytes.len() - 3);
        fs::write(active, &bytes).unwrap();
        check_closed_segments(dir.path()).unwrap();
    }

    #[test]
    fn a_replica_on_an_unconfigured_broker_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let config = MiniKafkaConfig::new(dir.path()).with_brokers([1, 2]);
        let cluster =
            crate::engine::BrokerCluster::open(config.clone(), ManualClock::new()).unwrap();
        cluster.create_topic("out", 1, 2).unwrap();
        drop(cluster);
        check_data_dir(&config).unwrap();
        let err = check_data_dir(&config.clone().with_brokers([1])).unwrap_err();
        assert!(
            err.to_string()
                .contains("broker 2, which is not configured"),
            "{err}"
        );
    }
}
