//! `MiniKafkaConfig` with the book's defaults (FORMATS.md, "Defaults of the
//! book's configuration").

use std::path::PathBuf;

/// The most partitions one topic may have. Every partition's replicas are
/// allocated and their files opened when the topic is created, so a count
/// of 2^32 would ask for gigabytes before failing; 256 is far past what a
/// dashboard can show (docs/recording-format.md, "Limits").
pub const MAX_PARTITIONS: u32 = 256;

/// Broker identifiers as configured (`broker_ids`).
pub type BrokerId = u32;

/// The two rule sets of E14. `Minikafka` reproduces the book, including its
/// stated limits; `Kafka` switches on every real-Kafka behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Rules {
    #[default]
    Minikafka,
    Kafka,
}

impl Rules {
    /// "minikafka" or "kafka", as on the command line and in recordings.
    pub fn name(self) -> &'static str {
        match self {
            Rules::Minikafka => "minikafka",
            Rules::Kafka => "kafka",
        }
    }

    /// The switches of this rule set.
    pub fn switches(self) -> RuleSwitches {
        let on = self == Rules::Kafka;
        RuleSwitches {
            resend_markers_on_recovery: on,
            fence_zombies: on,
            transaction_timeout: on,
            acks_all_by_high_watermark: on,
            isr_by_clock: on,
            group_commit_journal: on,
            transaction_version: TransactionVersion::V1,
            group_protocol: if on {
                GroupProtocol::Classic
            } else {
                GroupProtocol::EagerServer
            },
        }
    }
}

impl std::str::FromStr for Rules {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "minikafka" => Ok(Rules::Minikafka),
            "kafka" => Ok(Rules::Kafka),
            other => Err(format!(
                "unknown rules {other:?}: expected \"minikafka\" or \"kafka\""
            )),
        }
    }
}

/// Each real-Kafka behaviour of E14, switched on or off separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RuleSwitches {
    /// Recovery re-sends missing COMMIT/ABORT markers of PREPARE_* transactions.
    pub resend_markers_on_recovery: bool,
    /// Transactional ids get a producer id and epoch; a new `begin` of an open
    /// id aborts and fences the old instance (zombie fencing).
    pub fence_zombies: bool,
    /// Open transactions abort after `transaction_timeout_ms` on the clock.
    pub transaction_timeout: bool,
    /// `acks=all` completes when the HW passes the batch, as the ISR changes.
    pub acks_all_by_high_watermark: bool,
    /// The leader checks its followers as the clock moves (Kafka's periodic
    /// `replica.lag.time.max.ms` task) and on every operation. Off (the book,
    /// E4): the ISR is evaluated only after followers fetch
    /// (docs/book-differences.md, issue 16). Both lags apply either way.
    pub isr_by_clock: bool,
    /// Journal frames are written under the state lock and fsynced outside
    /// it, one `fdatasync` for every frame written while the previous one
    /// ran (group commit, as Kafka batches its `__transaction_state`
    /// appends); a request is answered once its frame is durable. Off (the
    /// book, E9): each frame is written and fsynced before the state
    /// changes (docs/engine-decisions.md, "Journal group commit").
    pub group_commit_journal: bool,
    /// Which transaction protocol the coordinator speaks: chapter 8's
    /// (KIP-98, version 1) or Kafka 4's (KIP-890, version 2: the producer
    /// epoch is bumped at every commit or abort, so a write delayed past
    /// its transaction's end is fenced instead of hanging the LSO). Version
    /// 2 needs producer ids (`fence_zombies`); both named rule sets are
    /// version 1 (docs/engine-decisions.md, "Transaction version").
    pub transaction_version: TransactionVersion,
    /// How the group coordinator rebalances: the book's eager server-side
    /// rebalance (chapter 9) or Kafka's classic JoinGroup/SyncGroup
    /// protocol, with a leader that assigns (docs/kafka-mapping.md,
    /// "Consumer groups").
    pub group_protocol: GroupProtocol,
}

/// The group protocol of [`RuleSwitches::group_protocol`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum GroupProtocol {
    /// The book's `GroupCoordinator`: every join, leave or expiry bumps the
    /// generation and the coordinator assigns every partition round-robin
    /// at once; a group is only ever Empty or Stable between calls.
    #[default]
    EagerServer,
    /// Kafka's classic protocol: a join prepares a rebalance that waits for
    /// every known member to rejoin (or the rebalance timeout), elects a
    /// leader, and the leader's SyncGroup brings the assignment.
    Classic,
}

