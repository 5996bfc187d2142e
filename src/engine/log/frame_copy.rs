//! A follower's catch-up as a copy of frames (E4): the leader reads the
//! MKB1 frames a fetch may take as they are on disk, one read per segment
//! they span, and the follower appends the same bytes to its own log
//! after checking each frame (its CRC and structure, as a decode would,
//! and that it starts at the follower's LEO), one write per run of frames
//! that lands in one of its segments.
//!
//! Nothing decodes a record's key or value on either side: the follower's
//! state needs only what a frame's header holds (offsets, epoch, producer
//! id/epoch/sequence, transactional id, control type, CRC), which is what
//! its batch summaries and producer state are made of. The bytes written
//! are the leader's own, so the follower's segments hold exactly the frames
//! a decode and re-encode would have written.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use crate::engine::core::codec;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::log::partition_log::{BatchSummary, PartitionLog};
use crate::engine::log::segment::{Segment, keep_if_small};
use crate::engine::vector_ext::VectorExt;

/// Whole frames read from a leader's segments, as written. A follower's
/// replica set keeps one and reads every fetch into it: a fetch's bytes
/// are neither allocated nor zeroed again each time.
#[derive(Default)]
pub struct FetchedFrames {
    /// The frames read are its first `len` bytes; the rest is room left by
    /// an earlier, larger fetch.
    buffer: Vec<u8>,
    len: usize,
    /// Where each part of the bytes came from, in order: a frame never
    /// spans two parts (it never spans two segments).
    parts: Vec<FramePart>,
}

/// `len` bytes of [`FetchedFrames::bytes`], read from `path` at `position`.
#[derive(Debug)]
struct FramePart {
    path: PathBuf,
    position: u64,
    len: usize,
}

impl FetchedFrames {
    /// True when the fetch found nothing to copy.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes read, all frames end to end.
    pub fn bytes(&self) -> &[u8] {
        &self.buffer[..self.len]
    }

    /// Frames handed whole (`bytes`, frames end to end) rather than read
    /// from a leader: P3's bound for an append that is handed encoded bytes
    /// (`perf::FrameAppend`, docs/performance.md "P3's bound"). `from`
    /// names where they came from in an error.
    #[cfg(feature = "testkit")]
    pub(crate) fn handed(bytes: Vec<u8>, from: &std::path::Path) -> Self {
        let len = bytes.len();
        Self {
            buffer: bytes,
            len,
            parts: vec![FramePart {
                path: from.to_path_buf(),
                position: 0,
                len,
            }],
        }
    }

    /// Forgets the frames read, keeping the buffer unless it grew past
    /// [`REUSED_BUFFER_MAX`](crate::engine::log::segment::REUSED_BUFFER_MAX).
    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.parts.clear();
        keep_if_small(&mut self.buffer);
    }
}

/// The parts read, not the bytes: a replica set's `Debug` shows this.
impl std::fmt::Debug for FetchedFrames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchedFrames")
            .field("len", &self.len)
            .field("parts", &self.parts)
            .finish()
    }
}

/// One checked frame waiting to be written: its place in the fetched
/// bytes, its summary.
struct CheckedFrame {
    start: usize,
    len: usize,
    summary: BatchSummary,
}

impl PartitionLog {
    /// [`Self::read_frames_into`] a new buffer.
    #[cfg(test)]
    pub fn read_frames_bytes(&self, from_offset: i64, max_bytes: u64) -> Result<FetchedFrames> {
        let mut fetched = FetchedFrames::default();
        self.read_frames_into(from_offset, max_bytes, &mut fetched)?;
        Ok(fetched)
    }

