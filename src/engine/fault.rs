//! Faults as data (E13): the cut points where a commit or abort stops and
//! the process "dies" (`Transaction::commit_until`, `abort_until`), and the
//! tear of the tail of the journal or of a replica's log. A tear is a crash: the in-memory state is dropped, the file
//! is damaged as asked, and the cluster reopens and recovers.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;

use crate::engine::config::BrokerId;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::recovery::RecoveryReport;
use crate::engine::error::{MiniKafkaError, Result};

/// The file whose tail is torn.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TearTarget {
    /// `transactions.journal`.
    Journal,
    /// The active segment of one replica's log.
    Log {
        tp: TopicPartition,
        broker: BrokerId,
    },
}

/// How the tail is torn.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Tear {
    /// Cut this many bytes off the end of the file (at most the whole file):
    /// a write that did not finish.
    CutBytes(u64),
    /// Append these bytes: a write that finished only partly, or garbage.
    AppendGarbage(Vec<u8>),
}

impl Tear {
    /// A default garbage tail: the start of a frame header that goes nowhere.
    pub fn default_garbage() -> Self {
        Tear::AppendGarbage(b"MKB1\x00\x00\x00\x09garbage".to_vec())
    }
}

/// What a tear did to the file before recovery ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TearReport {
    pub path: PathBuf,
    pub size_before: u64,
    pub size_after: u64,
}

/// Damages `path`'s tail as asked.
pub fn tear_file(path: &std::path::Path, tear: &Tear) -> Result<TearReport> {
    let size_before = std::fs::metadata(path)
        .map_err(|e| MiniKafkaError::io(path, e))?
        .len();
    let io = |e| MiniKafkaError::io(path, e);
    match tear {
        Tear::CutBytes(n) => {
            let file = OpenOptions::new().write(true).open(path).map_err(io)?;
            file.set_len(size_before.saturating_sub(*n)).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        Tear::AppendGarbage(bytes) => {
            let mut file = OpenOptions::new().append(true).open(path).map_err(io)?;
            file.write_all(bytes).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
    }
    let size_after = std::fs::metadata(path).map_err(io)?.len();
    Ok(TearReport {
        path: path.to_path_buf(),
        size_before,
        size_after,
    })
}

/// Where a commit or abort stops and the process "dies" (E13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CutPoint {
    /// After PREPARE_* is journaled, before any marker.
    Prepare,
    /// After the first `k` markers (of the touched partitions, in order). A
    /// `k` of 0 is [`CutPoint::Prepare`]; `k` at or past the count is
    /// [`CutPoint::Markers`].
    Marker(usize),
    /// After every marker, before offsets are published (or discarded).
    Markers,
    /// After offsets are published (or discarded), before COMPLETE_*.
    Offsets,
}

impl CutPoint {
    /// The recording spelling: `prepare`, `marker:N`, `markers`, `offsets`.
    pub fn name(self) -> String {
        match self {
            CutPoint::Prepare => "prepare".into(),
            CutPoint::Marker(k) => format!("marker:{k}"),
            CutPoint::Markers => "markers".into(),
            CutPoint::Offsets => "offsets".into(),
        }
    }
}

impl std::str::FromStr for CutPoint {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let unknown = || {
            format!(
                "unknown cut point {s:?}: expected \"prepare\", \"marker:N\", \"markers\" or \"offsets\""
            )
        };
        match s {
            "prepare" => Ok(CutPoint::Prepare),
            "markers" => Ok(CutPoint::Markers),
            "offsets" => Ok(CutPoint::Offsets),
            _ => s
                .strip_prefix("marker:")
                .and_then(|k| k.parse().ok())
                .map(CutPoint::Marker)
                .ok_or_else(unknown),
        }
    }
}

/// How a commit or abort ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndOutcome {
    /// Every step ran: the transaction is COMPLETE_*.
    Completed,
    /// The process "died" at the cut point and recovered; here is what
    /// recovery did.
    Crashed(RecoveryReport),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_points_parse_and_print() {
        for s in ["prepare", "marker:2", "markers", "offsets"] {
            assert_eq!(s.parse::<CutPoint>().unwrap().name(), s);
        }
        assert!(
            "marker:x"
                .parse::<CutPoint>()
                .unwrap_err()
                .contains("marker:N")
        );
    }

    #[test]
    fn cuts_at_most_the_whole_file_and_appends_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let r = tear_file(&path, &Tear::CutBytes(3)).unwrap();
        assert_eq!((r.size_before, r.size_after), (10, 7));
        tear_file(&path, &Tear::AppendGarbage(b"xy".to_vec())).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"0123456xy");
        tear_file(&path, &Tear::CutBytes(100)).unwrap();
        assert!(std::fs::read(&path).unwrap().is_empty());
    }
}
