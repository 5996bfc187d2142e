//! Issue 8 part 1 (E2, E9, E13): exhaustive torn tails of the transaction
//! journal and of a replica's active log segment (leader and follower, at
//! replication factor 2 and 3).
//!
//! Each file is cut at every byte position inside each of its last three
//! frames, and garbage of several shapes is appended, both after the intact
//! file and after a cut frame. Every case runs on a fresh copy of one
//! pristine data directory, through `BrokerCluster::tear` (or a direct write
//! and `crash` for garbage after a cut), and checks that recovery:
//!
//! - keeps exactly the frames before the tear, byte for byte, and never drops
//!   an earlier frame;
//! - reports exactly the bytes it cut (`logs_truncated`,
//!   `journal_truncated_bytes`) with a reason, and nothing else;
//! - loses no `acks=all` record (a torn leader gives way to the follower that
//!   holds more, `leaders_reelected`), and no commit that returned Ok when
//!   only the last journal frame is torn;
//! - leaves a directory that accepts appends and reopens clean.
//!
//! The counts are printed (`cargo test --test torn_tails -- --nocapture`);
//! `docs/reliability.md` quotes them.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{committed, drive, tp};
use minikafka::engine::core::codec;
use minikafka::engine::core::recovery::{LeaderReelection, RecoveryReport};
use minikafka::engine::fault::{Tear, TearTarget};
use minikafka::engine::transaction::{JournalFrame, TransactionState};
use minikafka::engine::{
    AckMode, BrokerCluster, IsolationLevel, ManualClock, MiniKafkaConfig, RecordBatch,
    TopicPartition,
};
use minikafka::engine::{config::Rules, core::cluster::LOCK_FILE};
use tempfile::TempDir;

// ---------------------------------------------------------------------------
// Shared machinery: a pristine directory, its copies, the cases, the damage.

/// A directory for one case's copy: in memory (`/dev/shm`) where the
/// machine has it. The cases check recovery's logic, not the disk, and the
/// few fsyncs of each of a few thousand cases would take minutes on a disk.
fn scratch_dir() -> TempDir {
    let shm = Path::new("/dev/shm");
    shm.is_dir()
        .then(|| tempfile::tempdir_in(shm).ok())
        .flatten()
        .unwrap_or_else(|| tempfile::tempdir().unwrap())
}

/// A data directory written once, copied for every case.
struct Pristine {
    dir: TempDir,
    config: MiniKafkaConfig,
}

