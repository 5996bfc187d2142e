//! The driver thread (SPEC §2): one thread owns the [`Driver`] and handles
//! every request, one at a time, in arrival order. Connections send it
//! [`Command`]s over a channel and await a oneshot reply; the network runtime
//! never touches the engine.
//!
//! Every change to the engine is an [`Action`] applied by the driver: the
//! requests' `create_topic` and `produce`, and the server's own
//! `advance_clock` (real time, see [`RealTime`]) and `replicate` (every
//! `--auto-replicate` ms). An `acks=all` produce that stays pending is
//! answered when the driver reports its steps finished, or with
//! REQUEST_TIMED_OUT at the request's timeout, as a broker does.
//!
//! The driver is borrowed, not owned: `mk-tui serve` keeps it on its own
//! thread ([`run`]), the dashboard with `--listen` keeps it in its live
//! session ([`crate::kafka::live`]), and both hand it to a [`Worker`] for
//! each request. Every action applied is told to a [`Steps`], which
//! records it (`--record`), so a served session replays without clients.
//!
//! A request whose answer waits for the driver over several steps (a
//! transactional produce, an EndTxn whose markers wait for replication) is
//! a [`Continue`], polled after every action and on every timer tick. A
//! fetch that waits for data is not polled: it is asked again only when a
//! partition it names changes ([`Fetches`]), or at its deadline.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kafka_protocol::messages::{RequestKind, ResponseKind};
use tokio::sync::oneshot;

use crate::engine::TopicPartition;
use crate::engine::config::BrokerId;
use crate::engine::transaction::TransactionState;
use crate::kafka::broker::{
    Advertised, Answer, AppendResult, Broker, ClusterState, Continue, FetchWait, Handled, IdError,
    MAX_FETCH_WAIT, Request, WaitingProduce,
};
use crate::kafka::cleaner;
use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, code_of_name, name_of};
use crate::kafka::fault::{self, Dropping, Fault, Faults};
use crate::kafka::groups::Groups;
use crate::kafka::handlers::{self, fetch};
use crate::kafka::held::{Held, Reply};
use crate::kafka::producer_ids::ProducerIds;
use crate::kafka::producers::ProducerTable;
use crate::kafka::registry::Registry;
use crate::kafka::steps;
use crate::session::driver::PendingView;
use crate::session::listeners::Steps;
use crate::session::recording::Caption;
use crate::session::snapshot::ClientSnapshot;
use crate::session::{Action, ActionError, Driver, Outcome};

/// What a connection asks of the driver thread.
#[derive(Debug)]
pub enum Command {
    /// A request, whom to answer, and its share of the connections'
    /// read budget, given back once the request is handled.
    Request(
        Box<Request>,
        oneshot::Sender<Answer>,
        crate::kafka::codec::Room,
    ),
    Shutdown,
}

/// A waiting fetch and whom to answer.
#[derive(Debug)]
struct WaitingFetch {
    wait: FetchWait,
    deadline: Instant,
    partitions: Vec<TopicPartition>,
    reply: Reply,
}

/// The fetches that wait for data (a consumer's long poll, `min_bytes`
/// and `max_wait_ms`). A waiting fetch costs nothing while nothing
/// happens: after each step, only the partitions some fetch waits on are
/// looked at ([`fetch::watched`]: leader, HW, LSO, log start and end), and
/// only the fetches on a partition that changed are asked again; the
/// others sleep until their deadline. (They were asked again every 20 ms:
/// 3,000 waiting fetches cost 60-92% of a core, issue 25.)
#[derive(Debug, Default)]
struct Fetches {
    next: u64,
    waiting: BTreeMap<u64, WaitingFetch>,
    by_deadline: BTreeSet<(Instant, u64)>,
    /// Each partition a fetch waits on: what it was when last looked at,
    /// and the fetches waiting on it.
    watched: BTreeMap<TopicPartition, (fetch::Watched, BTreeSet<u64>)>,
    /// A step someone else applied (a key): look at the partitions at the
    /// next timer, which is then due at once.
    recheck: bool,
}

impl Fetches {
    fn insert(&mut self, driver: &Driver, w: WaitingFetch) {
        let id = self.next;
        self.next += 1;
        driver.cluster().with_state(|s| {
            for tp in &w.partitions {
                self.watched
                    .entry(tp.clone())
                    .or_insert_with(|| (fetch::watched(s, tp), BTreeSet::new()))
                    .1
                    .insert(id);
            }
        });
        self.by_deadline.insert((w.deadline, id));
        self.waiting.insert(id, w);
    }

    fn remove(&mut self, id: u64) -> Option<WaitingFetch> {
        let w = self.waiting.remove(&id)?;
        self.by_deadline.remove(&(w.deadline, id));
        for tp in &w.partitions {
            if let Some((_, ids)) = self.watched.get_mut(tp) {
                ids.remove(&id);
                if ids.is_empty() {
                    self.watched.remove(tp);
                }
            }
        }
        Some(w)
    }

