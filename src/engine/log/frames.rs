//! A run of a log's batches as their MKB1 frames, read in one pass per
//! segment and checked (magic, length, CRC, the offsets the log lists),
//! then viewed in place ([`BatchView`]): what a reader that copies the
//! records on reads, instead of decoding each record into owned values
//! ([`PartitionLog::read_batches`]). The same batches, the same checks.

use std::ops::Range;
use std::sync::atomic::Ordering;

use crate::engine::core::batch_view::{self, BatchView};
use crate::engine::core::codec;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::log::partition_log::PartitionLog;
use crate::engine::log::segment::Segment;
use crate::engine::vector_ext::VectorExt;

/// Frames read from a log, each checked.
#[derive(Debug, Default)]
pub struct LoggedFrames {
    bytes: Vec<u8>,
    /// Where each frame's payload lies in `bytes`.
    payloads: Vec<Range<usize>>,
    /// The log's directory, to name in an error.
    what: String,
}

impl LoggedFrames {
    /// How many frames.
    pub fn len(&self) -> usize {
        self.payloads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.payloads.is_empty()
    }

    /// Each batch, viewed in place, in log order.
    pub fn views(&self) -> impl Iterator<Item = Result<BatchView<'_>>> {
        self.payloads.iter().map(|r| {
            batch_view::view_payload(&self.bytes[r.clone()]).map_err(|e| {
                MiniKafkaError::corrupt(&self.what, format!("a frame changed on disk: {e}"))
            })
        })
    }
}

impl PartitionLog {
    /// Hands `part` where the `wanted` bytes of frames from the batch
    /// holding `from_offset` on lie: each segment they span once, in
    /// order, as (segment, position, length), so a reader makes one read
    /// per segment ([`Self::read_frames`], and the follower's copy,
    /// [`Self::read_frames_into`]).
    pub(crate) fn frame_parts(
        &self,
        from_offset: i64,
        mut wanted: u64,
        mut part: impl FnMut(&Segment, u64, u64) -> Result<()>,
    ) -> Result<()> {
        let first_segment = self
            .segments
            .partition_point(|s| s.base_offset() <= from_offset)
            .saturating_sub(1);
        let mut started = false;
        for segment in &self.segments[first_segment..] {
            if wanted == 0 {
                break;
            }
            let position = if started {
                0
            } else {
                match segment.position_of(from_offset)? {
                    Some(position) => position,
                    None => continue,
                }
            };
            started = true;
            let len = wanted.min(segment.size().saturating_sub(position));
            part(segment, position, len)?;
            wanted -= len;
        }
        Ok(())
    }

    /// The frames of the batches [`Self::read_batches`] returns: from the
    /// one holding `from_offset`, at most `max_batches`.
    pub fn read_frames(&self, from_offset: i64, max_batches: usize) -> Result<LoggedFrames> {
        let what = self.dir.display().to_string();
        let mut out = LoggedFrames {
            what: what.clone(),
            ..LoggedFrames::default()
        };
        self.check_offset(from_offset)?;
        let first = self
            .batches
            .partition_point(|b| b.last_offset < from_offset);
        let listed: Vec<(i64, u32)> = self
            .batches
            .iter_from(first)
            .take(max_batches)
            .map(|b| (b.base_offset, b.size_bytes))
            .collect();
        let Some(&(first_base, _)) = listed.first() else {
            return Ok(out);
        };
        let wanted: u64 = listed.iter().map(|&(_, size)| u64::from(size)).sum();
        out.bytes.reserve(wanted as usize);
        self.frame_parts(first_base, wanted, |segment, position, len| {
            segment.read_bytes_at(position, len as usize, &mut out.bytes)
        })?;
        // Each frame whole, its CRC right, and the batch the log lists
        // there: else the file is not what the log holds.
        let mut at = 0;
        for &(base, size) in &listed {
            let frame = &out.bytes[at.min(out.bytes.len())..];
            let (payload, len) = codec::split_frame(frame).map_err(|e| {
                MiniKafkaError::corrupt(&what, format!("frame of offset {base}: {e}"))
            })?;
            let stored_base = payload
                .get(1..9)
                .map(|b| i64::from_be_bytes(b.try_into().expect("eight bytes")));
            if len != size as usize || stored_base != Some(base) {
                return Err(MiniKafkaError::corrupt(
                    &what,
                    format!("the frame of offset {base} is not the batch the log lists"),
                ));
            }
            out.payloads.push(at + codec::FRAME_HEADER_LEN..at + len);
            at += len;
        }
        self.frames_read
            .fetch_add(listed.len() as u64, Ordering::Relaxed);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::clock::ManualClock;
    use crate::engine::core::batch::RecordBatch;
    use crate::engine::core::record::Record;
    use crate::engine::log::LogCompactor;
    use crate::engine::log::partition_log::LogConfig;

    fn append(log: &mut PartitionLog, records: &[(&str, &str)]) {
        let mut b = RecordBatch::new(
            records
                .iter()
                .map(|&(k, v)| Record::keyed(k.to_owned(), v.to_owned()))
                .collect(),
        );
        b.base_offset = log.leo();
        log.append(&b).unwrap();
    }

    /// The frames hold, from every offset and for every count, the batches
    /// `read_batches` decodes: across segment rolls, after a compaction
    /// rewrote the closed segments, after a truncation and new appends
    /// at the same offsets.
    #[test]
    fn frames_hold_the_batches_read_batches_decodes() {
        let dir = tempfile::tempdir().unwrap();
        let config = LogConfig {
            segment_max_bytes: 200,
            index_interval_bytes: 64,
            fsync: false,
        };
        let (mut log, _) = PartitionLog::open(dir.path(), config).unwrap();
        for i in 0..12 {
            let key = format!("k{}", i % 3);
            append(&mut log, &[(&key, &format!("v{i}")), ("x", "y")]);
        }
        let check = |log: &PartitionLog, what: &str| {
            for from in log.log_start_offset()..log.leo() {
                for count in [1, 2, 5, usize::MAX] {
                    let decoded = log.read_batches(from, count).unwrap();
                    let frames = log.read_frames(from, count).unwrap();
                    let views: Vec<_> = frames.views().collect::<Result<_>>().unwrap();
                    assert_eq!(views.len(), decoded.len(), "{what}: from {from}, {count}");
                    for (v, b) in views.iter().zip(&decoded) {
                        let mut head = b.clone();
                        head.records.clear();
                        assert_eq!(v.without_records(), head, "{what}: from {from}");
                        let values: Vec<_> = b.records.iter().map(|r| r.value.as_deref()).collect();
                        let viewed: Vec<_> = v.records.iter().map(|r| r.value).collect();
                        assert_eq!(viewed, values, "{what}: from {from}");
                    }
                }
            }
        };
        assert!(log.segments().len() > 3);
        check(&log, "rolled");
        LogCompactor::new(ManualClock::at(10), 1000)
            .compact(&mut log)
            .unwrap();
        check(&log, "compacted");
        let summaries = log.batch_summaries();
        let cut = summaries[summaries.len() / 2].base_offset;
        log.truncate_to(cut).unwrap();
        append(&mut log, &[("new", "after the cut")]);
        check(&log, "truncated and appended");
        let last = log.read_frames(cut, 1).unwrap();
        let view = last.views().next().unwrap().unwrap();
        assert_eq!(view.records[0].value, Some(&b"after the cut"[..]));
        assert!(log.read_frames(log.leo(), 5).unwrap().is_empty());
        assert!(log.read_frames(log.leo() + 1, 5).is_err());
    }
}
