//! The workloads of the performance targets P1-P6
//! (`docs/performance.md`), shared by `benches/` and `examples/perf_report.rs`
//! so that the report and the benches measure the same thing. Each target is
//! a pair: the engine's path and a baseline that does only the physical work
//! (the same bytes written, fsynced, read or CRC-checked), measured side by
//! side in one run because the machines are shared and noisy.
//!
//! Nothing here is used by the dashboard itself.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use ratatui::buffer::Buffer;
use tempfile::TempDir;

use crate::engine::config::Rules;
use crate::engine::core::codec;
use crate::engine::log::frame_copy::FetchedFrames;
use crate::engine::log::partition_log::{LogConfig, PartitionLog};
use crate::engine::transaction::journal::TransactionJournal;
use crate::engine::transaction::model::TransactionData;
use crate::engine::{
    AckMode, BrokerCluster, ManualClock, MiniKafkaConfig, Record, RecordBatch, TopicPartition,
};
use crate::session::recording::Header;
use crate::session::{Driver, Recording};
use crate::ui::app::App;
use crate::ui::i18n::Lang;
use crate::ui::layout;
use crate::ui::theme::Theme;

/// This thread's CPU time (user and system) so far: what a side of a
/// paired measurement cost, without the time other processes ran instead.
pub fn thread_cpu() -> std::time::Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// A batch of `records` records whose values are `value_len` bytes, keyed
/// `k<i>`: the P3/P4/P6 batch shape (100 records of 100 B).
///
/// Its keys and values slice one buffer, the way a client's batch arrives
/// (a Kafka produce request's records are slices of its buffer): the
/// batch is one allocation for the bytes, and dropping it one `free`.
pub fn record_batch(records: usize, value_len: usize, seed: usize) -> RecordBatch {
    let mut buffer = Vec::with_capacity(records * (value_len + 8));
    let mut spans = Vec::with_capacity(records);
    for i in 0..records {
        let n = seed * records + i;
        let key_start = buffer.len();
        write!(buffer, "k{}", n % 1024).expect("writing to a Vec");
        let value_start = buffer.len();
        write!(buffer, "value-{n}-").expect("writing to a Vec");
        buffer.resize(value_start + value_len, b'.');
        spans.push((key_start..value_start, value_start..buffer.len()));
    }
    let shared = bytes::Bytes::from(buffer);
    RecordBatch::new(
        spans
            .into_iter()
            .map(|(key, value)| Record::keyed(shared.slice(key), shared.slice(value)))
            .collect(),
    )
}

/// A P3 round's `count` batches of 100 x 100 B, built fresh: each owns its
/// buffer, and dropping it after its append frees it, as a client's batch
/// is freed (a clone of a round would share the buffers and free nothing).
pub fn p3_batches(count: usize) -> Vec<RecordBatch> {
    (0..count).map(|i| record_batch(100, 100, i)).collect()
}

/// A cluster of `replication_factor` brokers on a fresh temporary directory
/// with the book's configuration: fsync off (the book flushes the log but
/// does not fsync it), 1 MiB segments.
pub fn cluster(partitions: u32, replication_factor: u32) -> (TempDir, BrokerCluster) {
    cluster_with_segments(partitions, replication_factor, 1 << 20)
}

/// [`cluster`] with segments of `segment_max_bytes` (Kafka's default
/// `log.segment.bytes` is 1 GiB; the book's is 1 MiB).
pub fn cluster_with_segments(
    partitions: u32,
    replication_factor: u32,
    segment_max_bytes: u64,
) -> (TempDir, BrokerCluster) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let brokers = 1..=replication_factor.max(1);
    let mut config = MiniKafkaConfig::new(dir.path()).with_brokers(brokers);
    config.segment_max_bytes = segment_max_bytes;
    let cluster = BrokerCluster::open(config, ManualClock::new()).expect("cluster opens");
    cluster
        .create_topic("t", partitions, replication_factor)
        .expect("topic created");
    (dir, cluster)
}