impl GroupProtocol {
    /// `eager_server` or `classic`, as in docs and narration.
    pub fn name(self) -> &'static str {
        match self {
            GroupProtocol::EagerServer => "eager_server",
            GroupProtocol::Classic => "classic",
        }
    }
}

/// Kafka's `transaction.version` feature (KIP-890): 1 is the protocol
/// chapter 8 teaches, 2 is Kafka 4's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum TransactionVersion {
    /// KIP-98: one producer epoch for the producer's life; a write that
    /// arrives after its transaction's marker opens a transaction no one
    /// ends (the hanging transaction).
    #[default]
    V1,
    /// KIP-890: each commit or abort bumps the epoch; the next transaction
    /// uses the new epoch and a late write of the old one is fenced.
    V2,
}

impl TransactionVersion {
    /// 1 or 2, as in recordings and Kafka's feature level.
    pub fn number(self) -> u8 {
        match self {
            TransactionVersion::V1 => 1,
            TransactionVersion::V2 => 2,
        }
    }

    /// The version numbered `n`, if there is one.
    pub fn from_number(n: u64) -> Option<Self> {
        match n {
            1 => Some(TransactionVersion::V1),
            2 => Some(TransactionVersion::V2),
            _ => None,
        }
    }

    /// Whether each commit or abort bumps the producer epoch.
    pub fn bumps_epoch_at_end(self) -> bool {
        self == TransactionVersion::V2
    }
}

impl RuleSwitches {
    /// The named rule set these switches equal, if any.
    pub fn rules(self) -> Option<Rules> {
        [Rules::Minikafka, Rules::Kafka]
            .into_iter()
            .find(|r| r.switches() == self)
    }

    /// When the ISR is evaluated under these switches.
    pub fn isr_evaluation(self) -> IsrEvaluation {
        if self.isr_by_clock {
            IsrEvaluation::ByClock
        } else {
            IsrEvaluation::AtFetch
        }
    }

    /// How `acks=all` completes under these switches.
    pub fn acks_all_completion(self) -> AcksAllCompletion {
        if self.acks_all_by_high_watermark {
            AcksAllCompletion::HighWatermark
        } else {
            AcksAllCompletion::CapturedIsr
        }
    }
}

/// When the leader re-evaluates the ISR (E4, E14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IsrEvaluation {
    /// The book (`refresh_isr` at the end of `fetch_followers_once`): only
    /// after followers fetch; a promotion leaves the new leader alone in it.
    #[default]
    AtFetch,
    /// Real Kafka: whenever the clock moves and on every operation, by time
    /// lag only.
    ByClock,
}

/// When a pending `acks=all` append completes (E5, E14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AcksAllCompletion {
    /// The book: every replica in the ISR captured at append time has the batch.
    #[default]
    CapturedIsr,
    /// Real Kafka: the high watermark has passed the batch, as the ISR changes.
    HighWatermark,
}

/// Cluster configuration. Field names and defaults follow the book.
#[derive(Debug, Clone, PartialEq)]
pub struct MiniKafkaConfig {
    /// Root of the on-disk layout (FORMATS.md "Directory layout").
    pub data_dir: PathBuf,
    /// Broker ids in configured order; replica assignment is round-robin over them.
    pub broker_ids: Vec<BrokerId>,
    /// A segment rolls when the next frame would take it past this size.
    pub segment_max_bytes: u64,
    /// One sparse index entry per this many bytes of log.
    pub index_interval_bytes: u64,
    /// A follower further behind than this many offsets leaves the ISR.
    pub replica_lag_max_offsets: u64,
    /// A follower that has not fetched for longer than this leaves the ISR.
    pub replica_lag_time_ms: u64,
    /// A follower fetch returns whole batches up to about this many bytes.
    pub replica_fetch_max_bytes: u64,
    /// `acks=all` needs at least this many replicas in the ISR.
    pub min_insync_replicas: usize,
    /// Kept for parity with the book's configuration (consumer groups).
    pub group_session_timeout_ms: u64,
    /// Open transactions time out after this long (kafka rules only, E14).
    pub transaction_timeout_ms: u64,
    /// The real-Kafka behaviours switched on (E14); all off is the book.
    pub rules: RuleSwitches,
    /// fsync each log append. The book flushes but does not fsync the log.
    pub fsync_log: bool,
    /// fsync the transaction journal's frames and the atomic replacements of
    /// `metadata.json`, `offsets.json` and the producer identities (E3, E8,
    /// E9). On by default; off only for a private temporary directory that
    /// no one else can see and that is deleted at exit (a replay's copies,
    /// issue 7's P5): a power loss cannot reach it. The bytes written, the
    /// renames and every state are the same either way.
    pub sync_writes: bool,
}