    /// The frames of the whole batches from `from_offset` up to about
    /// `max_bytes` (always at least one batch), as written, into `fetched`,
    /// replacing what it held: what a follower fetch copies. The batch
    /// summaries say how many bytes those batches take; each segment they
    /// span is read once.
    pub fn read_frames_into(
        &self,
        from_offset: i64,
        max_bytes: u64,
        fetched: &mut FetchedFrames,
    ) -> Result<()> {
        fetched.clear();
        self.check_offset(from_offset)?;
        let first = self
            .batches
            .partition_point(|b| b.last_offset < from_offset);
        let (mut wanted, mut count) = (0u64, 0u64);
        for b in self.batches.iter_from(first) {
            if count > 0 && wanted + u64::from(b.size_bytes) > max_bytes {
                break;
            }
            wanted += u64::from(b.size_bytes);
            count += 1;
        }
        if count == 0 {
            return Ok(());
        }
        self.frame_parts(from_offset, wanted, |segment, position, len| {
            read_part(segment, position, len, fetched)
        })?;
        self.frames_read.fetch_add(count, Ordering::Relaxed);
        Ok(())
    }

    /// Appends the frames a leader's [`Self::read_frames_into`] read.
    /// Every frame's CRC and structure are checked first, as the leader's
    /// decode of them would: one that fails is [`MiniKafkaError::Corrupt`],
    /// naming where the leader holds it, and nothing is appended. Then the
    /// frames are appended in order, each of which must start at the LEO
    /// (else [`MiniKafkaError::InvalidBatch`], as [`Self::append`] says,
    /// with the frames before it appended: the book's follower appends its
    /// fetched batches one by one, and a compacted gap stops it there).
    /// Segments roll as [`Self::append`] rolls them; the frames that land
    /// in one segment are written at once. Returns how many were appended.
    pub fn append_frames(&mut self, fetched: &FetchedFrames) -> Result<usize> {
        if fetched.is_empty() {
            // Nothing fetched is nothing appended, even to a log offline.
            return Ok(0);
        }
        self.check_online()?;
        let frames = check_frames(fetched)?;
        let mut run: Vec<CheckedFrame> = Vec::new();
        let mut appended = 0;
        let mut leo = self.leo();
        for frame in frames {
            if frame.summary.base_offset != leo {
                self.write_run(fetched.bytes(), &mut run)?;
                return Err(MiniKafkaError::InvalidBatch(format!(
                    "base offset {} is not the log end offset {leo} of {}",
                    frame.summary.base_offset,
                    self.dir.display()
                )));
            }
            leo = frame.summary.last_offset + 1;
            if !self.run_fits(&run, &frame) {
                appended += self.write_run(fetched.bytes(), &mut run)?;
                self.roll_for(&frame)?;
            }
            run.push(frame);
        }
        appended += self.write_run(fetched.bytes(), &mut run)?;
        Ok(appended)
    }

    /// Whether `frame` may join `run` in the active segment: the rules by
    /// which [`Self::append`] rolls, applied to the segment as it will be
    /// once the run is written.
    fn run_fits(&self, run: &[CheckedFrame], frame: &CheckedFrame) -> bool {
        let active = self.segments.last().expect("a log always has a segment");
        let size = active.size() + run.iter().map(|f| f.len as u64).sum::<u64>();
        let full = size + frame.len as u64 > self.config.segment_max_bytes;
        size == 0 || (!full && active.can_hold(frame.summary.last_offset))
    }

    /// Starts a new segment for `frame` unless the active one is empty.
    fn roll_for(&mut self, frame: &CheckedFrame) -> Result<()> {
        let active = self.segments.last().expect("a log always has a segment");
        if active.size() > 0 {
            let segment = Segment::create_for(
                &self.dir,
                frame.summary.base_offset,
                self.config.index_entries_reserved(),
            )?;
            self.segments.push(segment);
        }
        Ok(())
    }

    /// Writes `run`'s frames to the active segment at once and records
    /// their summaries; empties `run`. Returns how many were written.
    fn write_run(&mut self, bytes: &[u8], run: &mut Vec<CheckedFrame>) -> Result<usize> {
        let (Some(first), Some(last)) = (run.first(), run.last()) else {
            return Ok(0);
        };
        let frames = &bytes[first.start..last.start + last.len];
        let starts: Vec<(i64, u64)> = run
            .iter()
            .map(|f| (f.summary.base_offset, f.len as u64))
            .collect();
        let config = self.config;
        let written = self
            .segments
            .last_mut()
            .expect("a log always has a segment")
            .append_run(frames, &starts, config.index_interval_bytes, config.fsync);
        if let Err(MiniKafkaError::KafkaStorage { path, reason }) = &written {
            self.offline = Some((path.clone(), reason.clone()));
        }
        written?;
        let count = run.len();
        for frame in run.drain(..) {
            self.batches.push_back(frame.summary);
        }
        Ok(count)
    }
}