/// Appends `batches` batches of `records` x `value_len` B to every partition
/// of topic `t` with acks=1.
pub fn fill(cluster: &BrokerCluster, batches: usize, records: usize, value_len: usize) {
    for tp in cluster.topic_partitions() {
        for i in 0..batches {
            append_acks1(cluster, &tp, record_batch(records, value_len, i));
        }
    }
}

/// One acks=1 append: the P3 measured path (encode, write, index, producer
/// and replica-set bookkeeping, the future's completion).
pub fn append_acks1(cluster: &BrokerCluster, tp: &TopicPartition, batch: RecordBatch) -> i64 {
    let mut future = cluster.append_batch(tp, batch, AckMode::Leader);
    match future.try_take() {
        Some(Ok(result)) => result.base_offset().expect("acks=1 reports offsets"),
        other => panic!("acks=1 append did not complete at once: {other:?}"),
    }
}

/// The P3 baseline: the same encoded frames written through a `BufWriter`.
pub struct RawLogWriter {
    _dir: TempDir,
    out: BufWriter<File>,
}

impl RawLogWriter {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = File::create(dir.path().join("raw.log")).expect("raw file");
        Self {
            _dir: dir,
            out: BufWriter::new(file),
        }
    }

    pub fn write(&mut self, frame: &[u8]) {
        self.out.write_all(frame).expect("raw write");
    }

    pub fn flush(&mut self) {
        self.out.flush().expect("raw flush");
    }

    /// One P3 baseline round: writes every frame of `frames`, then flushes.
    pub fn round(&mut self, frames: &[Vec<u8>]) {
        for frame in frames {
            self.write(frame);
        }
        self.flush();
    }
}

impl Default for RawLogWriter {
    fn default() -> Self {
        Self::new()
    }
}

/// P3's ceiling (docs/performance.md, "P3's ceiling"): the baseline's
/// buffered write plus the least an append handed records (not an encoded
/// frame) must add to it. `copied` is the one copy of the batch's bytes
/// into a frame and its CRC (issue 29 allows one copy and one CRC), done
/// here as a `memcpy` of the already encoded frame and `crc32fast`; `encoded`
/// is the log's own encoding ([`codec::encode_into`]) into a reused buffer.
/// No append can cost less than `copied`, so the baseline's time over it
/// bounds the P3 ratio from above.
pub struct P3Ceiling {
    raw: RawLogWriter,
    frame: Vec<u8>,
}

impl P3Ceiling {
    pub fn new() -> Self {
        Self {
            raw: RawLogWriter::new(),
            frame: Vec::with_capacity(1 << 16),
        }
    }

    /// Copies each of `frames` into the reused buffer, CRCs it and writes
    /// it; returns the CRCs' sum so that nothing is optimised away.
    pub fn copied(&mut self, frames: &[Vec<u8>]) -> u64 {
        let mut sum = 0u64;
        for frame in frames {
            self.frame.clear();
            self.frame.extend_from_slice(frame);
            sum += u64::from(crc32fast::hash(&self.frame));
            self.raw.write(&self.frame);
        }
        self.raw.flush();
        sum
    }

    /// Encodes each of `batches` into the reused buffer as the leader's
    /// append does (the record rules checked and the unset timestamps
    /// stamped in the same walk, the CRC computed once) and writes it.
    pub fn encoded(&mut self, batches: &[RecordBatch]) -> usize {
        let mut len = 0;
        for batch in batches {
            self.frame.clear();
            codec::encode_checked_into(batch, &mut self.frame, codec::Stamp::Unset(0))
                .expect("P3's batches are valid");
            len += self.frame.len();
            self.raw.write(&self.frame);
        }
        self.raw.flush();
        len
    }
}

impl Default for P3Ceiling {
    fn default() -> Self {
        Self::new()
    }
}