    /// The fetches waiting on a partition that changed since last looked
    /// at (now remembered as it is).
    fn changed(&mut self, driver: &Driver) -> BTreeSet<u64> {
        let mut woken = BTreeSet::new();
        if self.watched.is_empty() {
            return woken;
        }
        driver.cluster().with_state(|s| {
            for (tp, (seen, ids)) in &mut self.watched {
                let now = fetch::watched(s, tp);
                if now != *seen {
                    *seen = now;
                    woken.extend(ids.iter().copied());
                }
            }
        });
        woken
    }

    /// The fetches whose deadline passed.
    fn due(&self, now: Instant) -> Vec<u64> {
        self.by_deadline
            .iter()
            .take_while(|(at, _)| *at <= now)
            .map(|(_, id)| *id)
            .collect()
    }
}

/// A continuing request and whom to answer.
#[derive(Debug)]
struct Continuing {
    work: Box<dyn Continue>,
    reply: Reply,
}

/// The brokers whose listeners are closed (stopped in the engine): the
/// network side watches it and closes or reopens each broker's listener.
pub type Gates = tokio::sync::watch::Sender<BTreeSet<BrokerId>>;

/// An `acks=all` produce waiting for its appends, and whom to answer.
#[derive(Debug)]
struct Waiting {
    produce: WaitingProduce,
    started: Instant,
    reply: Reply,
    /// The codes of the partitions whose write failed while it waited,
    /// for the log line.
    failures: Vec<String>,
}

/// What the server keeps beside the driver between requests: the
/// advertised brokers, and the rest ([`Core`]).
#[derive(Debug)]
pub struct ServerState {
    pub brokers: Vec<Advertised>,
    core: Core,
    /// The clients' producer ids, epochs and open transactions, as the
    /// wire protocol sees them ([`crate::kafka::producers`]).
    producers: ProducerTable,
    /// The consumer groups' membership ([`crate::kafka::groups`]).
    groups: Groups,
}

/// The clock policy, the replication tick, the waiting produces, the
/// connection registry and the listeners' gates.
#[derive(Debug)]
struct Core {
    /// Real time as `advance_clock` steps (serve), or none: the
    /// dashboard's clock moves only by the lecturer's keys.
    time: Option<RealTime>,
    auto_replicate: Option<Duration>,
    next_replicate: Instant,
    /// A client's step changed the cluster since the last replication
    /// tick: under serve a client waiting on replication (an acks=all
    /// produce, a fetch waiting for the high watermark, a commit's
    /// markers) then has the tick at once ([`Core::replicate_now`]).
    replicate_soon: bool,
    /// Whether a client waiting on replication has the tick at once:
    /// serve's default (real time), off with `--tick-replication-only`
    /// and under the dashboard's `--listen`, which keeps the lecturer's
    /// pace.
    replicate_when_waited: bool,
    /// How often the configured topics are cleaned ([`cleaner`]), and
    /// when next; none: never (the dashboard, whose lecturer cleans).
    cleaner: Option<Duration>,
    next_clean: Instant,
    waiting: Vec<Waiting>,
    continuing: Vec<Continuing>,
    registry: Registry,
    gates: Gates,
    /// The fault armed, and the answers it is taking ([`fault`]).
    faults: Faults,
    /// Log the driver side's own lines (a fault armed) on standard error
    /// (`serve`), else into the registry (the dashboard owns the terminal).
    to_stderr: bool,
    /// The Unix time of the engine clock's 0, fixed when first asked: a
    /// LogAppendTime record is stamped with the engine clock (replays need
    /// no wall clock) and sent to clients as a Unix time from here.
    append_time_origin: Option<i64>,
    /// The broker's `fetch.max.bytes`: the most one Fetch response holds
    /// ([`handlers::fetch::FETCH_MAX_BYTES`] unless a test lowers it).
    fetch_max_bytes: u64,
    /// The broker's `auto.create.topics.enable` (`--auto-create-topics`).
    auto_create_topics: bool,
    /// The fetches waiting for data.
    fetches: Fetches,
    /// When to try again to complete decided transactions, and the pause
    /// after a try that failed ([`Worker::complete_decided`]).
    completing: (Instant, Duration),
    /// The answers of this round, held until the journal is durable.
    held: Held,
}

/// The first pause between tries to complete a decided transaction, and
/// the longest (the pause doubles while tries fail: a full disk).
const COMPLETE_RETRY: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(30));

impl Core {
    /// Whether the replication tick should run now rather than at its
    /// time ([`Self::replicate_when_waited`]): a client's step changed the
    /// cluster since the last tick and a client waits on replication. Kafka's followers
    /// fetch continuously, so an acks=all produce is answered in about a
    /// round trip; waiting for the next `--auto-replicate` tick made each
    /// one take 50 ms (a new user's trial: 53 ms a send, 19 sends/s).
    fn replicate_now(&self) -> bool {
        self.replicate_when_waited
            && self.auto_replicate.is_some()
            && self.replicate_soon
            && (!self.waiting.is_empty()
                || !self.continuing.is_empty()
                || !self.fetches.waiting.is_empty())
    }

    /// One line of the server's log, where the request lines go.
    fn log(&self, line: &str) {
        if self.to_stderr {
            crate::kafka::log_line(format_args!("mk-tui serve: {line}"));
        } else {
            self.registry.log(line.to_string());
        }
    }
}

