//! The `Driver` (SPEC §2, §4): applies one action at a time to a live
//! cluster on a single-threaded tokio runtime, runs the work it started to
//! quiescence, and records the outcome: ok, pending, recovered (the step
//! crashed the cluster on purpose and recovery ran) or error (typed; see
//! [`crate::session::outcome`]).
//!
//! Work that waits (an `acks=all` append, a commit whose markers wait for
//! followers) stays as a pending operation, part of the state, until a later
//! action lets it finish. Actions on one transaction run in order: one issued
//! while an earlier one is pending waits behind it (a fair async lock per
//! transaction id). Nothing here reads the wall clock; the runtime has no
//! timers and no I/O driver, so a run is a pure function of the actions.

mod batching;
mod groups;
mod topic_config;

pub use self::groups::{DEFAULT_POLL_MAX, MemberClient, MemberClients, Polled};

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use tokio::task::JoinHandle;

use crate::engine::config::{BrokerId, Rules, TransactionVersion};
use crate::engine::core::cluster::ClusterMemo;
use crate::engine::core::record::Record;
use crate::engine::core::recovery::RecoveryReport;
use crate::engine::fault::{Tear, TearTarget};
use crate::engine::producer::Producer;
use crate::engine::producer::SequenceCheck;
use crate::engine::replication::AppendResult;
use crate::engine::shared_files::CopyStats;
use crate::engine::transaction::CutPoint;
use crate::engine::transaction::{EndOutcome, Transaction};
use crate::engine::txn_support::steps::InstanceRef;
use crate::engine::{
    AckMode, BrokerCluster, ManualClock, MiniKafkaConfig, MiniKafkaError, RecordBatch,
    TopicPartition,
};
use crate::session::action::{
    Action, FieldError, GarbageSpec, Payload, RecordSpec, TearTargetSpec, WireIdentity, payload,
    payload_records,
};
use crate::session::cluster_file::ClusterFile;
use crate::session::data_dir;
use crate::session::error::{Result, SessionError};
use crate::session::history::History;
use crate::session::limits;
use crate::session::narrate::{self, StepEnd};
pub use crate::session::outcome::{ActionError, Outcome, OutcomeKind};
use crate::session::recording::Header;
use crate::session::said::Said;
use crate::session::snapshot::build::{self, MOMENT_FRAME};
use crate::session::snapshot::heads::HeadCache;
use crate::session::snapshot::{Bounds, Moment};
use crate::session::tasks::Tasks;

/// Something that happened at a step, for the events pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub step: usize,
    pub text: String,
    /// The same in Chinese (`--lang zh`, src/session/said.rs).
    pub zh: String,
}

impl Event {
    fn new(step: usize, said: Said) -> Self {
        Self {
            step,
            text: said.en,
            zh: said.zh,
        }
    }
}

/// An action that failed, at the step that issued it (a pending operation
/// that fails later is reported at its own step).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorEvent {
    pub step: usize,
    pub message: String,
    /// The kind of failure: the engine error's name (`NotEnoughReplicas`,
    /// `Crashed`, …) or `InvalidAction`; see [`ActionError::code`].
    pub code: &'static str,
    /// The message in Chinese (`--lang zh`), from the error's variant.
    pub zh: String,
}

/// A pending operation as the state shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingView {
    pub action_step: usize,
    pub kind: &'static str,
    pub txn: Option<String>,
    pub waiting_for: Vec<BrokerId>,
    /// The step of an earlier pending action on the same transaction that
    /// this one waits behind.
    pub queued_behind: Option<usize>,
    /// The batches it waits on (partition and base offset): its own
    /// append, or its transaction's writes and markers awaiting acks.
    pub batches: Vec<(TopicPartition, i64)>,
    /// A commit's or abort's `crash_after` (`prepare`, `marker:1`, …):
    /// armed now, it crashes the cluster there once the operation runs.
    pub crash_after: Option<String>,
}

/// How a finished operation ended well.
enum OpEnd {
    Done,
    /// A produce's batch: where it landed, or for an exact retry where
    /// the original had landed (E7).
    Appended(AppendResult),
    /// A commit or abort that crashed at its cut point: recovery's report.
    Crashed(RecoveryReport),
}

type OpResult = Result<OpEnd, MiniKafkaError>;

/// How many finished produces [`Driver::appended`] remembers: a served
/// client's request reads its steps' results as soon as they finish.
const APPENDED_KEPT: usize = 4096;

struct PendingOp {
    step: usize,
    kind: &'static str,
    txn: Option<String>,
    /// A commit's or abort's `crash_after`: its result then tells the crash.
    cut: Option<CutPoint>,
    /// For a produce: the batch it appended (partition and base offset).
    /// Transaction operations find theirs in the coordinator.
    appended: Option<(TopicPartition, i64)>,
    task: JoinHandle<OpResult>,
}

/// The latest instance each transaction id's client holds.
type TxnRefs = Arc<Mutex<BTreeMap<String, InstanceRef>>>;

/// What a checkpoint keeps of a quiet driver besides the data directory.
#[derive(Debug, Clone)]
pub struct DriverMemo {
    step: usize,
    clock_ms: u64,
    cluster: ClusterMemo,
    producers: BTreeMap<String, Producer>,
    txn_refs: BTreeMap<String, InstanceRef>,
    members: MemberClients,
    /// Shared with the driver and every other checkpoint: a clone costs a
    /// short tail, not the history (issue 17 item 11, `history.rs`).
    events: History<Event>,
    errors: History<ErrorEvent>,
    last_recovery: Option<RecoveryReport>,
}

impl DriverMemo {
    /// See [`ClusterMemo::forget_parsed`].
    pub fn forget_parsed(&mut self) {
        self.cluster.forget_parsed();
    }
}

/// Keeps `cluster.json` (`src/session/cluster_file.rs`) up to date for a
/// driver on a data directory a user keeps. Declared first in [`Driver`],
/// so it is dropped (and writes the clock a last time) while the cluster
/// still holds the directory.
struct Keeper {
    dir: std::path::PathBuf,
    /// What the file holds now (once `written`).
    file: ClusterFile,
    /// Whether the file is on disk: a directory made before the file, in
    /// a directory that refused the first write (read-only), gets it at
    /// the next save.
    written: bool,
    sync: bool,
    clock: ManualClock,
}

impl Keeper {
    /// Writes the clock if it moved since the file was written (the whole
    /// file if it is not on disk yet).
    fn save_clock(&mut self) -> Result<(), MiniKafkaError> {
        let now = crate::engine::Clock::now_ms(&self.clock);
        if self.written && now == self.file.clock_ms {
            return Ok(());
        }
        let mut file = self.file.clone();
        file.clock_ms = now;
        file.write(&self.dir, self.sync)?;
        self.file = file;
        self.written = true;
        Ok(())
    }
}

impl Drop for Keeper {
    /// A clean close writes the clock where it stopped; an error here has
    /// no caller, and leaves the file's clock where it was last written
    /// (a reopen starts from there; serve's clock is brought forward by
    /// its wall-clock origin).
    fn drop(&mut self) {
        let _ = self.save_clock();
    }
}

