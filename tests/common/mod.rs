//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod tmux;
pub mod zh;

use minikafka::engine::core::record::ConsumerRecord;
use minikafka::engine::{
    AckMode, BrokerCluster, IsolationLevel, ManualClock, MiniKafkaConfig, RecordBatch,
    TopicPartition,
};
use tempfile::TempDir;

/// A cluster on a fresh temporary directory with a manual clock.
pub struct TestCluster {
    pub dir: TempDir,
    pub clock: ManualClock,
    pub cluster: BrokerCluster,
}

impl TestCluster {
    pub fn new(brokers: &[u32], min_isr: usize) -> Self {
        Self::with_config(brokers, |c| c.with_min_insync_replicas(min_isr))
    }

    pub fn with_config(
        brokers: &[u32],
        tweak: impl FnOnce(MiniKafkaConfig) -> MiniKafkaConfig,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new();
        let config = tweak(MiniKafkaConfig::new(dir.path()).with_brokers(brokers.iter().copied()));
        let cluster = BrokerCluster::open(config, clock.clone()).unwrap();
        Self {
            dir,
            clock,
            cluster,
        }
    }

    /// Closes the cluster (drops every handle) and opens it again from disk.
    /// In an async test a finished operation's task may drop its clone of
    /// the cluster (and with the last one the directory's lock) a moment
    /// after its result arrived, so a lock still held by this very process
    /// is waited for, at most 5 s.
    pub fn reopen(self) -> Self {
        let config = self.cluster.config();
        drop(self.cluster);
        let started = std::time::Instant::now();
        let cluster = loop {
            match BrokerCluster::open(config.clone(), self.clock.clone()) {
                Err(minikafka::engine::MiniKafkaError::DataDirLocked { pid, .. })
                    if pid == Some(std::process::id())
                        && started.elapsed() < std::time::Duration::from_secs(5) =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                other => break other.unwrap(),
            }
        };
        Self { cluster, ..self }
    }

    /// Appends one value and returns the future.
    pub fn append(
        &self,
        tp: &TopicPartition,
        value: &str,
        acks: AckMode,
    ) -> minikafka::engine::replication::model::AppendFuture {
        self.cluster
            .append_batch(tp, RecordBatch::of_values([value]), acks)
    }

    /// The values a read_uncommitted consumer sees from offset 0.
    pub fn visible(&self, tp: &TopicPartition) -> Vec<String> {
        values(
            &self
                .cluster
                .fetch(tp, 0, 10_000, IsolationLevel::ReadUncommitted)
                .unwrap(),
        )
    }
}

/// Record values as UTF-8 strings.
pub fn values(records: &[ConsumerRecord]) -> Vec<String> {
    records
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect()
}

pub fn tp(topic: &str, partition: u32) -> TopicPartition {
    TopicPartition::new(topic, partition)
}

/// Runs `fut` as a task, calling `replicate_all_once` between polls until it
/// finishes (at most `rounds` rounds): how a test drives a commit whose
/// markers wait for acks=all.
pub async fn drive<T: Send + 'static>(
    cluster: &BrokerCluster,
    fut: impl std::future::Future<Output = T> + Send + 'static,
    rounds: usize,
) -> T {
    let task = tokio::spawn(fut);
    for _ in 0..rounds {
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        if task.is_finished() {
            break;
        }
        cluster.replicate_all_once().unwrap();
    }
    task.await.unwrap()
}

/// The values a fresh consumer sees from offset 0 at `isolation`.
pub fn read(
    cluster: &BrokerCluster,
    tp: &TopicPartition,
    isolation: IsolationLevel,
) -> Vec<String> {
    values(&cluster.fetch(tp, 0, 10_000, isolation).unwrap())
}

/// read_committed values.
pub fn committed(cluster: &BrokerCluster, tp: &TopicPartition) -> Vec<String> {
    read(cluster, tp, IsolationLevel::ReadCommitted)
}

/// Every file and directory under `dir` (relative path -> contents, `None`
/// for a directory); empty when `dir` does not exist. A symlink is recorded
/// by its target and a FIFO or device by its kind, never read or followed
/// (reading one could block or never end).
pub fn dir_snapshot(
    dir: &std::path::Path,
) -> std::collections::BTreeMap<std::path::PathBuf, Option<Vec<u8>>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let relative = path.strip_prefix(dir).unwrap().to_path_buf();
            let kind = std::fs::symlink_metadata(&path).unwrap().file_type();
            if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                let text = format!("symlink -> {}", target.display());
                out.insert(relative, Some(text.into_bytes()));
            } else if !kind.is_dir() && !kind.is_file() {
                out.insert(relative, Some(format!("{kind:?}").into_bytes()));
            } else if path.is_dir() {
                out.insert(relative, None);
                stack.push(path);
            } else {
                out.insert(relative, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// Every recording under `recordings/`, in name order.
pub fn recordings() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings");
    let mut out: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    out.sort();
    out
}

/// `mk-tui state ARGS…` (the built binary): its JSON, the run asserted to
/// succeed (its standard error shown if not).
pub fn mk_tui_state(args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .arg("state")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