/// One request's (or one timer's) view of the server: the borrowed
/// driver, the state kept beside it, and where applied actions are told.
/// Handlers see it as a [`Broker`]: they read the cluster and change it
/// only through [`Worker::apply`].
pub struct Worker<'a> {
    driver: &'a mut Driver,
    brokers: &'a [Advertised],
    producers: &'a mut ProducerTable,
    groups: &'a mut Groups,
    core: &'a mut Core,
    steps: &'a mut dyn Steps,
}

impl ServerState {
    /// `real_time`: apply the wall clock's passing as `advance_clock`
    /// steps, and log on standard error (serve). `auto_replicate_ms` 0:
    /// never replicate by itself.
    pub fn new(
        brokers: Vec<Advertised>,
        auto_replicate_ms: u64,
        real_time: bool,
        registry: Registry,
        gates: Gates,
    ) -> Self {
        let auto_replicate =
            (auto_replicate_ms > 0).then(|| Duration::from_millis(auto_replicate_ms));
        Self {
            brokers,
            core: Core {
                time: real_time.then(RealTime::start),
                auto_replicate,
                next_replicate: RealTime::now() + auto_replicate.unwrap_or_default(),
                replicate_soon: false,
                replicate_when_waited: real_time,
                cleaner: None,
                next_clean: RealTime::now(),
                waiting: Vec::new(),
                continuing: Vec::new(),
                registry,
                gates,
                faults: Faults::default(),
                to_stderr: real_time,
                append_time_origin: None,
                fetch_max_bytes: handlers::fetch::FETCH_MAX_BYTES,
                auto_create_topics: false,
                fetches: Fetches::default(),
                completing: (RealTime::now() + COMPLETE_RETRY.0, COMPLETE_RETRY.0),
                held: Held::default(),
            },
            producers: ProducerTable::default(),
            groups: Groups::default(),
        }
    }