impl Pristine {
    /// A fresh copy of the directory, opened; it must recover clean.
    fn open_copy(&self) -> (TempDir, BrokerCluster) {
        let copy = scratch_dir();
        copy_dir(self.dir.path(), copy.path());
        let config = MiniKafkaConfig {
            data_dir: copy.path().to_path_buf(),
            ..self.config.clone()
        };
        let cluster = BrokerCluster::open(config, ManualClock::new()).unwrap();
        assert!(cluster.last_recovery().is_clean());
        (copy, cluster)
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else if entry.file_name() != LOCK_FILE {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// How a case damages the file.
#[derive(Debug, Clone)]
enum Damage {
    /// Truncate the file to this many bytes (`Tear::CutBytes`).
    CutTo(usize),
    /// Append these bytes to the intact file (`Tear::AppendGarbage`).
    Garbage(Vec<u8>),
    /// Truncate to this many bytes, then append garbage: a torn frame
    /// followed by junk (written directly, then `crash`).
    CutThenGarbage(usize, Vec<u8>),
}

/// One case: a label, the damage, and how many frames must survive.
#[derive(Debug, Clone)]
struct Case {
    label: String,
    damage: Damage,
    kept_frames: usize,
}

/// What a case set covers, for the printed figures.
#[derive(Debug, Default)]
struct Counts {
    cut_points: usize,
    bytes_in_last_three: usize,
    garbage: usize,
    garbage_after_cut: usize,
}

/// The cases for `intact`, whose frames end at `bounds[1..]` (`bounds[0]` is
/// 0): every cut position inside each of the last three frames (a cut at a
/// frame's first byte removes it whole), each garbage shape after the intact
/// file, and each shape after the last frame cut at its second, middle and
/// last byte. Garbage that happens to complete the cut frame (a newline
/// after a line that lost only its newline) leaves that frame valid.
fn cases(intact: &[u8], bounds: &[usize], garbage: &[(String, Vec<u8>)]) -> (Vec<Case>, Counts) {
    let n = bounds.len() - 1;
    assert!(n >= 4, "the scenario needs a frame before the last three");
    let mut out = Vec::new();
    let mut counts = Counts::default();
    for k in n - 3..n {
        for p in bounds[k]..bounds[k + 1] {
            out.push(Case {
                label: format!("cut at byte {p} (frame {} of {n})", k + 1),
                damage: Damage::CutTo(p),
                kept_frames: k,
            });
            counts.cut_points += 1;
        }
    }
    counts.bytes_in_last_three = bounds[n] - bounds[n - 3];
    for (name, g) in garbage {
        out.push(Case {
            label: format!("garbage {name}"),
            damage: Damage::Garbage(g.clone()),
            kept_frames: n,
        });
        counts.garbage += 1;
        let (start, end) = (bounds[n - 1], bounds[n]);
        for p in [start + 1, (start + end) / 2, end - 1] {
            let completes = g.starts_with(&intact[p..end]);
            out.push(Case {
                label: format!("last frame cut at byte {p}, then garbage {name}"),
                damage: Damage::CutThenGarbage(p, g.clone()),
                kept_frames: if completes { n } else { n - 1 },
            });
            counts.garbage_after_cut += 1;
        }
    }
    (out, counts)
}

/// Applies `case` to `path` (whose intact content is `intact`) through the
/// cluster's fault API; returns the recovery report and the damaged length.
fn apply(
    cluster: &BrokerCluster,
    target: &TearTarget,
    path: &Path,
    intact: &[u8],
    case: &Case,
) -> (RecoveryReport, usize) {
    match &case.damage {
        Damage::CutTo(len) => {
            let cut = Tear::CutBytes((intact.len() - len) as u64);
            let (torn, report) = cluster.tear(target, &cut).unwrap();
            assert_eq!(torn.path, path, "{}", case.label);
            assert_eq!(torn.size_after, *len as u64, "{}", case.label);
            (report, *len)
        }
        Damage::Garbage(g) => {
            let (torn, report) = cluster
                .tear(target, &Tear::AppendGarbage(g.clone()))
                .unwrap();
            assert_eq!(torn.size_after, (intact.len() + g.len()) as u64);
            (report, intact.len() + g.len())
        }
        Damage::CutThenGarbage(len, g) => {
            let mut bytes = intact[..*len].to_vec();
            bytes.extend_from_slice(g);
            fs::write(path, &bytes).unwrap();
            (cluster.crash().unwrap(), bytes.len())
        }
    }
}

/// A small seeded generator (xorshift64*), so garbage is the same every run.
struct Rng(u64);

impl Rng {
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| {
                self.0 ^= self.0 >> 12;
                self.0 ^= self.0 << 25;
                self.0 ^= self.0 >> 27;
                (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
            })
            .collect()
    }
}

/// Seeded random garbage of several lengths, plain and after a prefix.
fn random_garbage(seed: u64, prefix: &[u8], name: &str) -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng(seed);
    [1, 5, 12, 13, 64, 300]
        .into_iter()
        .map(|len| {
            let mut g = prefix.to_vec();
            g.extend(rng.bytes(len));
            (format!("{name} (seed {seed:#x}, {len} random bytes)"), g)
        })
        .collect()
}

fn read(cluster: &BrokerCluster, p: &TopicPartition, iso: IsolationLevel) -> Vec<(i64, String)> {
    cluster
        .fetch(p, 0, 10_000, iso)
        .unwrap()
        .into_iter()
        .map(|r| {
            let v = r.value.unwrap_or_default();
            (r.offset, String::from_utf8_lossy(&v).into_owned())
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Replica logs (E2): leader and follower, RF 2 and 3.

/// The batches written, all with acks=all: frames of different sizes.
const BATCHES: &[&[&str]] = &[
    &["v0"],
    &["v1a", "v1b"],
    &["v2"],
    &["v3a", "v3b", "v3c"],
    &["v4"],
    &["v5"],
];

struct LogScenario {
    pristine: Pristine,
    /// Every acknowledged record, (offset, value).
    acked: Vec<(i64, String)>,
}

/// Writes `BATCHES` with acks=all to `t-0` (min ISR 2), each acknowledged
/// after one replication round, and closes the cluster.
async fn log_scenario(brokers: &[u32]) -> LogScenario {
    let dir = scratch_dir();
    let config = MiniKafkaConfig::new(dir.path())
        .with_brokers(brokers.iter().copied())
        .with_min_insync_replicas(2);
    let cluster = BrokerCluster::open(config.clone(), ManualClock::new()).unwrap();
    cluster.create_topic("t", 1, brokers.len() as u32).unwrap();
    let p = tp("t", 0);
    let mut acked = Vec::new();
    for values in BATCHES {
        let ack = cluster.append_batch(
            &p,
            RecordBatch::of_values(values.iter().copied()),
            AckMode::All,
        );
        cluster.replicate_all_once().unwrap();
        let (base, last) = ack.await.unwrap().offsets.unwrap();
        assert_eq!(last - base + 1, values.len() as i64);
        acked.extend((base..=last).zip(values.iter().map(|v| v.to_string())));
    }
    assert_eq!(
        cluster.replica_set(&p).unwrap().high_watermark(),
        acked.len() as i64
    );
    drop(cluster);
    LogScenario {
        pristine: Pristine { dir, config },
        acked,
    }
}

fn segment_path(dir: &Path, broker: u32) -> PathBuf {
    dir.join(format!("broker-{broker}/t-0/00000000000000000000.log"))
}

/// Frame boundaries of a segment.
fn log_bounds(bytes: &[u8]) -> Vec<usize> {
    let mut bounds = vec![0];
    while *bounds.last().unwrap() < bytes.len() {
        let at = *bounds.last().unwrap();
        let (_, len) = codec::decode(&bytes[at..]).unwrap();
        bounds.push(at + len);
    }
    bounds
}

/// Garbage shapes for a log whose last frame is `last` and next batch starts
/// at `next_offset`.
fn log_garbage(last: &[u8], next_offset: i64) -> Vec<(String, Vec<u8>)> {
    let mut next = RecordBatch::of_values(["next"]);
    next.base_offset = next_offset;
    let valid_next = codec::encode(&next);
    let mut bad_crc = valid_next.clone();
    bad_crc[8] ^= 0x01; // the CRC field: a plausible header with a wrong CRC
    let mut shapes = random_garbage(0x5eed_0001, b"", "random");
    shapes.extend(random_garbage(
        0x5eed_0002,
        codec::MAGIC,
        "magic then random",
    ));
    shapes.extend([
        ("valid header, bad CRC".to_string(), bad_crc),
        (
            "header only (length and CRC, no payload)".to_string(),
            valid_next[..codec::FRAME_HEADER_LEN].to_vec(),
        ),
        (
            "partial frame (half of a valid next batch)".to_string(),
            valid_next[..valid_next.len() / 2].to_vec(),
        ),
        (
            "length past the end".to_string(),
            [&codec::MAGIC[..], &[0xff; 8], b"xyz"].concat(),
        ),
        (
            "the last frame replayed (valid CRC, offsets do not follow)".to_string(),
            last.to_vec(),
        ),
        ("4 KiB of zeros".to_string(), vec![0; 4096]),
        (
            "default garbage".to_string(),
            match Tear::default_garbage() {
                Tear::AppendGarbage(g) => g,
                Tear::CutBytes(_) => unreachable!(),
            },
        ),
    ]);
    shapes
}

/// Tears `target`'s log at every case and checks what recovery kept,
/// reported and elected, that every acked record survives, and that the
/// cluster goes on.
async fn exhaustive_log(brokers: &[u32], target: u32) -> Counts {
    let s = log_scenario(brokers).await;
    let p = tp("t", 0);
    let intact = fs::read(segment_path(s.pristine.dir.path(), target)).unwrap();
    for &b in brokers {
        let other = fs::read(segment_path(s.pristine.dir.path(), b)).unwrap();
        assert_eq!(other, intact, "replicas hold the same frames");
    }
    let bounds = log_bounds(&intact);
    let n = bounds.len() - 1;
    assert_eq!(n, BATCHES.len());
    let last = &intact[bounds[n - 1]..];
    let (all, counts) = cases(&intact, &bounds, &log_garbage(last, s.acked.len() as i64));
    let target_tear = TearTarget::Log {
        tp: p.clone(),
        broker: target,
    };
    let leader = brokers[0];
    let mut pristine_summaries = None;
    for case in &all {
        let label = format!("rf {} tear broker {target}: {}", brokers.len(), case.label);
        let (dir, cluster) = s.pristine.open_copy();
        let summaries = pristine_summaries
            .get_or_insert_with(|| {
                cluster
                    .replica_log(&p, leader)
                    .unwrap()
                    .batch_summaries()
                    .unwrap()
            })
            .clone();
        let path = segment_path(dir.path(), target);
        let (report, damaged_len) = apply(&cluster, &target_tear, &path, &intact, case);
        let k = case.kept_frames;
        let cut = (damaged_len - bounds[k]) as u64;

        // Exactly the valid prefix is kept, and exactly the cut is reported.
        assert_eq!(fs::read(&path).unwrap(), intact[..bounds[k]], "{label}");
        if cut > 0 {
            assert_eq!(report.logs_truncated.len(), 1, "{label}: {report:?}");
            let t = &report.logs_truncated[0];
            assert_eq!(
                (&t.tp, t.broker, t.truncated_bytes),
                (&p, target, cut),
                "{label}"
            );
            assert!(!t.reason.is_empty(), "{label}");
        } else {
            assert!(report.logs_truncated.is_empty(), "{label}: {report:?}");
        }
        assert_eq!(report.journal_truncated_bytes, 0, "{label}");
        for &b in brokers {
            let held = cluster
                .replica_log(&p, b)
                .unwrap()
                .batch_summaries()
                .unwrap();
            let expected = if b == target {
                &summaries[..k]
            } else {
                &summaries[..]
            };
            assert_eq!(held, expected, "{label}: broker {b}'s batches");
        }

        // A leader that lost batches gives way to the first full follower.
        let reelected = target == leader && k < n;
        let (expect_leader, expect_epoch) = if reelected {
            (brokers[1], 1)
        } else {
            (leader, 0)
        };
        let expected_report: Vec<LeaderReelection> = if reelected {
            vec![LeaderReelection {
                tp: p.clone(),
                old_leader: leader,
                new_leader: brokers[1],
                leader_epoch: 1,
            }]
        } else {
            Vec::new()
        };
        assert_eq!(report.leaders_reelected, expected_report, "{label}");
        let set = cluster.replica_set(&p).unwrap();
        assert_eq!(
            (set.leader_id(), set.leader_epoch()),
            (expect_leader, expect_epoch),
            "{label}"
        );
        let meta = cluster.with_state(|st| st.metadata().partition(&p).cloned().unwrap());
        assert_eq!(
            (meta.leader_id, meta.leader_epoch),
            (expect_leader, expect_epoch),
            "{label}"
        );

        // Every acks=all record is readable at its offset, at both isolations.
        assert_eq!(set.high_watermark(), s.acked.len() as i64, "{label}");
        assert_eq!(
            read(&cluster, &p, IsolationLevel::ReadUncommitted),
            s.acked,
            "{label}"
        );
        assert_eq!(
            read(&cluster, &p, IsolationLevel::ReadCommitted),
            s.acked,
            "{label}"
        );

        // The repaired cluster goes on: the torn replica catches up, an
        // acks=all append lands at the next offset, all replicas agree.
        cluster.replicate_all_once().unwrap();
        let ack = cluster.append_batch(&p, RecordBatch::of_values(["after"]), AckMode::All);
        cluster.replicate_all_once().unwrap();
        let r = ack.await.unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(r.base_offset(), Some(s.acked.len() as i64), "{label}");
        let leader_batches = cluster.leader_log(&p).unwrap().batch_summaries().unwrap();
        for &b in brokers {
            let held = cluster
                .replica_log(&p, b)
                .unwrap()
                .batch_summaries()
                .unwrap();
            assert_eq!(held, leader_batches, "{label}: broker {b} converged");
        }
        // A second crash right after finds nothing to repair.
        let again = cluster.crash().unwrap();
        assert!(again.is_clean(), "{label}: {again:?}");
        let mut expected = s.acked.clone();
        expected.push((s.acked.len() as i64, "after".into()));
        assert_eq!(
            read(&cluster, &p, IsolationLevel::ReadUncommitted),
            expected,
            "{label}"
        );
    }
    println!(
        "log rf {} tear broker {target}: {} cut points over the last 3 frames ({} bytes), {} garbage shapes, {} garbage-after-cut cases",
        brokers.len(),
        counts.cut_points,
        counts.bytes_in_last_three,
        counts.garbage,
        counts.garbage_after_cut
    );
    assert_eq!(counts.cut_points, counts.bytes_in_last_three);
    counts
}

#[tokio::test]
async fn rf2_leader_log_torn_at_every_byte_of_its_last_three_frames() {
    exhaustive_log(&[1, 2], 1).await;
}

#[tokio::test]
async fn rf2_follower_log_torn_at_every_byte_of_its_last_three_frames() {
    exhaustive_log(&[1, 2], 2).await;
}

#[tokio::test]
async fn rf3_leader_log_torn_at_every_byte_of_its_last_three_frames() {
    exhaustive_log(&[1, 2, 3], 1).await;
}

#[tokio::test]
async fn rf3_follower_log_torn_at_every_byte_of_its_last_three_frames() {
    exhaustive_log(&[1, 2, 3], 3).await;
}

// ---------------------------------------------------------------------------
// The transaction journal (E9, E12).

/// tx-a commits "a1", tx-b aborts "b1", tx-d sends "d1", stages offset 5 of
/// `in-0` for `workers` and commits: the journal's last three frames are
/// tx-d's ONGOING (offsets staged), PREPARE_COMMIT and COMPLETE_COMMIT.
async fn journal_scenario(rules: Rules) -> Pristine {
    let dir = scratch_dir();
    let config = MiniKafkaConfig::new(dir.path())
        .with_brokers([1, 2])
        .with_rules(rules);
    let cluster = BrokerCluster::open(config.clone(), ManualClock::new()).unwrap();
    cluster.create_topic("out", 1, 2).unwrap();
    cluster.create_topic("in", 1, 1).unwrap();
    for (id, value, commit) in [
        ("tx-a", "a1", true),
        ("tx-b", "b1", false),
        ("tx-d", "d1", true),
    ] {
        let tx = cluster.transactions().begin(id).await.unwrap();
        let send = tx.clone();
        drive(
            &cluster,
            async move { send.send("out", value.as_bytes().to_vec()).await },
            5,
        )
        .await
        .unwrap();
        if id == "tx-d" {
            tx.send_offsets("workers", [(tp("in", 0), 5)])
                .await
                .unwrap();
        }
        let end = tx.clone();
        drive(
            &cluster,
            async move {
                if commit {
                    end.commit().await
                } else {
                    end.abort().await
                }
            },
            10,
        )
        .await
        .unwrap();
    }
    cluster.replicate_all_once().unwrap();
    let frames = cluster.with_state(|s| {
        s.transactions()
            .journal_frames()
            .iter()
            .cloned()
            .collect::<Vec<_>>()
    });
    let tail: Vec<(&str, TransactionState)> = frames[frames.len() - 3..]
        .iter()
        .map(|f| (f.id.as_str(), f.state))
        .collect();
    assert_eq!(
        tail,
        [
            ("tx-d", TransactionState::Ongoing),
            ("tx-d", TransactionState::PrepareCommit),
            ("tx-d", TransactionState::CompleteCommit),
        ]
    );
    drop(cluster);
    Pristine { dir, config }
}

fn journal_bounds(bytes: &[u8]) -> Vec<usize> {
    let mut bounds = vec![0];
    bounds.extend(
        bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i + 1),
    );
    assert_eq!(*bounds.last().unwrap(), bytes.len());
    bounds
}

/// Garbage shapes for a journal whose last line is `last` (newline included).
fn journal_garbage(last: &[u8]) -> Vec<(String, Vec<u8>)> {
    let line = std::str::from_utf8(&last[..last.len() - 1]).unwrap();
    let (crc, json) = line.split_once(' ').unwrap();
    let stored = u32::from_str_radix(crc, 16).unwrap();
    let partial = &json[..json.len() / 2];
    let mut shapes = random_garbage(0x5eed_0003, b"", "random");
    shapes.extend(random_garbage(
        0x5eed_0004,
        format!("{crc} ").as_bytes(),
        "a CRC prefix then random",
    ));
    shapes.extend(random_garbage(0x5eed_0005, b"\n", "a newline then random"));
    shapes.extend([
        (
            "valid JSON with a wrong CRC".to_string(),
            format!("{:08x} {json}\n", stored ^ 1).into_bytes(),
        ),
        (
            "partial JSON, newline-terminated, with its own valid CRC".to_string(),
            format!("{:08x} {partial}\n", crc32fast::hash(partial.as_bytes())).into_bytes(),
        ),
        (
            "partial JSON, newline-terminated, with the whole line's CRC".to_string(),
            format!("{crc} {partial}\n").into_bytes(),
        ),
        (
            "a partial line without newline".to_string(),
            last[..last.len() / 2].to_vec(),
        ),
        (
            "uppercase CRC".to_string(),
            format!("{} {json}\n", crc.to_uppercase()).into_bytes(),
        ),
        ("an empty line".to_string(), b"\n".to_vec()),
        ("4 KiB of zeros".to_string(), vec![0; 4096]),
    ]);
    assert!(
        crc.bytes().any(|b| b.is_ascii_alphabetic()),
        "the uppercase shape needs a hex letter in {crc}"
    );
    shapes
}

fn control_batches(cluster: &BrokerCluster, p: &TopicPartition) -> usize {
    let log = cluster.leader_log(p).unwrap();
    log.all_batches()
        .unwrap()
        .iter()
        .filter(|b| b.is_control())
        .count()
}

async fn exhaustive_journal(rules: Rules) -> Counts {
    let pristine = journal_scenario(rules).await;
    let out = tp("out", 0);
    let in0 = tp("in", 0);
    let path = pristine.dir.path().join("transactions.journal");
    let intact = fs::read(&path).unwrap();
    let bounds = journal_bounds(&intact);
    let n = bounds.len() - 1;
    let (all, counts) = cases(&intact, &bounds, &journal_garbage(&intact[bounds[n - 1]..]));
    let mut pristine_frames: Option<Vec<JournalFrame>> = None;
    for case in &all {
        let label = format!("journal ({}): {}", rules.name(), case.label);
        let (dir, cluster) = pristine.open_copy();
        let frames0 = pristine_frames
            .get_or_insert_with(|| {
                cluster.with_state(|s| {
                    s.transactions()
                        .journal_frames()
                        .iter()
                        .cloned()
                        .collect::<Vec<_>>()
                })
            })
            .clone();
        let path = dir.path().join("transactions.journal");
        let (report, damaged_len) = apply(&cluster, &TearTarget::Journal, &path, &intact, case);
        let k = case.kept_frames;
        let cut = (damaged_len - bounds[k]) as u64;

        // The valid prefix is kept and the cut reported, with a reason.
        assert_eq!(report.journal_truncated_bytes, cut, "{label}");
        assert_eq!(report.journal_reason.is_some(), cut > 0, "{label}");
        if let Some(why) = &report.journal_reason {
            let at = format!("frame {} at byte {}", k + 1, bounds[k]);
            assert!(why.contains(&at), "{label}: {why:?} names {at:?}");
        }
        assert!(
            report.logs_truncated.is_empty() && report.leaders_reelected.is_empty(),
            "{label}"
        );
        let bytes = fs::read(&path).unwrap();
        assert!(bytes.starts_with(&intact[..bounds[k]]), "{label}");
        let frames = cluster.with_state(|s| {
            s.transactions()
                .journal_frames()
                .iter()
                .cloned()
                .collect::<Vec<_>>()
        });
        assert_eq!(
            frames[..k],
            frames0[..k],
            "{label}: no earlier frame dropped"
        );

        // tx-d ends as its last surviving frame says; a PREPARE_COMMIT is
        // completed by recovery (E12), which journals one frame.
        let d_last = frames0[..k]
            .iter()
            .rev()
            .find(|f| f.id == "tx-d")
            .map(|f| f.state);
        let txs = cluster.transactions();
        assert_eq!(
            txs.get("tx-a").unwrap().state,
            TransactionState::CompleteCommit,
            "{label}"
        );
        assert_eq!(
            txs.get("tx-b").unwrap().state,
            TransactionState::CompleteAbort,
            "{label}"
        );
        let d = txs.get("tx-d").unwrap();
        match d_last {
            Some(TransactionState::CompleteCommit) => {
                assert!(
                    report.completed.is_empty() && report.left_open.is_empty(),
                    "{label}"
                );
                assert_eq!(frames.len(), k, "{label}");
                assert_eq!(d.state, TransactionState::CompleteCommit, "{label}");
            }
            Some(TransactionState::PrepareCommit) => {
                assert_eq!(report.completed.len(), 1, "{label}");
                let c = &report.completed[0];
                assert_eq!(
                    (c.id.as_str(), c.from, c.to),
                    (
                        "tx-d",
                        TransactionState::PrepareCommit,
                        TransactionState::CompleteCommit
                    ),
                    "{label}"
                );
                assert_eq!(frames.len(), k + 1, "{label}");
                assert_eq!(frames[k].state, TransactionState::CompleteCommit, "{label}");
                assert_eq!(d.state, TransactionState::CompleteCommit, "{label}");
            }
            Some(TransactionState::Ongoing) => {
                assert!(report.completed.is_empty(), "{label}");
                assert_eq!(report.left_open, ["tx-d"], "{label}");
                assert_eq!(frames.len(), k, "{label}");
                assert_eq!(d.state, TransactionState::Ongoing, "{label}");
            }
            other => panic!("{label}: unexpected last state of tx-d {other:?}"),
        }
        // A commit that returned Ok survives a tear of the last frame; a
        // deeper tear (fsynced frames lost: media damage) leaves it open.
        let d_committed = d.state == TransactionState::CompleteCommit;
        assert_eq!(d_committed, k >= n - 1, "{label}");
        let expected_committed: Vec<String> = if d_committed {
            vec!["a1".into(), "d1".into()]
        } else {
            vec!["a1".into()]
        };
        assert_eq!(committed(&cluster, &out), expected_committed, "{label}");
        let uncommitted: Vec<String> = read(&cluster, &out, IsolationLevel::ReadUncommitted)
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        assert_eq!(uncommitted, ["a1", "b1", "d1"], "{label}");
        // No marker is written twice, under either rules.
        assert!(report.markers_resent.is_empty(), "{label}");
        assert_eq!(control_batches(&cluster, &out), 3, "{label}");
        // The offsets were published before COMPLETE_COMMIT was journaled.
        assert_eq!(cluster.offsets().get("workers", &in0), Some(5), "{label}");

        // A second crash right after finds nothing new to repair.
        let again = cluster.crash().unwrap();
        assert!(again.is_clean(), "{label}: {again:?}");
        assert_eq!(again.left_open, report.left_open, "{label}");
        assert_eq!(committed(&cluster, &out), expected_committed, "{label}");
        let after = cluster.with_state(|s| {
            s.transactions()
                .journal_frames()
                .iter()
                .cloned()
                .collect::<Vec<_>>()
        });
        assert_eq!(after, frames, "{label}: the second recovery wrote nothing");
    }
    println!(
        "journal ({}): {} cut points over the last 3 frames ({} bytes), {} garbage shapes, {} garbage-after-cut cases",
        rules.name(),
        counts.cut_points,
        counts.bytes_in_last_three,
        counts.garbage,
        counts.garbage_after_cut
    );
    assert_eq!(counts.cut_points, counts.bytes_in_last_three);
    counts
}

#[tokio::test]
async fn journal_torn_at_every_byte_of_its_last_three_frames_book_rules() {
    exhaustive_journal(Rules::Minikafka).await;
}

#[tokio::test]
async fn journal_torn_at_every_byte_of_its_last_three_frames_kafka_rules() {
    exhaustive_journal(Rules::Kafka).await;
}