/// A live cluster driven one action at a time.
pub struct Driver {
    /// `cluster.json`'s keeper (`None` on a private temporary directory).
    keeper: Option<Keeper>,
    tasks: Tasks,
    clock: ManualClock,
    cluster: BrokerCluster,
    config: MiniKafkaConfig,
    rules: String,
    _temp: Option<tempfile::TempDir>,
    step: usize,
    producers: BTreeMap<String, Producer>,
    /// Consumer-group members' clients (`groups.rs`).
    members: MemberClients,
    /// This step's own sentence when its action tells more than "ok": what
    /// a consumer-group action (or expiry), `retention` or `compact` did.
    told: Option<Said>,
    txn_refs: TxnRefs,
    txn_locks: BTreeMap<String, Arc<tokio::sync::Mutex<()>>>,
    ops: Vec<PendingOp>,
    events: History<Event>,
    errors: History<ErrorEvent>,
    /// The latest finished produces' results by step ([`Self::appended`]).
    appended: std::collections::VecDeque<(usize, AppendResult)>,
    last_recovery: Option<RecoveryReport>,
    /// How this step's own operation ended, if it ended during quiescence.
    own_outcome: Option<Outcome>,
    /// The sentence of a cut-point crash of an earlier step's pending
    /// commit or abort, if one happened during this step.
    crashed_in_step: Option<Said>,
    /// The Chinese sentence of this step's own recovery, when it crashed
    /// (its English one is the [`Outcome::Recovered`]).
    recovered_zh: Option<String>,
    /// The last step's outcome in words, in both languages: what the
    /// status line says (see [`Self::last_said`]).
    last_said: Said,
    /// Where the cluster's crash observer leaves the moment of death of a
    /// crash during the current step, and how much it reads.
    moments: Arc<Mutex<MomentSlot>>,
    /// The moment of death of the current step, if it crashed the cluster
    /// (cleared by the next step).
    last_moment: Option<Moment>,
    /// Write the HW checkpoint after a step only once the clock has moved
    /// this far since it was last written (`None`: after every step). See
    /// [`Self::set_hw_checkpoint_interval`].
    hw_checkpoint_interval_ms: Option<u64>,
    /// The clock when the driver last wrote the HW checkpoint.
    hw_checkpoint_at_ms: u64,
    /// The first records of the batches frames drew, kept between frames
    /// (`snapshot/heads.rs`): reading never changes the state.
    heads: HeadCache,
}

/// What the crash observer shares with its driver.
struct MomentSlot {
    bounds: Bounds,
    moment: Option<Moment>,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("step", &self.step)
            .field("data_dir", &self.config.data_dir)
            .finish_non_exhaustive()
    }
}

/// The cluster configuration a recording header asks for, in `data_dir`.
pub fn config_for(header: &Header, data_dir: &Path) -> Result<MiniKafkaConfig> {
    let rules: Rules = header.rules.parse().map_err(SessionError::Rules)?;
    let mut config = MiniKafkaConfig::new(data_dir)
        .with_brokers(header.cluster.brokers.iter().copied())
        .with_rules(rules);
    let c = &header.cluster.config;
    if let Some(v) = c.min_insync_replicas {
        config.min_insync_replicas = v;
    }
    if let Some(v) = c.replica_lag_time_ms {
        config.replica_lag_time_ms = v;
    }
    if let Some(v) = c.replica_lag_max_offsets {
        config.replica_lag_max_offsets = v;
    }
    if let Some(v) = c.segment_max_bytes {
        config.segment_max_bytes = v;
    }
    if let Some(v) = c.transaction_timeout_ms {
        config.transaction_timeout_ms = v;
    }
    if let Some(v) = c.group_session_timeout_ms {
        config.group_session_timeout_ms = v;
    }
    if let Some(v) = c.isr_evaluation {
        config.rules.isr_by_clock = v == crate::session::recording::IsrEvaluationSpec::ByClock;
    }
    if let Some(e) =
        crate::session::recording::transaction_version_error(c.transaction_version, rules)
    {
        return Err(SessionError::Rules(e));
    }
    if let Some(v) = c
        .transaction_version
        .and_then(|n| TransactionVersion::from_number(n.into()))
    {
        config.rules.transaction_version = v;
    }
    Ok(config)
}

impl Driver {
    /// The cluster of `header` at step 0: opened in `data_dir` (which must be
    /// empty or absent) or in a fresh temporary directory, with the header's
    /// topics created.
    pub fn new(header: &Header, data_dir: Option<&Path>) -> Result<Self> {
        // A header that did not come through `Recording::parse` (the demo,
        // a test, the live dashboard) is held to the same caps.
        limits::check_cluster(&header.cluster)?;
        let (dir, temp) = data_dir::fresh(data_dir)?;
        let mut config = config_for(header, &dir)?;
        // A private temporary directory is deleted at exit: no power loss
        // can reach it, so its writes skip fsync (P5).
        config.sync_writes = temp.is_none();
        let clock = ManualClock::new();
        let cluster = BrokerCluster::open(config.clone(), clock.clone())?;
        for (i, t) in header.cluster.topics.iter().enumerate() {
            cluster
                .create_topic(&t.name, t.partitions, t.replication_factor)
                .map_err(|e| FieldError::new(format!("cluster.topics[{i}]"), e.to_string()))?;
        }
        let rules: Rules = header.rules.parse().map_err(SessionError::Rules)?;
        let mut driver = Self::assemble(cluster, clock, config, header.rules.clone(), temp);
        if data_dir.is_some() {
            let file = ClusterFile::of(&driver.config, rules, 0);
            file.write(&driver.config.data_dir, driver.config.sync_writes)?;
            driver.keep(file, true);
        }
        Ok(driver)
    }

    /// Starts keeping `cluster.json` as `file` says (`written`: it is on
    /// disk already).
    fn keep(&mut self, file: ClusterFile, written: bool) {
        self.keeper = Some(Keeper {
            dir: self.config.data_dir.clone(),
            file,
            written,
            sync: self.config.sync_writes,
            clock: self.clock.clone(),
        });
    }

    /// The configuration, rules and clock to open `dir` with: what its
    /// `cluster.json` remembers (`given` rules that contradict it are
    /// refused, naming both), or for a directory without one (made by the
    /// book's code or an older mk-tui) the `given` rules (else the book's),
    /// the default configuration on the brokers found in it, and the clock
    /// at 0. Reads only: nothing is written before the open succeeds.
    fn how_to_open(
        dir: &Path,
        given: Option<Rules>,
    ) -> Result<(MiniKafkaConfig, Rules, ClusterFile, bool)> {
        match ClusterFile::read(dir)? {
            Some(file) => {
                file.check_given(dir, given)?;
                let mut config = file.config(dir)?;
                // A broker the directory holds that the file does not name
                // (a replica the book's code added) still opens.
                for id in data_dir::brokers_in(dir)? {
                    if !config.broker_ids.contains(&id) && dir.join(format!("broker-{id}")).exists()
                    {
                        config.broker_ids.push(id);
                    }
                }
                let rules = file.rules_parsed()?;
                Ok((config, rules, file, false))
            }
            None => {
                let rules = given.unwrap_or_default();
                let config = MiniKafkaConfig::new(dir)
                    .with_brokers(data_dir::brokers_in(dir)?)
                    .with_rules(rules);
                let file = ClusterFile::of(&config, rules, 0);
                Ok((config, rules, file, true))
            }
        }
    }

