//! What a handler sees of the server: the request it answers, the answer
//! it gives, and the [`Broker`] it translates over. A handler reads the
//! cluster (`read`, and the plain views beside it: a transaction's state,
//! a log's ends), changes it only by applying actions ([`Broker::apply`]),
//! and keeps the wire's own state (producer ids, groups, advertised
//! brokers) in the tables the broker lends it. The driver thread's
//! [`crate::kafka::worker::Worker`] is the broker; the handlers know only
//! this interface, so they cannot reach past it into the driver, and the
//! worker, which dispatches requests to them, is the one module above them.
//!
//! The engine's types the handlers translate are re-exported here, once:
//! the list is the whole of the engine the Kafka edge speaks of.

use std::time::{Duration, Instant};

use kafka_protocol::messages::{FetchRequest, ProduceResponse, RequestKind, ResponseKind};

use crate::engine::MiniKafkaConfig;
use crate::kafka::groups::Groups;
use crate::kafka::producer_ids::ProducerIds;
use crate::kafka::producers::ProducerTable;
use crate::kafka::registry::ConnectionId;
use crate::session::driver::PendingView;
use crate::session::recording::Caption;
use crate::session::{Action, ActionError, Outcome};

pub use crate::engine::config::BrokerId;
pub use crate::engine::core::batch_view::BatchView;
pub use crate::engine::core::cluster::ClusterState;
pub use crate::engine::core::metadata::{TimestampType, validate_topic_name};
pub use crate::engine::log::PartitionLog;
pub use crate::engine::log::frames::LoggedFrames;
pub use crate::engine::replication::model::TransactionVisibility;
pub use crate::engine::transaction::{TransactionData, TransactionState};
pub use crate::engine::{
    AckMode, AppendResult, ControlType, MiniKafkaError, RecordBatch, TopicPartition,
};

/// Why the server's producer-id file ([`ProducerIds`]) failed, as
/// [`ProducerTable`] says it.
pub type IdError = crate::session::SessionError;

/// The server as a handler uses it. Reads are of the cluster as it stands
/// between two steps; the only change is an applied action, so everything
/// a client does is a step of the recording.
pub trait Broker {
    /// Calls `f` once with the cluster's state (handlers call `read`, its
    /// typed form on `dyn Broker`).
    fn read_state(&self, f: &mut dyn FnMut(&ClusterState));
    /// The engine clock, in ms since the cluster started.
    fn clock_ms(&self) -> u64;

    /// Applies one action for the request (real time first, under serve),
    /// recorded like any step.
    fn apply(&mut self, action: &Action) -> Outcome;
    /// Whether the driver would refuse `action` outright (a recording's
    /// cap), without applying it.
    fn refuse(&self, action: &Action) -> Result<(), ActionError>;
    /// A `note` step saying `caption`: the server's word for what the
    /// engine's actions do not show.
    fn note(&mut self, caption: &Caption);

    /// The step of the action applied last.
    fn last_step(&self) -> usize;
    /// The driver's operations still pending.
    fn pending(&self) -> Vec<PendingView>;
    /// The failure the driver recorded for `step` (its kind by name, and
    /// the engine's sentence), if it failed.
    fn step_error(&self, step: usize) -> Option<(&'static str, String)>;
    /// What the append of a `produce` or `send` step gave, once done.
    fn appended(&self, step: usize) -> Option<AppendResult>;
    /// Where a pending append of `step` is to land: its first offset.
    fn lands_at(&self, step: usize) -> Option<i64>;

    /// The Unix time (ms) the engine clock's 0 stands for on the wire.
    fn append_time_origin(&mut self) -> i64;
    /// The broker's `fetch.max.bytes`: the most one Fetch response holds.
    fn fetch_max_bytes(&self) -> u64;
    /// The broker's `auto.create.topics.enable`: whether Metadata creates
    /// the missing topics a client asks it to.
    fn auto_create_topics(&self) -> bool;

    /// The advertised brokers, the first one the controller.
    fn brokers(&self) -> &[Advertised];
    /// The transactional producers as the wire sees them.
    fn producers(&self) -> &ProducerTable;
    fn producers_mut(&mut self) -> &mut ProducerTable;
    /// The server's producer ids, opened from the data directory.
    fn producer_ids(&mut self) -> Result<&mut ProducerIds, IdError>;
    /// InitProducerId without a transactional id: a new id at epoch 0.
    fn init_idempotent(&mut self) -> Result<(i64, i16), IdError>;
    /// The identity the server itself gives `txn` next (book rules).
    fn next_transactional_identity(&mut self, txn: &str) -> Result<(i64, i16), IdError>;
    /// The host `connection` comes from, as Kafka's DescribeGroups shows
    /// a member's (`/127.0.0.1`); empty when unknown.
    fn client_host(&self, connection: ConnectionId) -> String;
    /// The consumer groups.
    fn groups(&self) -> &Groups;
    fn groups_mut(&mut self) -> &mut Groups;
}

/// The reads with a type of their own live here, on the trait object, so
/// the trait stays object-safe: a [`Continue`] is polled with a
/// `&mut dyn Broker`.
impl dyn Broker + '_ {
    /// Reads the cluster's state: `f`'s answer.
    pub fn read<R>(&self, f: impl FnOnce(&ClusterState) -> R) -> R {
        let mut f = Some(f);
        let mut out = None;
        self.read_state(&mut |s| {
            if let Some(f) = f.take() {
                out = Some(f(s));
            }
        });
        out.expect("read_state calls back once")
    }

    /// The cluster's configuration (its rules among it).
    pub fn config(&self) -> MiniKafkaConfig {
        self.read(|s| s.config().clone())
    }

