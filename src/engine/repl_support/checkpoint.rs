//! The high-watermark checkpoint, `replication-offset-checkpoint` in the data
//! directory, in Kafka's text format:
//!
//! ```text
//! 0
//! <count>
//! <topic> <partition> <high watermark>
//! ```
//!
//! The book's formats have no such file; we add it so that a crash does not
//! lower the HW and hide records consumers could already read (HW is
//! monotonic, E4). A directory without it (one written by the book's code)
//! opens with the conservative HW of the lowest replica LEO. It is replaced
//! (written to a temporary file and renamed) after any operation that moved
//! an HW; like Kafka we do not fsync it each time: after a power loss it may
//! be older, which only lowers the HW.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::engine::core::metadata::TopicPartition;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;

pub use crate::engine::layout::CHECKPOINT_FILE;

/// High watermarks by partition, as last written.
#[derive(Debug, Clone)]
pub struct HighWatermarkCheckpoint {
    path: PathBuf,
    written: BTreeMap<TopicPartition, i64>,
}

impl HighWatermarkCheckpoint {
    /// Reads the checkpoint in `data_dir`, or starts empty.
    pub fn open(data_dir: &Path) -> Result<Self> {
        let path = data_dir.join(CHECKPOINT_FILE);
        let written = match fsutil::read_regular(&path, fsutil::MAX_JSON_BYTES)? {
            Some(bytes) => std::str::from_utf8(&bytes)
                .map_err(|_| "not UTF-8 text".to_string())
                .and_then(parse)
                .map_err(|why| MiniKafkaError::corrupt(&path, why))?,
            None => BTreeMap::new(),
        };
        Ok(Self { path, written })
    }

    /// The checkpointed HW of `tp`.
    pub fn get(&self, tp: &TopicPartition) -> Option<i64> {
        self.written.get(tp).copied()
    }

    /// Writes `current` if it differs from what was last written.
    pub fn write_if_changed(&mut self, current: BTreeMap<TopicPartition, i64>) -> Result<()> {
        if current == self.written {
            return Ok(());
        }
        let mut text = format!("0\n{}\n", current.len());
        for (tp, hw) in &current {
            text.push_str(&format!("{} {} {hw}\n", tp.topic, tp.partition));
        }
        fsutil::replace_without_sync(&self.path, text.as_bytes())?;
        self.written = current;
        Ok(())
    }
}

fn parse(text: &str) -> std::result::Result<BTreeMap<TopicPartition, i64>, String> {
    let mut lines = text.lines();
    if lines.next() != Some("0") {
        return Err("line 1: expected version 0".into());
    }
    let count: usize = lines
        .next()
        .and_then(|l| l.parse().ok())
        .ok_or("line 2: expected an entry count")?;
    let mut out = BTreeMap::new();
    for (i, line) in lines.enumerate() {
        let fields: Vec<&str> = line.split(' ').collect();
        let parsed = match fields.as_slice() {
            [topic, partition, hw] => partition
                .parse()
                .ok()
                .zip(hw.parse().ok())
                .map(|(p, h)| (TopicPartition::new(*topic, p), h)),
            _ => None,
        };
        let (tp, hw) =
            parsed.ok_or_else(|| format!("line {}: expected `topic partition offset`", i + 3))?;
        // A high watermark is an offset, never below 0: a negative one is
        // not clamped (that would hide every acknowledged record) but
        // refused, naming the file.
        if hw < 0 {
            return Err(format!(
                "line {}: the high watermark of {tp} is {hw}, below offset 0",
                i + 3
            ));
        }
        if out.insert(tp.clone(), hw).is_some() {
            return Err(format!("line {}: {tp} is listed twice", i + 3));
        }
    }
    if out.len() != count {
        return Err(format!("expected {count} entries, found {}", out.len()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_in_kafka_text_format() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = HighWatermarkCheckpoint::open(dir.path()).unwrap();
        c.write_if_changed(BTreeMap::from([
            (TopicPartition::new("out", 1), 5),
            (TopicPartition::new("in", 0), 2),
        ]))
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join(CHECKPOINT_FILE)).unwrap(),
            "0\n2\nin 0 2\nout 1 5\n"
        );
        let c = HighWatermarkCheckpoint::open(dir.path()).unwrap();
        assert_eq!(c.get(&TopicPartition::new("out", 1)), Some(5));
        std::fs::write(dir.path().join(CHECKPOINT_FILE), "0\n2\nin 0 2\n").unwrap();
        let err = HighWatermarkCheckpoint::open(dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains(CHECKPOINT_FILE), "{err}");
    }

    /// Issue 17, item 6: a negative HW, or a partition listed twice, is an
    /// error naming the file and line, not a value clamped later.
    #[test]
    fn a_negative_or_repeated_high_watermark_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(CHECKPOINT_FILE);
        for (text, why) in [
            (
                "0\n1\nout 0 -3\n",
                "line 3: the high watermark of out-0 is -3",
            ),
            ("0\n2\nout 0 1\nout 0 2\n", "line 4: out-0 is listed twice"),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = HighWatermarkCheckpoint::open(dir.path())
                .unwrap_err()
                .to_string();
            assert!(err.contains(CHECKPOINT_FILE) && err.contains(why), "{err}");
        }
        std::fs::write(&path, "0\n1\nout 0 0\n").unwrap();
        let c = HighWatermarkCheckpoint::open(dir.path()).unwrap();
        assert_eq!(c.get(&TopicPartition::new("out", 0)), Some(0));
    }
}