/// P3's bound for an append handed encoded bytes (docs/performance.md,
/// "P3's bound"): the log's append of frames already encoded, one batch's
/// frame at a time, through the follower's path
/// ([`PartitionLog::append_frames`]): each frame's structure walked and its
/// CRC checked, written with its index entry, the segment rolled as the
/// leader's append rolls it, its summary kept. A leader handed a
/// producer's encoded batch would do the same work, with the CRC computed
/// instead of checked after it sets the offsets: no encoding, no records
/// to free. What this costs against the baseline's buffered writes is what
/// the log itself adds to the write, whatever the batch's representation.
pub struct FrameAppend {
    dir: TempDir,
    log: PartitionLog,
}

impl FrameAppend {
    /// A fresh log with the book's settings and `segment_max_bytes`.
    pub fn new(segment_max_bytes: u64) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config = LogConfig {
            segment_max_bytes,
            index_interval_bytes: 4096,
            fsync: false,
        };
        let (log, _) = PartitionLog::open(dir.path(), config).expect("log opens");
        Self { dir, log }
    }

    /// The next `count` batches of 100 x 100 B, each encoded at the offset
    /// the log will give it, as a producer's batch would arrive once its
    /// leader set its offsets: built outside the timing, as P3's batches.
    pub fn frames(&self, count: usize) -> Vec<Vec<u8>> {
        let mut offset = self.log.leo();
        (0..count)
            .map(|i| {
                let mut batch = record_batch(100, 100, i);
                batch.base_offset = offset;
                offset = batch.next_offset();
                codec::encode(&batch)
            })
            .collect()
    }

    /// Appends each of `frames`, handed over one at a time; returns the
    /// number appended.
    pub fn round(&mut self, frames: Vec<Vec<u8>>) -> usize {
        frames
            .into_iter()
            .map(|frame| {
                let handed = FetchedFrames::handed(frame, self.dir.path());
                self.log.append_frames(&handed).expect("frame appended")
            })
            .sum()
    }
}

/// P2: a transaction journal on a fresh directory, and the frame it appends.
pub struct JournalWorkload {
    pub dir: TempDir,
    pub journal: TransactionJournal,
    pub data: TransactionData,
}

impl JournalWorkload {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (journal, _, _) = TransactionJournal::open(dir.path()).expect("journal opens");
        let mut data = TransactionData::begin("txn-perf");
        data.record_write(&TopicPartition::new("out", 0), 42);
        data.record_write(&TopicPartition::new("out", 1), 17);
        Self { dir, journal, data }
    }

    /// The exact bytes one append writes (the baseline writes these).
    pub fn line(&self) -> Vec<u8> {
        let json = self.data.to_journal_json();
        format!("{:08x} {json}\n", crc32fast::hash(json.as_bytes())).into_bytes()
    }

    pub fn append(&mut self) {
        self.journal.append(&self.data).expect("journal append");
    }
}

impl Default for JournalWorkload {
    fn default() -> Self {
        Self::new()
    }
}

/// The P2 baseline: a bare write + fsync loop on a file in the same
/// directory (same file system) as the journal.
pub struct FsyncLoop {
    file: File,
}

impl FsyncLoop {
    pub fn new(dir: &Path) -> Self {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("bare-fsync.bin"))
            .expect("baseline file");
        Self { file }
    }

    pub fn write(&mut self, bytes: &[u8]) {
        self.file.write_all(bytes).expect("baseline write");
        self.file.sync_data().expect("baseline fsync");
    }
}

/// The journal frames one transaction of [`TransactionWorkload`] writes,
/// each fsynced (E9): ONGOING at `begin`, ONGOING after the `send`,
/// PREPARE_COMMIT, COMPLETE_COMMIT. Nothing else in it needs a sync (the
/// book's log is flushed, not fsynced; nothing was staged, so
/// `offsets.json` stays as it is).
pub const SYNCS_PER_TRANSACTION: u32 = 4;

/// P7: transactions as chapter 8 runs them, one at a time (begin, send one
/// record, commit) on one partition with one replica, the book's
/// configuration (journal frames fsynced).
pub struct TransactionWorkload {
    pub dir: TempDir,
    pub cluster: BrokerCluster,
    runtime: tokio::runtime::Runtime,
}