    /// The driver of an existing data directory, opened in place (recovery
    /// runs and may repair it): `mk-tui --data-dir DIR` run again. It opens
    /// as its `cluster.json` remembers it (rules, configuration, clock);
    /// `rules`, when given, must agree (see [`Self::how_to_open`]). A
    /// directory without the file gets one, once the open succeeded.
    pub fn open_in_place(dir: &Path, rules: impl Into<Option<Rules>>) -> Result<Self> {
        let (config, rules, file, missing) = Self::how_to_open(dir, rules.into())?;
        let clock = ManualClock::at(file.clock_ms);
        let cluster = BrokerCluster::open(config.clone(), clock.clone())?;
        let mut driver = Self::assemble(cluster, clock, config, rules.name().to_string(), None);
        driver.last_recovery = Some(driver.cluster.last_recovery());
        driver.keep(file, !missing);
        if missing {
            // Best effort: a read-only directory still opens (its first
            // write fails as an error event), and the file is written at
            // the next save.
            let _ = driver.keeper.as_mut().map(Keeper::save_clock);
        }
        Ok(driver)
    }

    /// The driver of an existing data directory, opened on a private copy so
    /// the directory itself is not changed (SPEC §5 `state --data-dir`).
    /// It opens as [`Self::open_in_place`] would (the copy's `cluster.json`,
    /// or the given rules and the brokers in the directory).
    pub fn open_copy(dir: &Path, rules: impl Into<Option<Rules>>) -> Result<Self> {
        let given = rules.into();
        let temp = data_dir::private_copy(dir)?;
        let in_dir = |e: SessionError| e.of_copy(temp.path(), dir);
        let (mut config, rules, file, _) = Self::how_to_open(temp.path(), given).map_err(in_dir)?;
        // A private copy, deleted at exit (see `Self::new`).
        config.sync_writes = false;
        let clock = ManualClock::at(file.clock_ms);
        let cluster =
            BrokerCluster::open(config.clone(), clock.clone()).map_err(|e| in_dir(e.into()))?;
        let mut driver =
            Self::assemble(cluster, clock, config, rules.name().to_string(), Some(temp));
        driver.last_recovery = Some(driver.cluster.last_recovery());
        Ok(driver)
    }

    fn assemble(
        cluster: BrokerCluster,
        clock: ManualClock,
        config: MiniKafkaConfig,
        rules: String,
        temp: Option<tempfile::TempDir>,
    ) -> Self {
        let tasks = Tasks::new();
        let moments = Arc::new(Mutex::new(MomentSlot {
            bounds: MOMENT_FRAME,
            moment: None,
        }));
        let slot = moments.clone();
        // Every crash path of the engine calls this at the crash's instant,
        // under the cluster's lock and before recovery: it only reads.
        cluster.set_crash_observer(Some(Arc::new(move |state, now, torn| {
            let mut slot = slot
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            slot.moment = Some(build::moment(state, now, torn, &slot.bounds));
        })));
        Self {
            keeper: None,
            tasks,
            clock,
            cluster,
            config,
            rules,
            _temp: temp,
            step: 0,
            producers: BTreeMap::new(),
            members: BTreeMap::new(),
            told: None,
            txn_refs: Arc::default(),
            txn_locks: BTreeMap::new(),
            ops: Vec::new(),
            events: History::new(),
            errors: History::new(),
            appended: std::collections::VecDeque::new(),
            last_recovery: None,
            own_outcome: None,
            crashed_in_step: None,
            recovered_zh: None,
            last_said: Said::default(),
            moments,
            last_moment: None,
            hw_checkpoint_interval_ms: None,
            hw_checkpoint_at_ms: 0,
            heads: HeadCache::default(),
        }
    }

    /// The moment of death of the current step: what was on disk at the
    /// instant it crashed the cluster, before recovery (None for a step
    /// that did not crash it).
    pub fn last_moment(&self) -> Option<&Moment> {
        self.last_moment.as_ref()
    }

    /// How much a moment of death reads (default: a frame's, with values;
    /// `mk-tui state` asks for [`Bounds::FULL`]).
    pub fn set_moment_bounds(&mut self, bounds: Bounds) {
        self.moments
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .bounds = bounds;
    }

    /// The number of actions applied.
    pub fn step(&self) -> usize {
        self.step
    }

    /// The cluster.
    pub fn cluster(&self) -> &BrokerCluster {
        &self.cluster
    }

    /// The batch heads frames drew, kept between frames
    /// (`snapshot/heads.rs`).
    pub fn heads(&self) -> &HeadCache {
        &self.heads
    }

    /// The clock's time.
    pub fn clock_ms(&self) -> u64 {
        crate::engine::Clock::now_ms(&self.clock)
    }

    /// The rule set's name.
    pub fn rules(&self) -> &str {
        &self.rules
    }

    /// `mk-tui serve`: ties the engine clock to the wall clock at the Unix
    /// time `unix_now_ms`. Serve's engine clock is the wall clock's time
    /// since an origin (the Unix time of the engine's 0), which
    /// `cluster.json` keeps: reopened, the clock owes the time the server
    /// was down, so it stands where it would have had the server kept
    /// running (and LogAppendTime stamps keep their Unix times). It never
    /// goes back: a clock already past that (moved by the dashboard, or a
    /// wall clock set back) stays, and the origin moves instead. Returns
    /// the origin, written to `cluster.json` before serving starts, and
    /// the milliseconds owed; serve then moves the clock to the Unix time
    /// minus the origin at every step (`kafka::clock::RealTime::from_wall`),
    /// the time owed first, as `advance_clock` steps.
    pub fn follow_wall_clock(&mut self, unix_now_ms: i64) -> Result<(i64, u64)> {
        let clock = i64::try_from(self.clock_ms()).unwrap_or(i64::MAX);
        let stored = self.keeper.as_ref().and_then(|k| k.file.unix_origin_ms);
        let owed = stored.map_or(0, |origin| {
            unix_now_ms
                .saturating_sub(origin)
                .saturating_sub(clock)
                .max(0)
        });
        // The clock's cap (docs/recording-format.md, "Limits").
        let room = limits::MAX_CLOCK_MS.saturating_sub(self.clock_ms());
        let owed = u64::try_from(owed).unwrap_or(0).min(room);
        let origin = unix_now_ms
            .saturating_sub(clock)
            .saturating_sub(i64::try_from(owed).unwrap_or(0));
        let now = self.clock_ms();
        if let Some(k) = &mut self.keeper
            && (!k.written || k.file.unix_origin_ms != Some(origin))
        {
            let mut file = k.file.clone();
            file.unix_origin_ms = Some(origin);
            file.clock_ms = now;
            file.write(&k.dir, k.sync)?;
            k.file = file;
            k.written = true;
        }
        Ok((origin, owed))
    }

    /// Whether the data directory is the driver's own temporary one (deleted
    /// with it): such a session can be rebuilt elsewhere (undo) without
    /// touching anything a user keeps.
    pub fn is_private(&self) -> bool {
        self._temp.is_some()
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.config.data_dir
    }

    /// Events so far, oldest first.
    /// The last step's outcome in words ("replicate: ok", "commit:
    /// error: …", a crash's recovery), in English and Chinese: the English
    /// is the text of its [`Outcome`] for the status line.
    pub fn last_said(&self) -> &Said {
        &self.last_said
    }