    /// The topics' names, in order.
    pub fn topic_names(&self) -> Vec<String> {
        self.read(|s| s.metadata().topics().keys().cloned().collect())
    }

    /// A topic's timestamp type, or `None` for a topic that does not exist.
    pub fn timestamp_type(&self, topic: &str) -> Option<TimestampType> {
        self.read(|s| s.metadata().topics().get(topic).map(|t| t.timestamp_type))
    }

    /// Whether `topic` is compacted (`cleanup.policy=compact`).
    pub fn compacted(&self, topic: &str) -> bool {
        self.read(|s| {
            s.metadata()
                .topics()
                .get(topic)
                .is_some_and(|t| t.config.cleanup_policy.compacts())
        })
    }

    /// The leader's log end and start offsets of `tp`; -1 and -1 when
    /// there is no such partition.
    pub fn log_ends(&self, tp: &TopicPartition) -> (i64, i64) {
        self.read(|s| {
            s.partition(tp).map_or((-1, -1), |set| {
                let log = &set.leader().log;
                (log.leo(), log.log_start_offset())
            })
        })
    }

    /// The brokers stopped in the engine.
    pub fn stopped_brokers(&self) -> std::collections::BTreeSet<BrokerId> {
        self.read(|s| s.stopped_brokers().iter().copied().collect())
    }

    /// The index of transactional id `txn`'s latest engine transaction
    /// (each `begin` is a new one, an instance).
    pub fn latest_instance(&self, txn: &str) -> Option<usize> {
        self.read(|s| {
            s.transactions()
                .instances()
                .iter()
                .rposition(|d| d.id == txn)
        })
    }

    /// Engine transaction `instance`, copied.
    pub fn instance(&self, instance: usize) -> Option<TransactionData> {
        self.read(|s| s.transactions().instances().get(instance).cloned())
    }

    /// The state of engine transaction `instance`.
    pub fn txn_state(&self, instance: usize) -> Option<TransactionState> {
        self.read(|s| s.transactions().instances().get(instance).map(|d| d.state))
    }
}

/// One decoded request, with who sent it where.
#[derive(Debug)]
pub struct Request {
    /// The broker whose listener took the connection.
    pub broker: BrokerId,
    pub client_id: String,
    pub version: i16,
    pub body: RequestKind,
    /// The connection it came on (the registry's number), so the driver
    /// side can mark it waiting.
    pub connection: ConnectionId,
}

/// The answer to a request.
#[derive(Debug)]
pub struct Answer {
    /// The response body; `None` for an `acks=0` produce, which Kafka
    /// never answers.
    pub body: Option<ResponseKind>,
    /// What happened, for the request log.
    pub outcome: String,
    /// A fetch with less than its `min_bytes` to return (and no error):
    /// it waits, up to its `max_wait_ms`, for the steps that can give it
    /// more ([`Handled::Fetch`]).
    pub empty_fetch: bool,
    /// Close the connection once answered (after the body, if any): the
    /// dropped-response fault ([`crate::kafka::fault`]).
    pub close: bool,
}

impl Answer {
    /// An answer sent now.
    pub fn now(body: ResponseKind, outcome: impl Into<String>) -> Self {
        Self {
            body: Some(body),
            outcome: outcome.into(),
            empty_fetch: false,
            close: false,
        }
    }
}

/// A broker's advertised address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advertised {
    pub broker: BrokerId,
    pub host: String,
    pub port: u16,
}

/// What a produce handler hands back: an answer now, or a response whose
/// partitions wait for pending steps.
#[derive(Debug)]
pub enum Handled {
    Now(Answer),
    Wait(WaitingProduce),
    /// A request answered after work that takes several steps (a
    /// transactional produce, an EndTxn waiting for its markers): see
    /// [`Continue`].
    Continue(Box<dyn Continue>),
    /// A fetch with less than its `min_bytes` to return: it waits for the
    /// steps that can give it more (the driver thread keeps it until then).
    Fetch(Box<FetchWait>),
}

/// The longest a fetch waits, whatever its `max_wait_ms` asks.
pub const MAX_FETCH_WAIT: Duration = Duration::from_secs(30);

/// A fetch that waits: the request, asked again when one of its
/// partitions changes, and answered as it is at its deadline.
#[derive(Debug)]
pub struct FetchWait {
    pub broker: BrokerId,
    pub version: i16,
    pub request: FetchRequest,
}

/// A request whose answer waits for the driver (a transactional produce,
/// an EndTxn waiting for its markers).
/// [`Continue::poll`] is called after every action the broker applies and
/// on every timer tick; it may apply the request's next action and returns
/// the answer once it has one.
pub trait Continue: Send + std::fmt::Debug {
    /// Moves on if it can: `Some(answer)` when the request is answered.
    fn poll(&mut self, broker: &mut dyn Broker) -> Option<Answer>;
    /// When a broker gives up on it.
    fn deadline(&self) -> Instant;
    /// The answer at the deadline.
    fn timed_out(self: Box<Self>, broker: &mut dyn Broker) -> Answer;
}

/// An `acks=all` produce whose appends are pending.
#[derive(Debug)]
pub struct WaitingProduce {
    /// The response with every partition's offsets already filled in.
    pub response: ProduceResponse,
    /// (topic index, partition index, the steps it waits on).
    pub parts: Vec<(usize, usize, Vec<usize>)>,
    /// When a broker gives up and answers REQUEST_TIMED_OUT.
    pub deadline: Instant,
    /// What the log says of the partitions that did not wait.
    pub outcome: String,
}