/// Reads `len` bytes of `segment` from `position` onto `fetched`.
fn read_part(
    segment: &Segment,
    position: u64,
    len: u64,
    fetched: &mut FetchedFrames,
) -> Result<()> {
    let start = fetched.len;
    let len = usize::try_from(len).expect("a fetch's bytes fit in memory");
    let end = start + len;
    if fetched.buffer.len() < end {
        fetched.buffer.resize(end, 0);
    }
    segment.read_exact_at(&mut fetched.buffer[start..end], position)?;
    fetched.len = end;
    fetched.parts.push(FramePart {
        path: segment.path().to_path_buf(),
        position,
        len,
    });
    Ok(())
}

/// Every frame of `fetched`, its CRC and structure checked.
fn check_frames(fetched: &FetchedFrames) -> Result<Vec<CheckedFrame>> {
    let mut frames = Vec::new();
    let mut part_start = 0;
    for part in &fetched.parts {
        let bytes = &fetched.bytes()[part_start..part_start + part.len];
        let mut at = 0;
        while at < bytes.len() {
            let (header, len) = codec::validate(&bytes[at..]).map_err(|e| {
                MiniKafkaError::corrupt(
                    &part.path,
                    format!(
                        "frame at byte {} changed on disk: {e}",
                        part.position + at as u64
                    ),
                )
            })?;
            frames.push(CheckedFrame {
                start: part_start + at,
                len,
                summary: BatchSummary::from_header(header, len as u32),
            });
            at += len;
        }
        part_start += part.len;
    }
    Ok(frames)
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::*;
    use crate::engine::core::batch::{ControlType, RecordBatch};
    use crate::engine::core::record::Record;
    use crate::engine::log::partition_log::LogConfig;

    fn config() -> LogConfig {
        // Small segments and a small index interval: a fetch spans several
        // segments and indexes several frames per run.
        LogConfig {
            segment_max_bytes: 700,
            index_interval_bytes: 150,
            fsync: false,
        }
    }

    fn open(dir: &Path) -> PartitionLog {
        PartitionLog::open(dir, config()).unwrap().0
    }

    /// Batches of every shape a log holds: plain, keyed with headers and
    /// null values, idempotent, transactional, and both control markers.
    fn leader_with_batches(dir: &Path) -> PartitionLog {
        let mut log = open(dir);
        for i in 0..12i32 {
            let mut batch = match i % 4 {
                0 => RecordBatch::of_values([format!("v{i}"), "x".repeat(60 + i as usize)]),
                1 => RecordBatch::new(vec![
                    Record::keyed(format!("k{i}"), "value")
                        .with_header("h", Some(b"hv".to_vec().into()))
                        .with_header("none", None),
                    Record::new(Some(b"k".to_vec().into()), None, 7),
                ])
                .with_producer(1000, 2, i * 10),
                2 => RecordBatch::of_values(["t1", "t2", "t3"])
                    .with_producer(2000, 0, i)
                    .with_transactional_id("tx"),
                _ => RecordBatch::control_marker(
                    if i % 8 == 3 {
                        ControlType::Commit
                    } else {
                        ControlType::Abort
                    },
                    "tx",
                ),
            };
            batch.base_offset = log.leo();
            batch.leader_epoch = 3;
            log.append(&batch).unwrap();
        }
        log
    }

    /// Every file of a log directory, by name, with its bytes.
    fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        out.sort();
        out
    }

    /// Copies `leader` into `follower` fetch by fetch, `max_bytes` at a
    /// time; returns how many fetches it took.
    fn copy_all(leader: &PartitionLog, follower: &mut PartitionLog, max_bytes: u64) -> usize {
        let mut fetches = 0;
        while follower.leo() < leader.leo() {
            let fetched = leader.read_frames_bytes(follower.leo(), max_bytes).unwrap();
            assert!(follower.append_frames(&fetched).unwrap() > 0);
            fetches += 1;
        }
        fetches
    }

    #[test]
    fn copied_frames_leave_the_files_and_summaries_a_decode_and_re_encode_leaves() {
        let root = tempfile::tempdir().unwrap();
        let leader = leader_with_batches(&root.path().join("leader"));
        for max_bytes in [1, 300, 1 << 20] {
            let copied_dir = root.path().join(format!("copied-{max_bytes}"));
            let mut copied = open(&copied_dir);
            let fetches = copy_all(&leader, &mut copied, max_bytes);
            // The follower's earlier path: decode each batch, append it.
            let decoded_dir = root.path().join(format!("decoded-{max_bytes}"));
            let mut decoded = open(&decoded_dir);
            for batch in leader.all_batches().unwrap() {
                decoded.append(&batch).unwrap();
            }
            assert!(copied.segments().len() > 2, "{max_bytes}: several segments");
            assert_eq!(files(&copied_dir), files(&decoded_dir), "{max_bytes}");
            assert_eq!(
                copied.batch_summaries(),
                decoded.batch_summaries(),
                "{max_bytes}"
            );
            assert_eq!(
                copied.batch_summaries(),
                leader.batch_summaries(),
                "{max_bytes}"
            );
            if max_bytes == 1 {
                assert_eq!(fetches, 12, "one batch per fetch at least");
            }
            // What was copied reads back, and reopens clean.
            assert_eq!(copied.all_batches().unwrap(), leader.all_batches().unwrap());
            drop(copied);
            let (reopened, recovery) = PartitionLog::open(&copied_dir, config()).unwrap();
            assert_eq!(recovery, Default::default());
            assert_eq!(reopened.leo(), leader.leo());
        }
    }

    #[test]
    fn a_fetch_reads_each_segment_once_and_counts_its_frames() {
        let root = tempfile::tempdir().unwrap();
        let leader = leader_with_batches(&root.path().join("leader"));
        let before = leader.frames_read();
        let fetched = leader.read_frames_bytes(0, 1 << 20).unwrap();
        assert_eq!(leader.frames_read() - before, 12);
        assert_eq!(fetched.parts.len(), leader.segments().len());
        assert_eq!(fetched.bytes().len() as u64, leader.size_bytes());
        let from = leader.batch_summaries()[5].base_offset;
        let fetched = leader.read_frames_bytes(from, 1).unwrap();
        let size = leader.batch_summaries()[5].size_bytes as usize;
        assert_eq!(fetched.bytes().len(), size, "at least one whole batch");
        assert!(
            leader
                .read_frames_bytes(leader.leo(), 100)
                .unwrap()
                .is_empty()
        );
        assert!(matches!(
            leader.read_frames_bytes(leader.leo() + 1, 100),
            Err(MiniKafkaError::OffsetOutOfRange { .. })
        ));
    }

    #[test]
    fn a_corrupted_leader_frame_is_refused_and_nothing_is_appended() {
        let root = tempfile::tempdir().unwrap();
        let leader = leader_with_batches(&root.path().join("leader"));
        let segment = leader.segments()[0].path().to_path_buf();
        let pristine = fs::read(&segment).unwrap();
        let second = leader.batch_summaries()[0].size_bytes as usize;
        for (what, byte) in [
            ("a record's byte", pristine.len() - 1),
            ("the first frame's CRC", 9),
            ("the second frame's magic", second),
        ] {
            let mut bytes = pristine.clone();
            bytes[byte] ^= 0x20;
            fs::write(&segment, &bytes).unwrap();
            let dir = root.path().join(format!("follower-{byte}"));
            let mut follower = open(&dir);
            let fetched = leader.read_frames_bytes(0, 1 << 20).unwrap();
            let err = follower.append_frames(&fetched).unwrap_err();
            assert_eq!(err.code(), "Corrupt", "{what}: {err}");
            assert!(
                err.to_string().contains(&segment.display().to_string()),
                "{what}: {err}"
            );
            assert_eq!(follower.leo(), 0, "{what}");
            assert!(follower.batch_summaries().is_empty(), "{what}");
            assert_eq!(follower.size_bytes(), 0, "{what}: nothing written");
            assert!(files(&dir).iter().all(|(_, b)| b.is_empty()), "{what}");
        }
        fs::write(&segment, &pristine).unwrap();
    }

    #[test]
    fn a_frame_that_does_not_start_at_the_followers_leo_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let leader = leader_with_batches(&root.path().join("leader"));
        let mut follower = open(&root.path().join("follower"));
        let from = leader.batch_summaries()[1].base_offset;
        let fetched = leader.read_frames_bytes(from, 1 << 20).unwrap();
        let err = follower.append_frames(&fetched).unwrap_err();
        assert!(matches!(err, MiniKafkaError::InvalidBatch(_)), "{err}");
        assert!(
            err.to_string().contains("is not the log end offset 0"),
            "{err}"
        );
        assert_eq!((follower.leo(), follower.size_bytes()), (0, 0));
    }

    /// A compacted gap on the leader (a frame that does not start where the
    /// one before ended): the frames before it are appended, as the
    /// book's follower appends its fetched batches one by one.
    #[test]
    fn the_frames_before_a_gap_are_appended_and_the_gap_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let leader = leader_with_batches(&root.path().join("leader"));
        let mut follower = open(&root.path().join("follower"));
        let first = leader.read_frames_bytes(0, 1).unwrap();
        let third = leader
            .read_frames_bytes(leader.batch_summaries()[2].base_offset, 1)
            .unwrap();
        let mut gapped = first;
        gapped.buffer.truncate(gapped.len);
        gapped.buffer.extend_from_slice(third.bytes());
        gapped.len = gapped.buffer.len();
        gapped.parts.extend(third.parts);
        let err = follower.append_frames(&gapped).unwrap_err();
        assert!(matches!(err, MiniKafkaError::InvalidBatch(_)), "{err}");
        let first = &leader.batch_summaries()[0];
        assert_eq!(follower.leo(), first.last_offset + 1);
        assert_eq!(follower.size_bytes(), u64::from(first.size_bytes));
        assert_eq!(follower.batch_summaries().len(), 1);
    }

    /// A run's write that fails is cut back whole, with its index entries;
    /// the runs written before it stay, and the next fetch copies the rest.
    #[test]
    fn a_failed_run_write_is_cut_back_and_the_next_fetch_copies_it() {
        use crate::engine::io_fault::{Effect, Errno, FileOp, inject};
        let root = tempfile::tempdir().unwrap();
        let leader = leader_with_batches(&root.path().join("leader"));
        let dir = root.path().join("follower");
        let mut follower = open(&dir);
        let second_segment = dir.join(crate::engine::layout::log_file_name(
            leader.segments()[1].base_offset(),
        ));
        let fetched = leader.read_frames_bytes(0, 1 << 20).unwrap();
        {
            let _fault = inject(
                &second_segment,
                FileOp::Write,
                1,
                Effect::Short {
                    written: 10,
                    errno: Errno::NoSpace,
                },
            );
            assert!(follower.append_frames(&fetched).is_err());
        }
        let first = leader.segments()[1].base_offset();
        assert_eq!(follower.leo(), first, "the first segment's run stays");
        assert_eq!(fs::metadata(&second_segment).unwrap().len(), 0, "cut back");
        copy_all(&leader, &mut follower, 1 << 20);
        let decoded_dir = root.path().join("decoded");
        let mut decoded = open(&decoded_dir);
        for batch in leader.all_batches().unwrap() {
            decoded.append(&batch).unwrap();
        }
        assert_eq!(files(&dir), files(&decoded_dir));
    }
}