    pub fn events(&self) -> &History<Event> {
        &self.events
    }

    /// Failed actions so far, oldest first.
    pub fn errors(&self) -> &History<ErrorEvent> {
        &self.errors
    }

    /// Where the batch of the `produce` of `step` landed, once it
    /// finished well: its offsets (none for acks=0), and whether it was an
    /// exact retry answered with the original's (E7). Kept for the latest
    /// produces only; a served client reads it as its step finishes.
    pub fn appended(&self, step: usize) -> Option<AppendResult> {
        self.appended
            .iter()
            .rev()
            .find(|(s, _)| *s == step)
            .map(|(_, r)| *r)
    }

    /// The original offsets a duplicate produce or send of `step` was
    /// answered with.
    fn own_duplicate(&self, step: usize) -> Option<(i64, i64)> {
        self.appended(step)
            .filter(|r| r.duplicate)
            .and_then(|r| r.offsets)
    }

    /// Where the batch of the pending `produce` of `step` lands: its
    /// partition and first offset (for an exact retry, its original's).
    pub fn lands_at(&self, step: usize) -> Option<(TopicPartition, i64)> {
        self.ops
            .iter()
            .find(|op| op.step == step)
            .and_then(|op| op.appended.clone())
    }

    /// The named producers, by name: their sequences and accumulators.
    pub fn producers(&self) -> &BTreeMap<String, Producer> {
        &self.producers
    }

    /// What the last crash or tear's recovery did, if one happened.
    pub fn last_recovery(&self) -> Option<&RecoveryReport> {
        self.last_recovery.as_ref()
    }

    /// Operations still pending, and the replicas each waits for.
    pub fn pending(&self) -> Vec<PendingView> {
        let appends = self.cluster.with_state(|s| s.pending_appends());
        self.ops
            .iter()
            .map(|op| {
                // The batches this operation waits on: its own append, or
                // its transaction's writes and markers awaiting acks.
                let batches: Vec<(TopicPartition, i64)> = match (&op.appended, &op.txn) {
                    (Some(appended), _) => vec![appended.clone()],
                    (None, Some(txn)) => self.cluster.with_state(|s| {
                        let c = s.transactions();
                        let mut b = c.pending_sends_of(txn);
                        if matches!(op.kind, "commit" | "abort") {
                            b.extend(c.markers_of(txn));
                        }
                        b
                    }),
                    (None, None) => Vec::new(),
                };
                let mut waiting_for: Vec<BrokerId> = appends
                    .iter()
                    .filter(|a| {
                        batches
                            .iter()
                            .any(|(tp, o)| *tp == a.tp && *o == a.base_offset)
                    })
                    .flat_map(|a| a.waiting_for.iter().copied())
                    .collect();
                waiting_for.sort_unstable();
                waiting_for.dedup();
                let queued_behind = self
                    .ops
                    .iter()
                    .take_while(|o| o.step < op.step)
                    .filter(|o| o.txn.is_some() && o.txn == op.txn)
                    .map(|o| o.step)
                    .last();
                let waiting_for = if queued_behind.is_some() {
                    Vec::new()
                } else {
                    waiting_for
                };
                PendingView {
                    action_step: op.step,
                    kind: op.kind,
                    txn: op.txn.clone(),
                    waiting_for,
                    queued_behind,
                    batches,
                    crash_after: op.cut.map(CutPoint::name),
                }
            })
            .collect()
    }

    /// Applies one action, runs its work to quiescence, and returns how it
    /// ended. A failed action is an error event, never a panic; an invalid
    /// one (see [`Self::refuse`]) changes nothing.
    pub fn apply(&mut self, action: &Action) -> Outcome {
        self.step += 1;
        let step = self.step;
        self.crashed_in_step = None;
        self.recovered_zh = None;
        self.last_moment = None;
        self.told = None;
        let generation_before = self.cluster.generation();
        let outcome = match self.refuse(action).and_then(|()| self.start(action)) {
            Err(e) => Outcome::Error(e),
            Ok(Started::Done) => Outcome::Ok,
            Ok(Started::Recovered(said)) => {
                self.recovered_zh = Some(said.zh);
                Outcome::Recovered(said.en)
            }
            Ok(Started::Pending(op)) => {
                self.ops.push(op);
                Outcome::Pending
            }
            Ok(Started::Batched(batched)) => {
                self.told = join_told(self.told.take(), Some(batched.told));
                if batched.ops.is_empty() {
                    Outcome::Ok
                } else {
                    self.ops.extend(batched.ops);
                    Outcome::Pending
                }
            }
        };
        self.quiesce();
        self.forget_members_if_crashed(generation_before);
        self.drop_accumulated_if_crashed(generation_before);
        let outcome = match outcome {
            Outcome::Pending => self.take_own_result(step),
            other => other,
        };
        // The HW checkpoint is written once per step (see
        // `BrokerCluster::flush`), so the directory on disk matches the step.
        // A private temporary directory (deleted with the driver) is read
        // only through `copy_data_dir` and a crash, which flush first.
        let due = self
            .hw_checkpoint_interval_ms
            .is_none_or(|every| self.clock_ms().saturating_sub(self.hw_checkpoint_at_ms) >= every);
        let flushed = if self._temp.is_some() || !due {
            Ok(())
        } else {
            self.hw_checkpoint_at_ms = self.clock_ms();
            // The clock goes to `cluster.json` as often as the HW to its
            // checkpoint: after a step that moved it (serve: every 5 s).
            let saved = match &mut self.keeper {
                Some(k) => k.save_clock(),
                None => Ok(()),
            };
            self.cluster.flush().and(saved)
        };
        let outcome = match (outcome, flushed) {
            (Outcome::Error(e), _) => Outcome::Error(e),
            (_, Err(e)) => Outcome::Error(e.into()),
            (outcome, Ok(())) => outcome,
        };
        if let Outcome::Error(e) = &outcome {
            self.errors.push(ErrorEvent {
                step,
                message: e.to_string(),
                code: e.code(),
                zh: crate::session::error_zh::action_error_zh(e),
            });
        }
        let recovered = match &outcome {
            Outcome::Recovered(text) => Some(Said::new(
                text.clone(),
                self.recovered_zh.clone().unwrap_or_default(),
            )),
            _ => None,
        };
        let told = self.told.take();
        let end = match (&outcome, &recovered) {
            (Outcome::Error(e), _) => StepEnd::Error(e),
            (_, Some(told)) => StepEnd::Recovered(told),
            (Outcome::Ok, _) => match (self.own_duplicate(step), &told) {
                (Some((first, last)), _) => StepEnd::Duplicate { first, last },
                (None, Some(told)) => StepEnd::OkTold(told),
                (None, None) => StepEnd::Ok,
            },
            _ => StepEnd::Pending,
        };
        let said = narrate::step(action, end);
        // A `ui` step changed the screen, not the cluster: it is a step
        // (its number is the replay's) but no event, so it does not push
        // what the cluster did out of the Events pane (a new user's
        // trial: `step 36: ui: ok` … `step 39: ui: ok`).
        if !matches!(action, Action::Ui(_)) {
            self.events.push(Event::new(step, said.clone()));
        }
        self.last_moment = self
            .moments
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .moment
            .take();
        // A step whose own action went well while an earlier commit or abort
        // crashed at its cut point is a crash too, for the status line.
        match (outcome, self.crashed_in_step.take()) {
            (Outcome::Ok, Some(crash)) => {
                self.last_said = narrate::step(action, StepEnd::OkThenCrash(&crash));
                Outcome::Recovered(self.last_said.en.clone())
            }
            (outcome, _) => {
                self.last_said = said;
                outcome
            }
        }
    }