impl MiniKafkaConfig {
    /// The book's defaults on `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            broker_ids: vec![1],
            segment_max_bytes: 1024 * 1024,
            index_interval_bytes: 4096,
            replica_lag_max_offsets: 10_000,
            replica_lag_time_ms: 10_000,
            replica_fetch_max_bytes: 1024 * 1024,
            min_insync_replicas: 1,
            group_session_timeout_ms: 10_000,
            transaction_timeout_ms: 60_000,
            rules: RuleSwitches::default(),
            fsync_log: false,
            sync_writes: true,
        }
    }

    /// The same configuration with these broker ids.
    pub fn with_brokers(mut self, ids: impl IntoIterator<Item = BrokerId>) -> Self {
        self.broker_ids = ids.into_iter().collect();
        self
    }

    /// The same configuration under a named rule set (E14).
    pub fn with_rules(mut self, rules: Rules) -> Self {
        self.rules = rules.switches();
        self
    }

    /// The same configuration with this `min_insync_replicas`.
    pub fn with_min_insync_replicas(mut self, n: usize) -> Self {
        self.min_insync_replicas = n;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_book() {
        let c = MiniKafkaConfig::new("/tmp/x");
        assert_eq!(c.broker_ids, vec![1]);
        assert_eq!(c.segment_max_bytes, 1 << 20);
        assert_eq!(c.index_interval_bytes, 4096);
        assert_eq!(c.replica_lag_max_offsets, 10_000);
        assert_eq!(c.replica_lag_time_ms, 10_000);
        assert_eq!(c.replica_fetch_max_bytes, 1 << 20);
        assert_eq!(c.min_insync_replicas, 1);
        assert_eq!(c.group_session_timeout_ms, 10_000);
        assert!(!c.fsync_log);
        assert_eq!(c.rules.rules(), Some(Rules::Minikafka));
    }

    #[test]
    fn rule_sets_are_all_or_nothing_and_parse_by_name() {
        let kafka = Rules::Kafka.switches();
        assert!(
            kafka.resend_markers_on_recovery && kafka.fence_zombies && kafka.transaction_timeout
        );
        assert_eq!(
            kafka.acks_all_completion(),
            AcksAllCompletion::HighWatermark
        );
        assert_eq!(kafka.isr_evaluation(), IsrEvaluation::ByClock);
        assert_eq!(
            Rules::Minikafka.switches().isr_evaluation(),
            IsrEvaluation::AtFetch
        );
        let mixed = RuleSwitches {
            fence_zombies: true,
            ..RuleSwitches::default()
        };
        assert_eq!(mixed.rules(), None);
        assert_eq!("kafka".parse::<Rules>().unwrap(), Rules::Kafka);
        assert!("book".parse::<Rules>().unwrap_err().contains("minikafka"));
    }

    #[test]
    fn both_rule_sets_speak_transaction_version_1_and_2_is_a_switch() {
        assert_eq!(
            Rules::Minikafka.switches().transaction_version,
            TransactionVersion::V1
        );
        assert_eq!(
            Rules::Kafka.switches().transaction_version,
            TransactionVersion::V1
        );
        let v2 = RuleSwitches {
            transaction_version: TransactionVersion::V2,
            ..Rules::Kafka.switches()
        };
        assert_eq!(v2.rules(), None, "version 2 is kafka rules plus a switch");
        assert!(v2.transaction_version.bumps_epoch_at_end());
        assert_eq!(
            TransactionVersion::from_number(2),
            Some(TransactionVersion::V2)
        );
        assert_eq!(TransactionVersion::from_number(3), None);
        assert_eq!(TransactionVersion::V1.number(), 1);
    }
}
