//! The driver thread (issue 14 item 3, SPEC §2): one thread owns the
//! [`Driver`] and handles every request, one at a time, in arrival order.
//! Connections send it [`Command`]s over a channel and await a oneshot
//! reply; the network runtime never touches the engine.
//!
//! Every change to the engine is an [`Action`] applied by the driver: the
//! requests' `create_topic` and `produce`, and the server's own
//! `advance_clock` (real time, see [`RealTime`]) and `replicate` (every
//! `--auto-replicate` ms). An `acks=all` produce that stays pending is
//! answered when the driver reports its steps finished, or with
//! REQUEST_TIMED_OUT at the request's timeout, as a broker does.

use std::collections::BTreeSet;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kafka_protocol::messages::{ProduceResponse, RequestKind, ResponseKind};
use tokio::sync::oneshot;

use crate::engine::config::BrokerId;
use crate::kafka::clock::RealTime;
use crate::kafka::errors::code;
use crate::kafka::handlers;
use crate::session::{Action, Driver, Outcome};

/// One decoded request, with who sent it where.
#[derive(Debug)]
pub struct Request {
    /// The broker whose listener took the connection.
    pub broker: BrokerId,
    pub client_id: String,
    pub version: i16,
    pub body: RequestKind,
}

/// The answer to a request.
#[derive(Debug)]
pub struct Answer {
    /// The response body; `None` for an `acks=0` produce, which Kafka
    /// never answers.
    pub body: Option<ResponseKind>,
    /// What happened, for the request log.
    pub outcome: String,
    /// An empty fetch: the connection may wait and ask again until the
    /// request's `max_wait_ms` (a fetch long-poll).
    pub empty_fetch: bool,
}

impl Answer {
    /// An answer sent now.
    pub fn now(body: ResponseKind, outcome: impl Into<String>) -> Self {
        Self {
            body: Some(body),
            outcome: outcome.into(),
            empty_fetch: false,
        }
    }
}

/// What a connection asks of the driver thread.
#[derive(Debug)]
pub enum Command {
    Request(Box<Request>, oneshot::Sender<Answer>),
    Shutdown,
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
}

/// A request whose answer waits for the driver (issue 14: transactions).
/// [`Continue::poll`] is called after every action the worker applies and
/// on every timer tick; it may apply the request's next action and returns
/// the answer once it has one.
pub trait Continue: Send + std::fmt::Debug {
    /// Moves on if it can: `Some(answer)` when the request is answered.
    fn poll(&mut self, worker: &mut Worker) -> Option<Answer>;
    /// When a broker gives up on it.
    fn deadline(&self) -> Instant;
    /// The answer at the deadline.
    fn timed_out(self: Box<Self>, worker: &mut Worker) -> Answer;
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

/// The driver and what the server keeps beside it.
pub struct Worker {
    pub driver: Driver,
    pub brokers: Vec<Advertised>,
    time: RealTime,
    auto_replicate: Option<Duration>,
    next_replicate: Instant,
    waiting: Vec<(WaitingProduce, Instant, oneshot::Sender<Answer>)>,
    continuing: Vec<(Box<dyn Continue>, oneshot::Sender<Answer>)>,
    /// The clients' producer ids, epochs and open transactions, as the
    /// wire protocol sees them (`crate::kafka::producers`).
    pub producers: crate::kafka::producers::ProducerTable,
    /// Consumer groups of one member (`crate::kafka::groups`).
    pub groups: crate::kafka::groups::Groups,
}

impl Worker {
    pub fn new(driver: Driver, brokers: Vec<Advertised>, auto_replicate_ms: u64) -> Self {
        let auto_replicate =
            (auto_replicate_ms > 0).then(|| Duration::from_millis(auto_replicate_ms));
        Self {
            driver,
            brokers,
            time: RealTime::start(),
            auto_replicate,
            next_replicate: RealTime::now() + auto_replicate.unwrap_or_default(),
            waiting: Vec::new(),
            continuing: Vec::new(),
            producers: Default::default(),
            groups: Default::default(),
        }
    }

    /// Applies one action for a request or the server: first the real time
    /// that passed, as `advance_clock`, then the action; then answers the
    /// waiting produces it finished.
    pub fn apply(&mut self, action: &Action) -> Outcome {
        self.advance_clock();
        let outcome = self.driver.apply(action);
        self.settle();
        outcome
    }

    /// Applies the real time that passed since the last step as an
    /// `advance_clock` action (nothing when no whole millisecond passed).
    fn advance_clock(&mut self) {
        let ms = self.time.take_elapsed_ms();
        if ms > 0 {
            self.driver.apply(&Action::AdvanceClock { ms });
        }
    }

    /// The actions a request is built from go through [`Self::apply`]; the
    /// replication tick and the timeouts run here, between requests.
    fn on_timer(&mut self) {
        let now = RealTime::now();
        if let Some(every) = self.auto_replicate
            && now >= self.next_replicate
        {
            self.apply(&Action::Replicate {
                broker: None,
                topic: None,
                partition: None,
            });
            self.next_replicate = RealTime::now() + every;
        }
        self.expire(RealTime::now());
    }