    /// Whether [`Self::apply`] would refuse `action` as invalid: fields that
    /// do not go together ([`Action::check`]), or the limits of
    /// docs/recording-format.md, which a recording's steps were checked
    /// against when it was read but a live session's were not. The live
    /// dashboard asks first, so that it records only actions a replay of
    /// its recording can read; `apply` refuses them anyway (an error event
    /// that changes nothing in the cluster).
    pub fn refuse(&self, action: &Action) -> Result<(), ActionError> {
        action.check()?;
        limits::check_action(action)?;
        if matches!(
            action,
            Action::CreateTopic { .. }
                | Action::CreatePartitions { .. }
                | Action::AdvanceClock { .. }
        ) {
            self.budget_used().spend(action)?;
        }
        Ok(())
    }

    /// What this cluster has used of the limits that add up.
    fn budget_used(&self) -> limits::Budget {
        let (topics, replicas, shapes) = self.cluster.with_state(|s| {
            let topics = s.metadata().topics();
            let replicas = topics
                .values()
                .flat_map(|t| t.partitions())
                .map(|(_, p)| p.replicas.len() as u64)
                .sum();
            // Each topic's count and replication factor, for a growth's
            // new replicas.
            let shapes = topics
                .iter()
                .map(|(name, t)| {
                    let factor = t.partitions().first().map_or(1, |(_, p)| p.replicas.len());
                    (name.clone(), (t.partitions.len() as u32, factor as u32))
                })
                .collect();
            (topics.len(), replicas, shapes)
        });
        limits::Budget {
            topics,
            replicas,
            clock_ms: self.clock_ms(),
            shapes,
        }
    }

    /// Whether recovery re-sends missing markers under this cluster's rules
    /// (kafka: yes; the book: no).
    fn resends_markers(&self) -> bool {
        self.config.rules.resend_markers_on_recovery
    }

    /// Starts an action: synchronous ones finish here; those that wait come
    /// back as a pending operation.
    fn start(&mut self, action: &Action) -> Result<Started, ActionError> {
        let err = ActionError::from;
        match action {
            Action::CreateTopic {
                name,
                partitions,
                replication_factor,
                timestamp_type,
                config,
            } => self
                .cluster
                .create_topic_configured(
                    name,
                    *partitions,
                    *replication_factor,
                    *timestamp_type,
                    *config,
                )
                .map_err(err)?,
            Action::CreatePartitions { topic, count } => {
                let from = self.cluster.create_partitions(topic, *count).map_err(err)?;
                self.told = Some(narrate::grown(topic, from, *count));
            }
            Action::DeleteTopic { name } => {
                let gone = self.cluster.delete_topic(name).map_err(err)?;
                self.told = Some(narrate::deleted_topic(name, &gone));
            }
            Action::Produce {
                topic,
                partition,
                key,
                value,
                records,
                acks,
                producer,
                wire,
            } => {
                return self
                    .produce(
                        topic,
                        *partition,
                        to_records(&payload_records(key, value, records)),
                        acks.unwrap_or_default(),
                        producer.as_deref(),
                        *wire,
                    )
                    .map(Started::Pending);
            }
            Action::Begin { .. }
            | Action::Send { .. }
            | Action::LateSend { .. }
            | Action::SendOffsets { .. }
            | Action::Commit { .. }
            | Action::Abort { .. } => {
                return self.start_txn_op(action).map(Started::Pending);
            }
            Action::CommitOffsets { group, offsets } => {
                let topics = self.cluster.topics();
                let mut commit = crate::engine::consumer::offsets::GroupOffsets::new();
                for o in offsets {
                    let known = topics
                        .iter()
                        .any(|(t, n)| *t == o.topic && o.partition < *n);
                    if !known {
                        return Err(err(MiniKafkaError::UnknownTopicOrPartition(format!(
                            "{}-{}",
                            o.topic, o.partition
                        ))));
                    }
                    commit.insert(TopicPartition::new(&o.topic, o.partition), o.offset);
                }
                self.cluster
                    .offsets()
                    .commit_many(group, &commit)
                    .map_err(err)?;
            }
            Action::Replicate {
                broker,
                topic,
                partition,
            } => {
                match (broker, topic, partition) {
                    (None, None, None) => self.cluster.replicate_all_once(),
                    (Some(b), None, None) => self.cluster.replicate_broker(*b),
                    (None, Some(t), Some(p)) => self
                        .cluster
                        .replicate_partition(&TopicPartition::new(t, *p)),
                    (Some(b), Some(t), Some(p)) => self
                        .cluster
                        .replica_set(&TopicPartition::new(t, *p))
                        .and_then(|s| s.replicate_follower(*b)),
                    _ => {
                        return Err(FieldError::new(
                            "action.replicate",
                            "give topic and partition together",
                        )
                        .into());
                    }
                }
                .map_err(err)?;
            }
            Action::AdvanceClock { ms } => {
                self.clock.advance(*ms);
                self.cluster.tick().map_err(err)?;
                self.told = self.expire_members()?;
                if let Some(batched) = self.run_lingers() {
                    return Ok(Started::Batched(batched));
                }
            }
            Action::Accumulate {
                producer,
                topic,
                partition,
                key,
                value,
                acks,
                batch_size,
                linger_ms,
                max_buffer_bytes,
            } => {
                let settings = batching::Batching {
                    acks: *acks,
                    batch_size: *batch_size,
                    linger_ms: *linger_ms,
                    max_buffer_bytes: *max_buffer_bytes,
                };
                let batched = self.run_accumulate(
                    producer,
                    topic,
                    *partition,
                    key.as_deref(),
                    value,
                    settings,
                )?;
                return Ok(Started::Batched(batched));
            }
            Action::Flush { producer } => {
                return Ok(Started::Batched(self.run_flush(producer)?));
            }
            Action::JoinGroup { .. }
            | Action::LeaveGroup { .. }
            | Action::Heartbeat { .. }
            | Action::SyncGroup { .. }
            | Action::CommitGroupOffsets { .. }
            | Action::Poll { .. }
            | Action::DeleteGroup { .. }
            | Action::DeleteOffsets { .. } => self.told = Some(self.start_group(action)?),
            Action::Crash {} => {
                let report = self.cluster.crash().map_err(err)?;
                let text = narrate::crash(&report, self.resends_markers());
                self.last_recovery = Some(report);
                return Ok(Started::Recovered(text));
            }
            Action::Tear {
                target,
                cut_bytes,
                append_garbage,
            } => {
                let engine_target = match target {
                    TearTargetSpec::Journal => TearTarget::Journal,
                    TearTargetSpec::Log {
                        topic,
                        partition,
                        broker,
                    } => TearTarget::Log {
                        tp: TopicPartition::new(topic, *partition),
                        broker: *broker,
                    },
                };
                let tear = match (cut_bytes, append_garbage) {
                    (Some(n), None) => Tear::CutBytes(*n),
                    (None, Some(GarbageSpec::Default(true))) => Tear::default_garbage(),
                    (None, Some(GarbageSpec::Text(text))) => {
                        Tear::AppendGarbage(text.as_bytes().to_vec())
                    }
                    // Refused by `Action::check` before `start`.
                    _ => {
                        return Err(FieldError::new(
                            "action.tear",
                            "give exactly one of cut_bytes or append_garbage",
                        )
                        .into());
                    }
                };
                let (torn, report) = self.cluster.tear(&engine_target, &tear).map_err(err)?;
                let text = narrate::tear(target, &torn, &report, self.resends_markers());
                self.last_recovery = Some(report);
                return Ok(Started::Recovered(text));
            }
            Action::StopBroker { broker } => self.cluster.stop_broker(*broker).map_err(err)?,
            Action::StartBroker { broker } => self.cluster.start_broker(*broker).map_err(err)?,
            Action::Promote {
                topic,
                partition,
                broker,
            } => {
                self.cluster
                    .promote(&TopicPartition::new(topic, *partition), *broker)
                    .map_err(err)?;
            }
            Action::Retention {
                topic,
                partition,
                retention_ms,
                retention_bytes,
            } => {
                let end = self.run_retention(topic, *partition, *retention_ms, *retention_bytes)?;
                return Ok(self.cleanup_started(end));
            }
            Action::Compact {
                topic,
                partition,
                delete_retention_ms,
                crash_at,
            } => {
                let end = self.run_compact(topic, *partition, *delete_retention_ms, *crash_at)?;
                return Ok(self.cleanup_started(end));
            }
            Action::DeleteRecords {
                topic,
                partition,
                offset,
            } => {
                let end = self.run_delete_records(topic, *partition, *offset)?;
                return Ok(self.cleanup_started(end));
            }
            Action::AlterTopicConfig { topic, config } => {
                self.told = Some(self.alter_topic_config(topic, *config)?);
            }
            Action::Note {} | Action::Ui { .. } => {}
        }
        Ok(Started::Done)
    }