impl TransactionWorkload {
    pub fn new() -> Self {
        Self::with_rules(Rules::Minikafka)
    }

    /// [`Self::new`] under `rules` (P7K: the kafka rules, where each begin
    /// also takes the transactional id's next producer epoch).
    pub fn with_rules(rules: Rules) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config = MiniKafkaConfig::new(dir.path())
            .with_brokers([1])
            .with_rules(rules);
        let cluster = BrokerCluster::open(config, ManualClock::new()).expect("cluster opens");
        cluster.create_topic("t", 1, 1).expect("topic created");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread runtime");
        Self {
            dir,
            cluster,
            runtime,
        }
    }

    /// Runs `n` transactions, each begin, send one record, commit.
    pub fn run(&self, n: usize) {
        let transactions = self.cluster.transactions();
        self.runtime.block_on(async {
            for _ in 0..n {
                let tx = transactions.begin("txn-perf").await.expect("begin");
                tx.send("t", b"processed".to_vec()).await.expect("send");
                tx.commit().await.expect("commit");
            }
        });
    }

    /// A journal frame as long as this workload's PREPARE_COMMIT, for the
    /// baseline.
    pub fn frame(&self) -> Vec<u8> {
        let mut data = TransactionData::begin("txn-perf");
        data.record_write(&TopicPartition::new("t", 0), 0);
        let json = data.to_journal_json();
        format!("{:08x} {json}\n", crc32fast::hash(json.as_bytes())).into_bytes()
    }
}

impl Default for TransactionWorkload {
    fn default() -> Self {
        Self::new()
    }
}

/// P7G: `producers` transactional producers at once, each on its own
/// thread with its own transactional id, each running begin, send one
/// record, commit, under the kafka rules; with `group_commit` the journal's
/// frames are group-committed (`RuleSwitches::group_commit_journal`),
/// without it each frame is fsynced under the state lock (main's path
/// before the switch, the unbatched side of the comparison).
pub struct ConcurrentTransactionWorkload {
    pub dir: TempDir,
    pub cluster: BrokerCluster,
    pub producers: usize,
}

impl ConcurrentTransactionWorkload {
    pub fn new(producers: usize, group_commit: bool) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut config = MiniKafkaConfig::new(dir.path())
            .with_brokers([1])
            .with_rules(Rules::Kafka);
        config.rules.group_commit_journal = group_commit;
        let cluster = BrokerCluster::open(config, ManualClock::new()).expect("cluster opens");
        cluster.create_topic("t", 1, 1).expect("topic created");
        let workload = Self {
            dir,
            cluster,
            producers,
        };
        workload.run(1); // each id's first begin replaces the identities file
        workload
    }

    /// Runs `per_producer` transactions on each producer's thread at once.
    pub fn run(&self, per_producer: usize) {
        std::thread::scope(|scope| {
            for p in 0..self.producers {
                let transactions = self.cluster.transactions();
                scope.spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .build()
                        .expect("a current-thread runtime");
                    let id = format!("txn-perf-{p}");
                    runtime.block_on(async {
                        for _ in 0..per_producer {
                            let tx = transactions.begin(&id).await.expect("begin");
                            tx.send("t", b"processed".to_vec()).await.expect("send");
                            tx.commit().await.expect("commit");
                        }
                    });
                });
            }
        });
    }

    /// The journal's `fdatasync` calls so far under group commit (`None`
    /// without it: then each frame is one).
    pub fn group_syncs(&self) -> Option<u64> {
        self.cluster.with_state(|s| {
            s.transactions()
                .journal_group_commit()
                .map(|group| group.syncs())
        })
    }
}

/// P4: a data directory holding about `bytes` of log in one partition, closed.
pub struct RecoveryWorkload {
    pub dir: TempDir,
    pub config: MiniKafkaConfig,
    /// Every segment file, for the baseline.
    pub segments: Vec<PathBuf>,
    pub log_bytes: u64,
}