    /// A worker for one request or timer (the handlers' tests make one
    /// too).
    pub fn worker<'a>(
        &'a mut self,
        driver: &'a mut Driver,
        steps: &'a mut dyn Steps,
    ) -> Worker<'a> {
        Worker {
            driver,
            brokers: &self.brokers,
            producers: &mut self.producers,
            groups: &mut self.groups,
            core: &mut self.core,
            steps,
        }
    }

    /// The connection registry.
    pub fn registry(&self) -> &Registry {
        &self.core.registry
    }

    /// Every open connection, in accept order, with the consumer group
    /// each one is a member of (the clients pane).
    pub fn clients(&self) -> Vec<ClientSnapshot> {
        let mut members = crate::kafka::group_view::memberships(&self.groups);
        let mut clients = self.core.registry.clients();
        for c in &mut clients {
            c.group = members.remove(&c.connection);
        }
        clients
    }

    /// Cleans the configured topics every `interval_ms` (0: never), the
    /// first time one interval from now.
    pub fn set_cleaner_interval(&mut self, interval_ms: u64) {
        let every = (interval_ms > 0).then(|| Duration::from_millis(interval_ms));
        self.core.cleaner = every;
        self.core.next_clean = RealTime::now() + every.unwrap_or_default();
    }

    /// Sets the broker's `fetch.max.bytes` (the tests lower it to see the
    /// cap at work on a small log).
    pub fn set_fetch_max_bytes(&mut self, bytes: u64) {
        self.core.fetch_max_bytes = bytes;
    }

    /// Sets the broker's `auto.create.topics.enable`: a Metadata request
    /// that names a missing topic and allows it creates the topic
    /// ([`handlers::metadata`]).
    pub fn set_auto_create_topics(&mut self, on: bool) {
        self.core.auto_create_topics = on;
    }

    /// Whether a client waiting on replication has the replication tick
    /// at once ([`Core::replicate_now`]); serve's default, off with
    /// `--tick-replication-only`.
    pub fn set_replicate_when_waited(&mut self, on: bool) {
        self.core.replicate_when_waited = on;
    }

    /// Handles one request: answers it now, or keeps it waiting.
    pub fn handle(
        &mut self,
        driver: &mut Driver,
        steps: &mut dyn Steps,
        request: Request,
        reply: oneshot::Sender<Answer>,
    ) {
        self.worker(driver, steps).handle(request, reply);
    }

    /// Arms `fault` (`serve --fault`, the dashboard's `D`): a `note` step
    /// that says so, told to `steps`. Refused (nothing applied) while it is
    /// armed already.
    pub fn arm(
        &mut self,
        driver: &mut Driver,
        steps: &mut dyn Steps,
        fault: Fault,
    ) -> Result<(), crate::session::SessionError> {
        if self.core.faults.armed() == Some(fault) {
            return Err(crate::session::SessionError::refused(format!(
                "fault {}: armed already, waiting for the next Produce",
                fault.name()
            )));
        }
        let mut worker = self.worker(driver, steps);
        worker.core.faults.arm(fault);
        let caption = fault.armed_caption();
        worker.core.log(caption.text("en"));
        worker.note(&caption);
        Ok(())
    }

    /// The fault armed and waiting for the request it takes, if any.
    pub fn armed_fault(&self) -> Option<Fault> {
        self.core.faults.armed()
    }

    /// Starts a round of requests: under the kafka rules' group commit,
    /// journal syncs are deferred and answers held until
    /// [`Self::end_round`] ([`crate::kafka::held`]).
    pub fn begin_round(&mut self, driver: &Driver) {
        self.core.held.begin(driver.cluster());
    }

    /// Ends a round: one journal sync covers every frame its requests
    /// wrote, then their answers go out (as errors where they rested on
    /// the journal and the sync failed), then the answers a fault took.
    pub fn end_round(&mut self, driver: &mut Driver, steps: &mut dyn Steps) {
        if let Some(why) = self.core.held.end(driver.cluster()) {
            self.core.log(&format!(
                "the journal's sync failed; the transactional answers that rested on it were sent as errors: {why}"
            ));
        }
        self.worker(driver, steps).settle_dropping();
    }

    /// The rounds that ended with a journal sync.
    pub fn synced_rounds(&self) -> u64 {
        self.core.held.synced_rounds
    }

    /// The replication tick and the request timeouts, when due.
    pub fn on_timer(&mut self, driver: &mut Driver, steps: &mut dyn Steps) {
        self.worker(driver, steps).on_timer();
    }

    /// After a step someone else applied (a key, a recording's step before
    /// serving): answers the produces it finished and opens or closes
    /// listeners.
    pub fn after_step(&mut self, driver: &Driver) {
        settle(driver, &mut self.core.waiting, &mut self.core.held);
        publish(driver, &self.core.gates);
        // The waiting fetches are looked at by the next timer, due now.
        self.core.fetches.recheck = !self.core.fetches.waiting.is_empty();
    }

    /// The real time up to now as a last `advance_clock` step (serve's
    /// stop: the time up to it is part of the session too).
    pub fn finish(&mut self, driver: &mut Driver, steps: &mut dyn Steps) {
        self.worker(driver, steps).advance_clock();
    }

    /// Serve whose engine clock's 0 stands for the Unix time `origin_ms`
    /// (kept in the data directory's `cluster.json`): from now on the
    /// engine clock is the wall clock's time since then, LogAppendTime
    /// stamps are sent from there, and the time a reopened server was down
    /// is applied now, as one `advance_clock` step (under the kafka rules
    /// an abandoned transaction then times out as it would have). See
    /// [`Driver::follow_wall_clock`].
    pub fn resume_wall_clock(
        &mut self,
        driver: &mut Driver,
        steps: &mut dyn Steps,
        origin_ms: i64,
    ) {
        self.core.append_time_origin = Some(origin_ms);
        if self.core.time.is_some() {
            self.core.time = Some(RealTime::from_wall(origin_ms, driver.clock_ms()));
            self.worker(driver, steps).advance_clock();
        }
    }

    /// How long until [`Self::on_timer`] has work (at most 200 ms).
    pub fn sleep_for(&self) -> Duration {
        let now = RealTime::now();
        let mut wake = now + Duration::from_millis(200);
        if self.core.auto_replicate.is_some() {
            wake = wake.min(self.core.next_replicate);
        }
        if self.core.replicate_now() {
            wake = now;
        }
        if self.core.cleaner.is_some() {
            wake = wake.min(self.core.next_clean);
        }
        for w in &self.core.waiting {
            wake = wake.min(w.produce.deadline);
        }
        for c in &self.core.continuing {
            wake = wake.min(c.work.deadline());
        }
        if let Some((at, _)) = self.core.fetches.by_deadline.first() {
            wake = wake.min(*at);
        }
        if let Some(at) = self.groups.next_deadline() {
            wake = wake.min(at);
        }
        if self.core.fetches.recheck {
            wake = now;
        }
        wake.saturating_duration_since(now)
    }

    /// Whether a timer is set at all (a tick, a waiting produce, or a
    /// continuing request, which moves on at the next timer after a step
    /// someone else applied).
    pub fn has_timers(&self) -> bool {
        self.core.auto_replicate.is_some()
            || self.core.cleaner.is_some()
            || !self.core.waiting.is_empty()
            || !self.core.continuing.is_empty()
            || !self.core.faults.dropping.is_empty()
            || !self.core.fetches.waiting.is_empty()
            || self.groups.next_deadline().is_some()
    }
}