    /// A `retention` or `compact` step's end: its sentence, or a crash's
    /// recovery (`session/cleanup.rs`).
    fn cleanup_started(&mut self, end: crate::session::cleanup::CleanupEnd) -> Started {
        use crate::session::cleanup::CleanupEnd;
        match end {
            CleanupEnd::Told(said) => {
                self.told = Some(said);
                Started::Done
            }
            CleanupEnd::Recovered(said, report) => {
                self.last_recovery = Some(report);
                Started::Recovered(said)
            }
        }
    }

    /// Whether recovery re-sends markers (for a cleanup's crash sentence).
    pub(crate) fn resends_markers_now(&self) -> bool {
        self.resends_markers()
    }

    /// Appends one batch of `records` (one record, or a client's whole
    /// batch) to `partition`, else to the partition of the first record's
    /// key, else round-robin: as a named producer's, as a client's with
    /// its `wire` identity, or as a plain producer's.
    fn produce(
        &mut self,
        topic: &str,
        partition: Option<u32>,
        records: Vec<Record>,
        acks: AckMode,
        producer: Option<&str>,
        wire: Option<WireIdentity>,
    ) -> Result<PendingOp, ActionError> {
        let key = records.first().and_then(|r| r.key.as_deref());
        let tp = self.cluster.choose_partition(topic, partition, key)?;
        let batch = wire.map(|w| {
            RecordBatch::new(records.clone()).with_producer(
                w.producer_id,
                i32::from(w.epoch),
                w.base_sequence,
            )
        });
        // Where the batch lands, or for an exact retry where its original
        // did (what a pending acks=all retry waits on).
        let offset = self.cluster.with_state(|s| {
            s.partition(&tp).map_or(-1, |set| {
                let leader = set.leader();
                match batch
                    .as_ref()
                    .and_then(|b| leader.producer_state.check(&tp, b).ok())
                {
                    Some(SequenceCheck::Duplicate { base_offset, .. }) => base_offset,
                    _ => leader.leo(),
                }
            })
        });
        let future = match (batch, producer) {
            (Some(batch), _) => self.cluster.try_append(&tp, batch, acks, None)?,
            (None, Some(name)) => {
                let p = self.producer_named(name)?;
                p.set_acks(acks);
                p.send_records(&tp, records)?
            }
            (None, None) => self
                .cluster
                .try_append(&tp, RecordBatch::new(records), acks, None)?,
        };
        let task = self
            .tasks
            .spawn(async move { future.await.map(OpEnd::Appended) });
        Ok(PendingOp {
            step: self.step,
            kind: "produce",
            txn: None,
            cut: None,
            appended: Some((tp, offset)),
            task,
        })
    }

    fn start_txn_op(&mut self, action: &Action) -> Result<PendingOp, ActionError> {
        let txn = action
            .txn()
            .expect("transaction actions name one")
            .to_string();
        let action = match action {
            // Choose the partition now, in issue order: the round-robin cursor
            // follows the actions, and an
            // unknown topic is refused at once.
            Action::Send {
                txn,
                topic,
                partition,
                key,
                value,
                records,
                wire,
            } => {
                let first_key = payload(key, value, records).first().and_then(|(k, _)| *k);
                let tp = self
                    .cluster
                    .choose_partition(topic, *partition, first_key)?;
                Action::Send {
                    txn: txn.clone(),
                    topic: topic.clone(),
                    partition: Some(tp.partition),
                    key: key.clone(),
                    value: value.clone(),
                    records: records.clone(),
                    wire: *wire,
                }
            }
            other => other.clone(),
        };
        let cut = match &action {
            Action::Commit { crash_after, .. } | Action::Abort { crash_after, .. } => *crash_after,
            _ => None,
        };
        let txn_name = txn.clone();
        let lock = self.txn_locks.entry(txn.clone()).or_default().clone();
        let cluster = self.cluster.clone();
        let refs = self.txn_refs.clone();
        let kind = action.name();
        let generation = self.cluster.generation();
        let task = self.tasks.spawn(async move {
            let _turn = lock.lock_owned().await;
            // An action queued behind one that crashed the cluster (a cut
            // point) is a pending operation the crash drops.
            if cluster.generation() != generation {
                return Err(MiniKafkaError::Crashed);
            }
            run_txn_op(&cluster, &refs, &txn, action).await
        });
        Ok(PendingOp {
            step: self.step,
            kind,
            txn: Some(txn_name),
            cut,
            appended: None,
            task,
        })
    }

    /// Writes the HW checkpoint after a step only once the clock has moved
    /// `ms` since it was last written, as Kafka writes it every
    /// `replica.high.watermark.checkpoint.interval.ms` (5,000 by default),
    /// instead of after every step (`None`, the default). For `mk-tui
    /// serve`, where a client's requests are steps by the thousand and
    /// the clock follows real time: the file's atomic replace is most of
    /// a step's cost. A crash or tear still writes it first, and so does
    /// closing the cluster, so a recording replays the same either way;
    /// only a real kill of the process finds it up to `ms` behind, which
    /// lowers an HW until the followers fetch again and loses no record
    /// (docs/kafka-protocol.md).
    pub fn set_hw_checkpoint_interval(&mut self, ms: Option<u64>) {
        self.hw_checkpoint_interval_ms = ms;
        self.hw_checkpoint_at_ms = self.clock_ms();
    }