    /// How long the thread may sleep before [`Self::on_timer`] has work.
    fn sleep_for(&self) -> Duration {
        let now = RealTime::now();
        let mut wake = now + Duration::from_millis(200);
        if self.auto_replicate.is_some() {
            wake = wake.min(self.next_replicate);
        }
        for (w, _, _) in &self.waiting {
            wake = wake.min(w.deadline);
        }
        for (c, _) in &self.continuing {
            wake = wake.min(c.deadline());
        }
        wake.saturating_duration_since(now)
    }

    fn handle(&mut self, request: Request, reply: oneshot::Sender<Answer>) {
        match handlers::handle(self, request) {
            Handled::Now(answer) => {
                let _ = reply.send(answer);
            }
            Handled::Wait(waiting) => {
                self.waiting.push((waiting, RealTime::now(), reply));
                // It may already be done (a step finished while others ran).
                self.settle();
            }
            Handled::Continue(c) => {
                self.continuing.push((c, reply));
                self.settle();
            }
        }
    }

    /// Answers every waiting request that can be answered.
    fn settle(&mut self) {
        self.settle_produces();
        self.settle_continuing();
    }

    /// Polls every continuing request once. A poll may apply an action,
    /// whose own settle sees only the requests added meanwhile.
    fn settle_continuing(&mut self) {
        let continuing = std::mem::take(&mut self.continuing);
        for (mut c, reply) in continuing {
            match c.poll(self) {
                Some(answer) => {
                    let _ = reply.send(answer);
                }
                None => self.continuing.push((c, reply)),
            }
        }
    }

    /// Answers every waiting produce whose steps all finished.
    fn settle_produces(&mut self) {
        if self.waiting.is_empty() {
            return;
        }
        let pending: BTreeSet<usize> = self
            .driver
            .pending()
            .iter()
            .map(|p| p.action_step)
            .collect();
        let waiting = std::mem::take(&mut self.waiting);
        for (mut w, started, reply) in waiting {
            let driver = &self.driver;
            w.parts.retain(|(t, p, steps)| {
                if steps.iter().any(|s| pending.contains(s)) {
                    return true;
                }
                let failed = driver
                    .errors()
                    .iter()
                    .find(|e| steps.contains(&e.step))
                    .map(|e| (e.code, e.message.clone()));
                if let Some((kind, message)) = failed {
                    let part = &mut w.response.responses[*t].partition_responses[*p];
                    // The driver keeps a late failure's kind by name
                    // (`ErrorEvent::code`): its Kafka code, with the
                    // engine's sentence as the message.
                    part.error_code = crate::kafka::errors::code_of_name(kind);
                    part.error_message = Some(message.into());
                    part.base_offset = -1;
                }
                false
            });
            if w.parts.is_empty() {
                let ms = started.elapsed().as_millis();
                let outcome = format!("{}; acks=all completed after {ms} ms", w.outcome);
                let _ = reply.send(Answer::now(ResponseKind::Produce(w.response), outcome));
            } else {
                self.waiting.push((w, started, reply));
            }
        }
    }

    /// Answers REQUEST_TIMED_OUT for the partitions still pending at the
    /// request's timeout. Their appends stay pending in the driver, as the
    /// record stays in a broker's log.
    fn expire(&mut self, now: Instant) {
        let continuing = std::mem::take(&mut self.continuing);
        for (c, reply) in continuing {
            if now < c.deadline() {
                self.continuing.push((c, reply));
            } else {
                let _ = reply.send(c.timed_out(self));
            }
        }
        let waiting = std::mem::take(&mut self.waiting);
        for (mut w, started, reply) in waiting {
            if now < w.deadline {
                self.waiting.push((w, started, reply));
                continue;
            }
            for (t, p, _) in &w.parts {
                let part = &mut w.response.responses[*t].partition_responses[*p];
                part.error_code = code::REQUEST_TIMED_OUT;
                part.error_message = Some(
                    "acks=all: the in-sync replicas did not all fetch the batch in time".into(),
                );
            }
            let outcome = format!(
                "{}; REQUEST_TIMED_OUT after {} ms, still pending in the cluster",
                w.outcome,
                started.elapsed().as_millis()
            );
            let _ = reply.send(Answer::now(ResponseKind::Produce(w.response), outcome));
        }
    }

    /// The thread's loop: requests as they come, the timer in between,
    /// until [`Command::Shutdown`] or every sender is gone.
    pub fn run(mut self, commands: mpsc::Receiver<Command>) -> Driver {
        loop {
            match commands.recv_timeout(self.sleep_for()) {
                Ok(Command::Request(request, reply)) => self.handle(*request, reply),
                Ok(Command::Shutdown) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            self.on_timer();
        }
        // The time up to the stop is part of the session too.
        self.advance_clock();
        self.driver
    }
}