impl Worker<'_> {
    /// Applies one action for a request or the server: first the real time
    /// that passed, as `advance_clock` (serve only), then the action; then
    /// answers the waiting produces it finished. An action the driver would
    /// refuse as invalid (past a limit of docs/recording-format.md) is
    /// neither applied nor recorded, as with a key: the recording must read
    /// back.
    pub fn apply(&mut self, action: &Action) -> Outcome {
        self.advance_clock();
        let outcome = self.step(action);
        settle(self.driver, &mut self.core.waiting, &mut self.core.held);
        self.settle_continuing();
        self.wake_fetches();
        outcome
    }

    /// Asks again the waiting fetches on a partition that changed, and
    /// answers those that now have their `min_bytes` (or an error).
    fn wake_fetches(&mut self) {
        self.core.fetches.recheck = false;
        for id in self.core.fetches.changed(self.driver) {
            let Some(w) = self.core.fetches.remove(id) else {
                continue;
            };
            let answer = fetch::handle(self, w.wait.broker, &w.wait.request, w.wait.version);
            if answer.empty_fetch && !w.reply.is_closed() {
                self.core.fetches.insert(self.driver, w);
            } else {
                self.core.held.send(w.reply, answer);
            }
        }
    }

    /// Answers the waiting fetches whose deadline passed, with what they
    /// have then (nothing, or less than their `min_bytes`).
    fn expire_fetches(&mut self, now: Instant) {
        for id in self.core.fetches.due(now) {
            if let Some(w) = self.core.fetches.remove(id) {
                let answer = fetch::handle(self, w.wait.broker, &w.wait.request, w.wait.version);
                self.core.held.send(w.reply, answer);
            }
        }
    }

    /// The Unix time (ms) the engine clock's 0 stands for on the wire: a
    /// LogAppendTime record's time is this plus its engine stamp. Fixed
    /// the first time it is asked, from the wall clock and the engine
    /// clock then, so every answer translates a stamp alike and append
    /// times stay monotonic. Under serve the engine clock follows real
    /// time, so a stamp reads as the Unix time of its append.
    fn append_time_origin(&mut self) -> i64 {
        let engine_now = i64::try_from(self.driver.clock_ms()).unwrap_or(i64::MAX);
        *self
            .core
            .append_time_origin
            .get_or_insert_with(|| RealTime::unix_ms().saturating_sub(engine_now))
    }

    /// A `note` step that says `caption` (SPEC §4 `note`: it changes
    /// nothing), told to the [`Steps`] with its caption: the server's word
    /// for what the engine's actions do not show (a fault, a retry answered
    /// from the sequence check). Real time first, as for any step.
    fn note(&mut self, caption: &Caption) {
        self.advance_clock();
        let action = Action::Note {};
        if self.driver.refuse(&action).is_err() {
            return;
        }
        self.steps.before(self.driver, &action);
        self.driver.apply(&action);
        self.steps.noted(self.driver, caption);
    }

    /// Passes on the answers the fault took, without their bodies, each
    /// with a `note` step saying which response was dropped.
    fn settle_dropping(&mut self) {
        for mut d in std::mem::take(&mut self.core.faults.dropping) {
            match d.inner.try_recv() {
                Ok(answer) => {
                    let caption = fault::dropped_caption(&d.what, &answer.outcome);
                    let _ = d.reply.send(fault::drop_answer(answer));
                    self.note(&caption);
                }
                Err(tokio::sync::oneshot::error::TryRecvError::Empty) => {
                    self.core.faults.dropping.push(d);
                }
                // Answered by nobody (cannot happen: every handler
                // answers); the connection sees the server stop.
                Err(tokio::sync::oneshot::error::TryRecvError::Closed) => {}
            }
        }
    }

    /// Polls every continuing request once. A poll may apply an action,
    /// whose own settle sees only the requests put back meanwhile.
    fn settle_continuing(&mut self) {
        for mut c in std::mem::take(&mut self.core.continuing) {
            match c.work.poll(self) {
                Some(answer) => self.core.held.send(c.reply, answer),
                None => self.core.continuing.push(c),
            }
        }
    }

    /// Answers the continuing requests whose deadline passed.
    fn expire_continuing(&mut self, now: Instant) {
        for c in std::mem::take(&mut self.core.continuing) {
            if now < c.work.deadline() {
                self.core.continuing.push(c);
            } else {
                let answer = c.work.timed_out(self);
                self.core.held.send(c.reply, answer);
            }
        }
    }

    /// One driver step, told to the [`Steps`].
    fn step(&mut self, action: &Action) -> Outcome {
        if let Err(e) = self.driver.refuse(action) {
            return Outcome::Error(e);
        }
        self.steps.before(self.driver, action);
        let outcome = self.driver.apply(action);
        self.steps.applied(self.driver, action, &outcome);
        if !matches!(
            action,
            Action::Replicate { .. } | Action::AdvanceClock { .. } | Action::Note {}
        ) {
            self.core.replicate_soon = true;
        }
        publish(self.driver, &self.core.gates);
        outcome
    }

    /// Applies the real time that passed since the last step as an
    /// `advance_clock` action (nothing when no whole millisecond passed,
    /// or when the clock is the lecturer's).
    fn advance_clock(&mut self) {
        let Some(time) = &mut self.core.time else {
            return;
        };
        let ms = time.take_elapsed_ms();
        if ms > 0 {
            let open = self.open_transactions();
            self.step(&Action::AdvanceClock { ms });
            self.say_timed_out(open);
        }
    }

    /// The clients' transactions ONGOING in the engine: (transactional id,
    /// engine instance).
    fn open_transactions(&self) -> Vec<(String, usize)> {
        let open = self
            .producers
            .transactional
            .iter()
            .filter_map(|(txn, p)| Some((txn.clone(), p.open.as_ref()?.instance)));
        open.filter(|&(_, i)| {
            self.driver
                .cluster()
                .with_state(|s| s.transactions().instances().get(i).map(|d| d.state))
                == Some(TransactionState::Ongoing)
        })
        .collect()
    }

    /// Says which of `open` the clock's step aborted: under the kafka
    /// rules the engine aborts a transaction left ONGOING for the
    /// cluster's `transaction_timeout_ms` (Kafka's coordinator takes the
    /// client's `transaction.timeout.ms`: docs/kafka-differences.md), and
    /// the LSO moves on; the log says why (a new user's trial saw the LSO
    /// jump and nothing in the log).
    fn say_timed_out(&self, open: Vec<(String, usize)>) {
        for (txn, instance) in open {
            let state = self
                .driver
                .cluster()
                .with_state(|s| s.transactions().instances().get(instance).map(|d| d.state));
            if state == Some(TransactionState::CompleteAbort) {
                let timeout = self.driver.cluster().config().transaction_timeout_ms;
                self.core.log(&format!(
                    "transaction {txn:?} timed out: aborted by the server, open {timeout} ms (the cluster's transaction_timeout_ms) with no EndTxn from its client"
                ));
            }
        }
    }

    /// The actions a request is built from go through [`Self::apply`]; the
    /// replication tick and the timeouts run here, between requests.
    fn on_timer(&mut self) {
        let now = RealTime::now();
        if let Some(every) = self.core.auto_replicate
            && (now >= self.core.next_replicate || self.core.replicate_now())
        {
            self.core.replicate_soon = false;
            self.apply(&Action::Replicate {
                broker: None,
                topic: None,
                partition: None,
            });
            self.core.next_replicate = RealTime::now() + every;
        }
        if let Some(every) = self.core.cleaner
            && now >= self.core.next_clean
        {
            self.clean();
            self.core.next_clean = RealTime::now() + every;
        }
        if self.core.time.is_some() && now >= self.core.completing.0 {
            self.complete_decided();
        }
        // Sessions and rebalances that ran out; the JoinGroups and
        // SyncGroups they answer are polled next.
        self.groups.tick(now);
        // A step someone else applied (a key) may have let them move on.
        self.settle_continuing();
        self.wake_fetches();
        self.expire_fetches(RealTime::now());
        expire(&mut self.core.waiting, &mut self.core.held, RealTime::now());
        self.expire_continuing(RealTime::now());
        self.settle_dropping();
    }

    /// One tick of the server's cleaner: the `compact` and `retention`
    /// steps the topics' configs ask for, applied and recorded as a
    /// client's actions are. A step that fails (a broker stopped) is
    /// logged and tried again at the next tick.
    fn clean(&mut self) {
        let configs = self.driver.cluster().topic_configs();
        for action in cleaner::actions(&configs) {
            if let Outcome::Error(e) = self.apply(&action) {
                self.core.log(&format!("cleaner: {}: {e}", action.name()));
            }
        }
    }

    /// Completes the transactions whose outcome is decided (their PREPARE
    /// written) but whose markers or COMPLETE could not all be written (a
    /// full disk), as Kafka's coordinator retries its markers: a `commit`
    /// or `abort` of each, which resumes it. Serve only (the dashboard's
    /// lecturer ends transactions by hand). While tries fail the pause
    /// between them doubles, from 1 s to 30 s, so a full disk costs few
    /// steps.
    fn complete_decided(&mut self) {
        let decided: Vec<(String, bool)> = self.driver.cluster().with_state(|s| {
            let mut latest = BTreeMap::new();
            for d in s.transactions().instances().iter() {
                latest.insert(d.id.clone(), d.state);
            }
            latest
                .into_iter()
                .filter_map(|(id, state)| match state {
                    TransactionState::PrepareCommit => Some((id, true)),
                    TransactionState::PrepareAbort => Some((id, false)),
                    _ => None,
                })
                .collect()
        });
        let mut failed = false;
        for (txn, commit) in decided {
            if steps::txn_busy(self, &txn) {
                continue;
            }
            let action = if commit {
                Action::Commit {
                    txn: txn.clone(),
                    crash_after: None,
                }
            } else {
                Action::Abort {
                    txn: txn.clone(),
                    crash_after: None,
                }
            };
            let outcome = self.apply(&action);
            let verb = if commit { "commit" } else { "abort" };
            match outcome {
                Outcome::Error(e) => {
                    failed = true;
                    self.core.log(&format!(
                        "completing the decided {verb} of {txn:?} failed again: {e}"
                    ));
                }
                _ => self
                    .core
                    .log(&format!("completed the decided {verb} of {txn:?}")),
            }
        }
        let pause = if failed {
            (self.core.completing.1 * 2).min(COMPLETE_RETRY.1)
        } else {
            COMPLETE_RETRY.0
        };
        self.core.completing = (RealTime::now() + pause, pause);
    }

    fn handle(&mut self, request: Request, reply: oneshot::Sender<Answer>) {
        // The fault takes this request's answer: the handlers answer an
        // inner channel, passed on without the body ([`fault`]).
        if self.core.faults.takes(&request.body) {
            let (inner_tx, inner) = oneshot::channel();
            let what = format!(
                "Produce v{} from client {:?}",
                request.version, request.client_id
            );
            self.core
                .faults
                .dropping
                .push(Dropping { inner, reply, what });
            let inner_tx = Reply::to(inner_tx, &request.body);
            self.handle_now(request, inner_tx);
            self.settle_dropping();
            return;
        }
        let reply = Reply::to(reply, &request.body);
        self.handle_now(request, reply);
    }

    fn handle_now(&mut self, request: Request, reply: Reply) {
        let connection = request.connection;
        if let Some(txn) = transactional_id(&request.body) {
            // The clients pane: the transactional id a connection works for.
            self.core.registry.transactional_id(connection, &txn);
        }
        match handlers::handle(self, request) {
            Handled::Now(answer) => self.core.held.send(reply, answer),
            Handled::Wait(produce) => {
                self.core.registry.waiting(connection, "acks=all waiting");
                self.core.waiting.push(Waiting {
                    produce,
                    started: RealTime::now(),
                    reply,
                    failures: Vec::new(),
                });
                // It may already be done (a step finished while others ran).
                settle(self.driver, &mut self.core.waiting, &mut self.core.held);
            }
            Handled::Continue(work) => {
                self.core
                    .registry
                    .waiting(connection, "waiting in the cluster");
                self.core.continuing.push(Continuing { work, reply });
                self.settle_continuing();
            }
            Handled::Fetch(wait) => {
                let ms = wait.request.max_wait_ms.max(0) as u64;
                let deadline = RealTime::now() + Duration::from_millis(ms).min(MAX_FETCH_WAIT);
                let partitions = fetch::partitions(&wait.request);
                let waiting = WaitingFetch {
                    wait: *wait,
                    deadline,
                    partitions,
                    reply,
                };
                self.core.fetches.insert(self.driver, waiting);
            }
        }
    }
}