    /// The in-memory state a checkpoint keeps, if nothing is pending (a
    /// pending operation is a running task and cannot be copied).
    pub fn memo(&self) -> Option<DriverMemo> {
        if !self.ops.is_empty() {
            return None;
        }
        Some(DriverMemo {
            step: self.step,
            clock_ms: self.clock_ms(),
            cluster: self.cluster.memo()?,
            producers: self.producers.clone(),
            members: self.members.clone(),
            txn_refs: self
                .txn_refs
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
            events: self.events.clone(),
            errors: self.errors.clone(),
            last_recovery: self.last_recovery.clone(),
        })
    }

    /// Drops the driver on a background thread (closing its files, deleting
    /// its private temporary directory): a step back replaces the driver,
    /// and that work need not hold up the new frame. Join the handle before
    /// the process exits, or the directory may stay behind.
    pub fn dispose(self) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || drop(self))
    }

    /// Drops the driver but keeps its private temporary directory, with
    /// its files, for a later [`Self::restore`] to reuse (`None` for a
    /// driver on a user's data directory, which has none).
    /// Only when nothing else holds the cluster (every file is closed);
    /// otherwise the directory is deleted, as [`Self::dispose`] does.
    pub fn into_scratch(self) -> Option<tempfile::TempDir> {
        /// Drops everything but the cluster and the directory.
        fn split(driver: Driver) -> (BrokerCluster, Option<tempfile::TempDir>) {
            let Driver { cluster, _temp, .. } = driver;
            (cluster, _temp)
        }
        let (cluster, temp) = split(self);
        let closed = cluster.is_only_handle();
        drop(cluster);
        temp.filter(|_| closed)
    }

    /// Copies the data directory (without its lock file) into `dest`,
    /// hard-linking the files no one writes in place (`shared_files`).
    pub fn copy_data_dir(&self, dest: &Path) -> std::io::Result<CopyStats> {
        self.cluster.flush().map_err(std::io::Error::other)?;
        crate::engine::shared_files::copy_sharing(self.data_dir(), dest)
    }

    /// A driver rebuilt from a checkpoint: a copy of `checkpoint_dir` in a
    /// fresh temporary directory, and the memo taken with it. `copied` is
    /// what [`Self::copy_data_dir`] answered when the checkpoint was taken:
    /// the restore links the checkpoint's journal and cuts it back to the
    /// length it had then (`shared_files::restore_sharing`), so the driver
    /// this one replaces must not be used again, even if this fails.
    ///
    /// `reuse` is the directory of a driver already dropped
    /// ([`Self::into_scratch`]) to restore into instead of a fresh one: the
    /// copy then writes its private files over in place and keeps what
    /// is linked already (`shared_files::restore_sharing`), creating few
    /// inodes (issue 17 item 11: on this machine's ext4 a new inode is
    /// searched for past every recently deleted one, and a step back
    /// deleted and created a directory tree each time).
    pub fn restore(
        header: &Header,
        checkpoint_dir: &Path,
        memo: &DriverMemo,
        copied: &CopyStats,
        reuse: Option<tempfile::TempDir>,
    ) -> Result<Self> {
        let temp = match reuse {
            Some(temp) => temp,
            None => data_dir::scratch()?,
        };
        match copied.journal_len {
            Some(len) => {
                crate::engine::shared_files::restore_sharing(checkpoint_dir, temp.path(), len)
            }
            None => crate::engine::shared_files::copy_sharing(checkpoint_dir, temp.path()),
        }
        .map_err(|e| SessionError::os("cannot copy a checkpoint", e))?;
        let mut config = config_for(header, temp.path())?;
        config.sync_writes = false;
        let clock = ManualClock::at(memo.clock_ms);
        let cluster = BrokerCluster::restore(config.clone(), clock.clone(), &memo.cluster)?;
        let mut driver = Self::assemble(cluster, clock, config, header.rules.clone(), Some(temp));
        driver.step = memo.step;
        driver.producers = memo
            .producers
            .iter()
            .map(|(name, p)| (name.clone(), p.rebind(&driver.cluster)))
            .collect();
        driver.members = memo.members.clone();
        *driver
            .txn_refs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = memo.txn_refs.clone();
        driver.events = memo.events.clone();
        driver.errors = memo.errors.clone();
        driver.last_recovery = memo.last_recovery.clone();
        Ok(driver)
    }

    /// How this step's own operation ended: still pending, or what
    /// [`Self::finish`] recorded.
    fn take_own_result(&mut self, step: usize) -> Outcome {
        if self.ops.iter().any(|op| op.step == step) {
            return Outcome::Pending;
        }
        self.own_outcome.take().unwrap_or(Outcome::Ok)
    }

    /// Lets spawned work run until it can go no further.
    fn quiesce(&mut self) {
        self.tasks.settle();
        let ops = std::mem::take(&mut self.ops);
        for op in ops {
            if !op.task.is_finished() {
                self.ops.push(op);
                continue;
            }
            let result = self
                .tasks
                .join(op.task)
                .unwrap_or_else(|e| Err(MiniKafkaError::InvalidBatch(format!("task failed: {e}"))));
            let done = Done {
                step: op.step,
                kind: op.kind,
                txn: op.txn,
                cut: op.cut,
            };
            self.finish(done, result);
        }
    }

    /// Records the end of an operation of an earlier step (or of this one,
    /// which [`Self::take_own_result`] then reads back).
    fn finish(&mut self, op: Done, result: OpResult) {
        let own = op.step == self.step;
        match result {
            Ok(OpEnd::Appended(result)) => {
                if self.appended.len() == APPENDED_KEPT {
                    self.appended.pop_front();
                }
                self.appended.push_back((op.step, result));
                self.finish(op, Ok(OpEnd::Done));
            }
            // A step that sent several batches ends with the first error.
            Ok(OpEnd::Done) if own => {
                if !matches!(self.own_outcome, Some(Outcome::Error(_))) {
                    self.own_outcome = Some(Outcome::Ok);
                }
            }
            Ok(OpEnd::Done) => self
                .events
                .push(Event::new(self.step, narrate::completed(op.kind, op.step))),
            // Only a commit or abort that crashed at its cut point reports
            // a recovery.
            Ok(OpEnd::Crashed(report)) => {
                let text = narrate::cut_crash(
                    op.kind == "commit",
                    op.txn.as_deref().unwrap_or_default(),
                    op.cut.unwrap_or(CutPoint::Prepare),
                    (!own).then_some(op.step),
                    &report,
                    self.resends_markers(),
                );
                self.last_recovery = Some(report);
                if own {
                    self.recovered_zh = Some(text.zh);
                    self.own_outcome = Some(Outcome::Recovered(text.en));
                } else {
                    self.events.push(Event::new(self.step, text.clone()));
                    self.crashed_in_step = Some(text);
                }
            }
            Err(e) if own => {
                if !matches!(self.own_outcome, Some(Outcome::Error(_))) {
                    self.own_outcome = Some(Outcome::Error(e.into()));
                }
            }
            Err(e) => {
                self.events
                    .push(Event::new(self.step, narrate::failed(op.kind, op.step, &e)));
                self.errors.push(ErrorEvent {
                    step: op.step,
                    message: e.to_string(),
                    code: e.code(),
                    zh: crate::session::error_zh::error_zh(&e),
                });
            }
        }
    }
}