impl RecoveryWorkload {
    pub fn new(bytes: u64) -> Self {
        let (dir, cluster) = cluster(1, 1);
        let tp = TopicPartition::new("t", 0);
        let config = cluster.config();
        let mut log_bytes = 0;
        let mut i = 0;
        while log_bytes < bytes {
            let batch = record_batch(100, 100, i);
            log_bytes += codec::encoded_len(&batch) as u64;
            append_acks1(&cluster, &tp, batch);
            i += 1;
        }
        let segments = cluster
            .leader_log(&tp)
            .and_then(|log| log.segment_paths())
            .expect("segment paths");
        drop(cluster);
        Self {
            dir,
            config,
            segments,
            log_bytes,
        }
    }

    /// The measured path: open the directory as after a restart (every frame
    /// CRC-checked and validated, indexes rebuilt, producer state rebuilt,
    /// journal replayed, recovery run).
    pub fn reopen(&self) -> BrokerCluster {
        BrokerCluster::open(self.config.clone(), ManualClock::new()).expect("reopens")
    }

    /// The baseline: read every segment and CRC all of its bytes.
    pub fn read_and_crc(&self) -> u32 {
        let mut hasher = crc32fast::Hasher::new();
        let mut buf = vec![0u8; 1 << 20];
        for path in &self.segments {
            let mut file = File::open(path).expect("segment");
            loop {
                let n = file.read(&mut buf).expect("read");
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
            }
        }
        hasher.finalize()
    }
}

/// P1: the live dashboard on `partitions` partitions holding
/// `records_per_partition` records each (batches of 100 records of 100 B).
pub struct DashboardWorkload {
    pub app: App,
}

impl DashboardWorkload {
    pub fn new(partitions: u32, records_per_partition: usize) -> Self {
        Self::with_batches(partitions, records_per_partition, 100)
    }

    /// [`Self::new`] with `records_per_batch` records in each batch.
    pub fn with_batches(
        partitions: u32,
        records_per_partition: usize,
        records_per_batch: usize,
    ) -> Self {
        let header: Header = serde_json::from_str(&format!(
            r#"{{"mk_recording":1,"title":"perf","cluster":{{"brokers":[1],"topics":[{{"name":"t","partitions":{partitions},"replication_factor":1}}]}}}}"#
        ))
        .expect("header parses");
        let driver = Driver::new(&header, None).expect("driver");
        let batches = records_per_partition.div_ceil(records_per_batch);
        fill(driver.cluster(), batches, records_per_batch, 100);
        let app = App::live(
            driver,
            header,
            None,
            layout::builtin_default(),
            Lang::En,
            Theme::colored(),
        );
        Self { app }
    }

    /// One frame of the default layout at `cols` x `rows`: build the View,
    /// then draw every pane. The snapshot is built for each frame, as after
    /// a step (the app itself shares one between the frames of a state).
    pub fn frame(&self, cols: u16, rows: u16) -> Buffer {
        let view = self.app.snapshot();
        let input = crate::ui::frame::FrameInput {
            view: &view,
            ..self.app.frame_input()
        };
        let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(cols, rows))
            .expect("a test backend always works");
        terminal
            .draw(|f| {
                crate::ui::frame::draw(&input, f.buffer_mut());
            })
            .expect("drawing into a test backend cannot fail");
        terminal.backend().buffer().clone()
    }
}

/// P5: a 10,000-step recording in cycles of 12 that each end with nothing
/// pending (a checkpoint can only be taken then): a transaction over two
/// partitions with staged offsets, an acks=all produce, replication, the
/// clock, and every 600 steps a crash.
pub fn generated_recording(steps: usize) -> Recording {
    generated_recording_with(steps, true)
}