/// The transactional id a request works for, if any.
fn transactional_id(body: &RequestKind) -> Option<String> {
    let id = match body {
        RequestKind::Produce(r) => r.transactional_id.as_ref()?,
        RequestKind::AddPartitionsToTxn(r) => &r.v3_and_below_transactional_id,
        RequestKind::AddOffsetsToTxn(r) => &r.transactional_id,
        RequestKind::TxnOffsetCommit(r) => &r.transactional_id,
        RequestKind::EndTxn(r) => &r.transactional_id,
        _ => return None,
    };
    Some(id.0.to_string()).filter(|t| !t.is_empty())
}

/// The handlers' view of the server: reads of the driver, actions through
/// [`Worker::apply`], and the tables kept beside it.
impl Broker for Worker<'_> {
    fn read_state(&self, f: &mut dyn FnMut(&ClusterState)) {
        self.driver.cluster().with_state(f);
    }

    fn clock_ms(&self) -> u64 {
        self.driver.clock_ms()
    }

    fn apply(&mut self, action: &Action) -> Outcome {
        Worker::apply(self, action)
    }

    fn refuse(&self, action: &Action) -> Result<(), ActionError> {
        self.driver.refuse(action)
    }

    fn note(&mut self, caption: &Caption) {
        Worker::note(self, caption);
    }

    fn last_step(&self) -> usize {
        self.driver.step()
    }

    fn pending(&self) -> Vec<PendingView> {
        self.driver.pending()
    }

    fn step_error(&self, step: usize) -> Option<(&'static str, String)> {
        self.driver
            .errors()
            .iter()
            .find(|e| e.step == step)
            .map(|e| (e.code, e.message.clone()))
    }

    fn appended(&self, step: usize) -> Option<AppendResult> {
        self.driver.appended(step)
    }

    fn lands_at(&self, step: usize) -> Option<i64> {
        self.driver.lands_at(step).map(|(_, first)| first)
    }

    fn append_time_origin(&mut self) -> i64 {
        Worker::append_time_origin(self)
    }

    fn fetch_max_bytes(&self) -> u64 {
        self.core.fetch_max_bytes
    }

    fn auto_create_topics(&self) -> bool {
        self.core.auto_create_topics
    }

    fn brokers(&self) -> &[Advertised] {
        self.brokers
    }

    fn producers(&self) -> &ProducerTable {
        self.producers
    }

    fn producers_mut(&mut self) -> &mut ProducerTable {
        self.producers
    }

    fn producer_ids(&mut self) -> Result<&mut ProducerIds, IdError> {
        self.producers.ids(self.driver)
    }

    fn init_idempotent(&mut self) -> Result<(i64, i16), IdError> {
        self.producers.init_idempotent(self.driver)
    }

    fn next_transactional_identity(&mut self, txn: &str) -> Result<(i64, i16), IdError> {
        self.producers.next_transactional_identity(self.driver, txn)
    }

    fn client_host(&self, connection: crate::kafka::registry::ConnectionId) -> String {
        self.core
            .registry
            .peer(connection)
            .and_then(|p| p.parse::<std::net::SocketAddr>().ok())
            .map_or_else(String::new, |a| format!("/{}", a.ip()))
    }

    fn groups(&self) -> &Groups {
        self.groups
    }

    fn groups_mut(&mut self) -> &mut Groups {
        self.groups
    }
}