/// How [`Driver::start`] left an action.
enum Started {
    /// Finished at once.
    Done,
    /// Crashed the cluster on purpose; recovery ran (the sentence).
    Recovered(Said),
    /// Waiting: finishes at this step's quiescence or later.
    Pending(PendingOp),
    /// The accumulator's batches it sent (none, one or more), pending
    /// like a produce's, and what the step did.
    Batched(batching::Batched),
}

/// Two sentences of one step (a group expiry and a linger) as one.
fn join_told(first: Option<Said>, second: Option<Said>) -> Option<Said> {
    match (first, second) {
        (Some(a), Some(b)) => Some(Said::join(&[a, b], "; ", "；")),
        (a, b) => a.or(b),
    }
}

/// What [`Driver::finish`] needs of a finished operation.
struct Done {
    step: usize,
    kind: &'static str,
    txn: Option<String>,
    cut: Option<CutPoint>,
}

/// A commit or abort that crashed at its cut point reports the recovery.
fn end_outcome(outcome: EndOutcome) -> OpResult {
    Ok(match outcome {
        EndOutcome::Completed => OpEnd::Done,
        EndOutcome::Crashed(report) => OpEnd::Crashed(report),
    })
}

/// Runs one transaction action for the client of `txn`.
async fn run_txn_op(
    cluster: &BrokerCluster,
    refs: &TxnRefs,
    txn: &str,
    action: Action,
) -> OpResult {
    let manager = cluster.transactions();
    let handle = || -> Result<Transaction, MiniKafkaError> {
        let known = refs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(txn)
            .copied();
        match known {
            Some(instance) => Ok(Transaction::new(manager.clone(), txn, instance)),
            None => manager.resume(txn),
        }
    };
    match action {
        Action::Begin { init, .. } => {
            let tx = if init {
                manager.begin_new_producer(txn).await?
            } else {
                manager.begin(txn).await?
            };
            refs.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(txn.to_string(), tx.instance());
            Ok(OpEnd::Done)
        }
        Action::Send {
            topic,
            partition,
            key,
            value,
            records,
            wire,
            ..
        } => {
            let records = to_records(&payload_records(&key, &value, &records));
            let count = records.len() as i64;
            let wire = wire.map(|w| (w.producer_id, i32::from(w.epoch), w.base_sequence));
            let sent = handle()?
                .send_batch_as(&topic, partition, records, wire)
                .await?;
            Ok(OpEnd::Appended(AppendResult {
                offsets: Some((sent.base_offset, sent.base_offset + count - 1)),
                duplicate: sent.duplicate,
            }))
        }
        Action::LateSend {
            topic,
            partition,
            key,
            value,
            ..
        } => {
            let record = RecordSpec::new(key.map(Payload::from), value);
            let records = to_records(std::slice::from_ref(&record));
            let (_, offset) = manager.late_send(txn, &topic, partition, records)?;
            Ok(OpEnd::Appended(AppendResult {
                offsets: Some((offset, offset)),
                duplicate: false,
            }))
        }
        Action::SendOffsets { group, offsets, .. } => {
            let offsets = offsets
                .into_iter()
                .map(|o| (TopicPartition::new(o.topic, o.partition), o.offset));
            handle()?.send_offsets(&group, offsets).await?;
            Ok(OpEnd::Done)
        }
        Action::Commit { crash_after, .. } => {
            end_outcome(handle()?.commit_until(crash_after).await?)
        }
        Action::Abort { crash_after, .. } => end_outcome(handle()?.abort_until(crash_after).await?),
        _ => Ok(OpEnd::Done),
    }
}

/// The engine's records of an action's payload (`key`/`value` or
/// `records`), in order. Their keys, values and header values are copied
/// into one buffer that the records slice: one allocation a batch, and one
/// `free` when the engine drops it (docs/performance.md, P3).
fn to_records(payload: &[RecordSpec]) -> Vec<Record> {
    let mut buffer = Vec::with_capacity(
        payload
            .iter()
            .map(|r| {
                r.key.as_ref().map_or(0, Payload::len)
                    + r.value.len()
                    + r.headers
                        .iter()
                        .map(|h| h.value.as_ref().map_or(0, Payload::len))
                        .sum::<usize>()
            })
            .sum(),
    );
    let mut span = |bytes: &Payload| {
        let start = buffer.len();
        buffer.extend_from_slice(bytes.as_bytes());
        start..buffer.len()
    };
    let spans: Vec<_> = payload
        .iter()
        .map(|r| {
            let key = r.key.as_ref().map(&mut span);
            let value = (!r.tombstone).then(|| span(&r.value));
            let headers: Vec<_> = r
                .headers
                .iter()
                .map(|h| h.value.as_ref().map(&mut span))
                .collect();
            (key, value, headers)
        })
        .collect();
    let shared = Bytes::from(buffer);
    let slice = |range: Option<std::ops::Range<usize>>| range.map(|r| shared.slice(r));
    payload
        .iter()
        .zip(spans)
        .map(|(r, (key, value, headers))| Record {
            key: slice(key),
            value: slice(value),
            timestamp_ms: r.timestamp_ms.unwrap_or(0),
            headers: r
                .headers
                .iter()
                .zip(headers)
                .map(|(h, value)| crate::engine::Header {
                    key: h.key.clone(),
                    value: slice(value),
                })
                .collect(),
            ..Record::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::action::HeaderSpec;

    #[test]
    fn an_actions_records_keep_their_fields_and_slice_one_buffer() {
        let tombstone = RecordSpec {
            tombstone: true,
            ..RecordSpec::new(Some("k2".into()), "")
        };
        let with_header = RecordSpec {
            headers: vec![
                HeaderSpec {
                    key: "h".into(),
                    value: Some("x".into()),
                },
                HeaderSpec {
                    key: "null".into(),
                    value: None,
                },
            ],
            timestamp_ms: Some(7),
            ..RecordSpec::new(Some("k1".into()), "v1")
        };
        let records = to_records(&[with_header, tombstone, RecordSpec::new(None, "v3")]);
        fn text(b: &Option<Bytes>) -> Option<&str> {
            b.as_deref().map(|b| std::str::from_utf8(b).unwrap())
        }
        let fields: Vec<_> = records
            .iter()
            .map(|r| (text(&r.key), text(&r.value), r.timestamp_ms))
            .collect();
        assert_eq!(
            fields,
            [
                (Some("k1"), Some("v1"), 7),
                (Some("k2"), None, 0),
                (None, Some("v3"), 0)
            ]
        );
        let headers: Vec<_> = records[0]
            .headers
            .iter()
            .map(|h| (h.key.as_str(), text(&h.value)))
            .collect();
        assert_eq!(headers, [("h", Some("x")), ("null", None)]);
        // One buffer: "k1" "v1" "x" "k2" "v3", each slice right after the last.
        let slices = [
            &records[0].key,
            &records[0].value,
            &records[0].headers[0].value,
            &records[1].key,
            &records[2].value,
        ];
        let start = slices[0].as_ref().unwrap().as_ptr();
        let mut at = 0;
        for slice in slices {
            let slice = slice.as_ref().unwrap();
            assert_eq!(slice.as_ptr(), start.wrapping_add(at));
            at += slice.len();
        }
    }
}