/// [`generated_recording`], with its crashes (`crashes: false`: the clock
/// moves instead). A crash reopens the data directory; its recovery parses
/// only what was written since the last one (recovery points,
/// docs/engine-decisions.md), so both grow about linearly with the steps
/// (`benches/growth.rs`).
pub fn generated_recording_with(steps: usize, crashes: bool) -> Recording {
    let mut lines = vec![
        r#"{"mk_recording":1,"title":"generated","cluster":{"brokers":[1,2],"topics":[{"name":"out","partitions":2,"replication_factor":2},{"name":"in","partitions":1,"replication_factor":1}]}}"#.to_string(),
    ];
    for i in 0..steps {
        let t = i / 12;
        let txn = format!("t{}", t % 7);
        let action = match i % 12 {
            0 => format!(r#"{{"begin":{{"txn":"{txn}"}}}}"#),
            1 | 2 => format!(r#"{{"send":{{"txn":"{txn}","topic":"out","value":"value-{i}"}}}}"#),
            3 => format!(
                r#"{{"produce":{{"topic":"out","key":"k{i}","value":"p{i}","acks":"all"}}}}"#
            ),
            4 => format!(
                r#"{{"send_offsets":{{"txn":"{txn}","group":"g","offsets":[{{"topic":"in","partition":0,"offset":{i}}}]}}}}"#
            ),
            7 => format!(r#"{{"commit":{{"txn":"{txn}"}}}}"#),
            11 if crashes && i % 600 == 599 => r#"{"crash":{}}"#.to_string(),
            11 => r#"{"advance_clock":{"ms":100}}"#.to_string(),
            _ => r#"{"replicate":{}}"#.to_string(),
        };
        lines.push(format!(r#"{{"at_ms":{},"action":{action}}}"#, i * 100));
    }
    Recording::parse("generated.jsonl", &(lines.join("\n") + "\n"))
        .expect("generated recording parses")
}

/// A fresh one-broker cluster (no fsync) with
/// `partitions` partitions created as topics of up to 100 partitions each.
pub fn many_partitions(partitions: u32) -> (TempDir, BrokerCluster) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut config = MiniKafkaConfig::new(dir.path()).with_brokers([1]);
    config.sync_writes = false;
    let cluster = BrokerCluster::open(config, ManualClock::new()).expect("cluster opens");
    create_partitions(&cluster, partitions);
    (dir, cluster)
}

/// Creates topics `t0`, `t1`, ... of up to 100 partitions each (RF 1)
/// until `partitions` partitions exist.
pub fn create_partitions(cluster: &BrokerCluster, partitions: u32) {
    let mut left = partitions;
    let mut i = 0;
    while left > 0 {
        let n = left.min(100);
        cluster
            .create_topic(&format!("t{i}"), n, 1)
            .expect("topic created");
        left -= n;
        i += 1;
    }
}

/// The process's resident set size in bytes (`VmRSS` in `/proc/self/status`;
/// `None` where that file does not exist).
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P3's bound measures the log's append of the very frames P3 writes:
    /// handed encoded, they end in the same segments, at the same sizes,
    /// as the same batches appended through `PartitionLog::append`.
    #[test]
    fn frames_handed_encoded_land_as_the_same_batches_appended() {
        let mut handed = FrameAppend::new(1 << 20);
        for _ in 0..2 {
            let frames = handed.frames(200);
            assert_eq!(handed.round(frames), 200);
        }
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = PartitionLog::open(dir.path(), handed.log.config).unwrap();
        for _ in 0..2 {
            for i in 0..200 {
                let mut batch = record_batch(100, 100, i);
                batch.base_offset = log.leo();
                log.append(&batch).unwrap();
            }
        }
        let shape = |log: &PartitionLog| -> Vec<(i64, u64)> {
            log.segments()
                .iter()
                .map(|s| (s.base_offset(), s.size()))
                .collect()
        };
        assert_eq!(handed.log.leo(), 40_000);
        assert!(shape(&log).len() > 1, "the rounds roll segments");
        assert_eq!(shape(&handed.log), shape(&log));
        assert_eq!(handed.log.batch_summaries(), log.batch_summaries());
    }
}