/// Tells the network side which brokers are stopped, when that changed.
fn publish(driver: &Driver, gates: &Gates) {
    let stopped: BTreeSet<BrokerId> = driver
        .cluster()
        .with_state(|s| s.stopped_brokers().iter().copied().collect());
    gates.send_if_modified(|now| {
        let changed = *now != stopped;
        if changed {
            *now = stopped;
        }
        changed
    });
}

/// Answers every waiting produce whose steps all finished.
fn settle(driver: &Driver, waiting: &mut Vec<Waiting>, held: &mut Held) {
    if waiting.is_empty() {
        return;
    }
    let pending: BTreeSet<usize> = driver.pending().iter().map(|p| p.action_step).collect();
    for mut w in std::mem::take(waiting) {
        let failures = &mut w.failures;
        w.produce.parts.retain(|(t, p, steps)| {
            if steps.iter().any(|s| pending.contains(s)) {
                return true;
            }
            let failed = driver
                .errors()
                .iter()
                .find(|e| steps.contains(&e.step))
                .map(|e| (e.code, e.message.clone()));
            if let Some((kind, message)) = failed {
                let part = &mut w.produce.response.responses[*t].partition_responses[*p];
                // The driver keeps a late failure's kind by name
                // (`ErrorEvent::code`): its Kafka code, with the
                // engine's sentence as the message.
                part.error_code = code_of_name(kind);
                part.error_message = Some(message.into());
                part.base_offset = -1;
                failures.push(name_of(part.error_code));
            }
            false
        });
        if w.produce.parts.is_empty() {
            let ms = w.started.elapsed().as_millis();
            let outcome = match w.failures.is_empty() {
                true => format!("{}; acks=all completed after {ms} ms", w.produce.outcome),
                false => format!(
                    "{}; acks=all failed after {ms} ms: {}",
                    w.produce.outcome,
                    w.failures.join(", ")
                ),
            };
            let answer = Answer::now(ResponseKind::Produce(w.produce.response), outcome);
            held.send(w.reply, answer);
        } else {
            waiting.push(w);
        }
    }
}

/// Answers REQUEST_TIMED_OUT for the partitions still pending at the
/// request's timeout. Their appends stay pending in the driver, as the
/// record stays in a broker's log.
fn expire(waiting: &mut Vec<Waiting>, held: &mut Held, now: Instant) {
    for mut w in std::mem::take(waiting) {
        if now < w.produce.deadline {
            waiting.push(w);
            continue;
        }
        for (t, p, _) in &w.produce.parts {
            let part = &mut w.produce.response.responses[*t].partition_responses[*p];
            part.error_code = code::REQUEST_TIMED_OUT;
            part.error_message =
                Some("acks=all: the in-sync replicas did not all fetch the batch in time".into());
        }
        let outcome = format!(
            "{}; REQUEST_TIMED_OUT after {} ms, still pending in the cluster",
            w.produce.outcome,
            w.started.elapsed().as_millis()
        );
        let answer = Answer::now(ResponseKind::Produce(w.produce.response), outcome);
        held.send(w.reply, answer);
    }
}

/// The most requests one round handles before its sync: the commands
/// keep coming under load, and a round that never ended would hold its
/// answers for ever.
const ROUND_MAX: usize = 256;

/// `mk-tui serve`'s driver thread: requests as they come, the timer in
/// between, until [`Command::Shutdown`] or every sender is gone. A round
/// is the request that woke the thread, every one already waiting (up to
/// [`ROUND_MAX`]) and the timer; under the kafka rules its journal frames
/// share one sync at its end, before its answers go out
/// ([`crate::kafka::held`]). Returns the driver, for a clean close.
pub fn run(
    mut driver: Driver,
    mut state: ServerState,
    steps: &mut dyn Steps,
    commands: mpsc::Receiver<Command>,
) -> Driver {
    let (frames, syncs) = journal_counts(&driver);
    state.after_step(&driver);
    loop {
        let first = commands.recv_timeout(state.sleep_for());
        state.begin_round(&driver);
        let (mut next, mut stop) = match first {
            Ok(command) => (Some(command), false),
            Err(mpsc::RecvTimeoutError::Disconnected) => (None, true),
            Err(mpsc::RecvTimeoutError::Timeout) => (None, false),
        };
        let mut handled = 0;
        while let Some(command) = next.take() {
            match command {
                Command::Request(request, reply, room) => {
                    state.handle(&mut driver, steps, *request, reply);
                    drop(room);
                }
                Command::Shutdown => {
                    stop = true;
                    break;
                }
            }
            handled += 1;
            if handled < ROUND_MAX {
                match commands.try_recv() {
                    Ok(command) => next = Some(command),
                    Err(mpsc::TryRecvError::Empty) => {}
                    Err(mpsc::TryRecvError::Disconnected) => stop = true,
                }
            }
        }
        if !stop {
            state.on_timer(&mut driver, steps);
        }
        state.end_round(&mut driver, steps);
        if stop {
            break;
        }
    }
    state.begin_round(&driver);
    state.finish(&mut driver, steps);
    state.end_round(&mut driver, steps);
    if driver.cluster().journal_group_committed() {
        let (frames_now, syncs_now) = journal_counts(&driver);
        state.core.log(&format!(
            "journal group commit: {} frames written, {} fdatasync ({} at the end of a round of requests)",
            frames_now.saturating_sub(frames),
            syncs_now.saturating_sub(syncs),
            state.synced_rounds()
        ));
    }
    driver
}

/// The journal's frames and its group commit's `fdatasync` calls so far.
fn journal_counts(driver: &Driver) -> (usize, u64) {
    let cluster = driver.cluster();
    let frames = cluster.with_state(|s| s.transactions().journal_frames().len());
    (frames, cluster.journal_syncs())
}
