//! Produce (versions 3-9) from idempotent and transactional producers:
//! v2 batches with a producer id, epoch and base sequence (E1, E7, E10).
//!
//! The edge translates; the engine decides. Each partition's records
//! become one action carrying them all (`records`: one engine batch, as
//! Kafka keeps the client's; split only past one action's caps, Kafka's
//! `message.max.bytes`) and the client's identity (`wire`: producer id,
//! epoch, first sequence). The leader's producer state (E7), rebuilt from
//! the log when the server restarts, judges the sequence: an exact retry
//! is answered with the original offsets and appends nothing, a gap is
//! OUT_OF_ORDER_SEQUENCE_NUMBER, an older epoch INVALID_PRODUCER_EPOCH,
//! and a newer epoch from sequence 0 starts afresh (KIP-360, the epoch an
//! idempotent client bumps itself after a timed-out batch).
//! - idempotent: a `produce` with the request's acks; any producer id is
//!   taken, as Kafka takes it (ids are the server's, never reused:
//!   [`crate::kafka::producers`]);
//! - transactional: a `send` in the client's transaction (E10: acks=all,
//!   the partition and first offset journaled), to a partition added with
//!   AddPartitionsToTxn (INVALID_TXN_STATE otherwise). The sends go one at
//!   a time, each once the transaction has nothing pending in the driver.
//!   The engine numbers a transaction's batches itself: the book's
//!   transactions have no producer id, and under the kafka rules each
//!   `begin` takes the next epoch (E14) while a Kafka client keeps one
//!   epoch across its transactions (transaction version 1). So the edge
//!   keeps a transactional client's recent sequences per partition and
//!   answers its exact retries itself; with no sequences known (a new
//!   producer, or after a restart) it takes the client's, as Kafka takes
//!   any sequence of a producer it holds no state for
//!   (docs/kafka-differences.md).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use kafka_protocol::messages::produce_request::PartitionProduceData;
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{ProduceRequest, ProduceResponse, ResponseKind};
use kafka_protocol::protocol::StrBytes;

use super::{leader_check, topic_partition, txn_client};
use crate::kafka::broker::{
    AckMode, Answer, Broker, Continue, Handled, TopicPartition, WaitingProduce,
};
use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, name_of};
use crate::kafka::producers::SequenceVerdict;
use crate::kafka::records::{self, IncomingRecord};
use crate::kafka::steps::{self, Refused, StepEnd};
use crate::session::Action;
use crate::session::action::WireIdentity;
use crate::session::recording::Caption;

/// The longest a produce waits, whatever the client asks.
const MAX_TIMEOUT: Duration = Duration::from_secs(300);

/// Who sent a request's batches.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sender {
    Idempotent,
    Transactional(String),
}

/// A partition's batches, checked and ready to append.
#[derive(Debug)]
struct Admitted {
    tp: TopicPartition,
    records: Vec<IncomingRecord>,
    producer_id: i64,
    epoch: i16,
    base_sequence: i32,
    /// An exact retry: the offset the batch was appended at before.
    duplicate: Option<i64>,
    /// The log's name of its compression (`records::compression_note`).
    codec: &'static str,
}

/// Handles a produce whose batches carry a producer id; `None` for a
/// plain producer's, which `produce` handles.
pub fn handle(
    worker: &mut dyn Broker,
    broker: u32,
    request: &ProduceRequest,
    version: i16,
) -> Option<Handled> {
    let sender = match request
        .transactional_id
        .as_ref()
        .filter(|t| !t.0.is_empty())
    {
        Some(t) => Sender::Transactional(t.0.to_string()),
        None => {
            let first = request
                .topic_data
                .iter()
                .flat_map(|t| &t.partition_data)
                .find_map(|p| p.records.as_ref().and_then(records::first_producer_id))?;
            if first < 0 {
                return None;
            }
            Sender::Idempotent
        }
    };
    let acks = match request.acks {
        0 => AckMode::None,
        1 => AckMode::Leader,
        _ => AckMode::All,
    };
    let timeout = Duration::from_millis(request.timeout_ms.max(0) as u64).min(MAX_TIMEOUT);
    let mut response = ProduceResponse::default();
    let mut notes = Vec::new();
    let mut admitted = Vec::new();
    for (ti, topic) in request.topic_data.iter().enumerate() {
        let name = topic.name.0.to_string();
        let mut tr = TopicProduceResponse::default().with_name(topic.name.clone());
        for (pi, data) in topic.partition_data.iter().enumerate() {
            let mut pr = PartitionProduceResponse::default()
                .with_index(data.index)
                .with_base_offset(-1)
                .with_log_append_time_ms(-1);
            match admit(worker, broker, &name, data, &sender, version) {
                Ok(a) => match a.duplicate {
                    Some(offset) => {
                        let said = retry_said(&a, offset);
                        notes.push(said.text("en").to_string());
                        // A `note` step: the dashboard and a recording
                        // show the edge's sequence check, which appends
                        // nothing (the book's transactions only).
                        worker.note(&said);
                        let appended_at = super::log_append_time_of(worker, &a.tp, offset);
                        pr = pr
                            .with_base_offset(offset)
                            .with_log_append_time_ms(appended_at);
                    }
                    None => admitted.push((ti, pi, a)),
                },
                Err((error, message)) => {
                    notes.push(format!(
                        "{name}-{}: {}: {message}",
                        data.index,
                        name_of(error)
                    ));
                    pr = pr
                        .with_error_code(error)
                        .with_error_message(Some(StrBytes::from_string(message)));
                }
            }
            tr.partition_responses.push(pr);
        }
        response.responses.push(tr);
    }
    let deadline = RealTime::now() + timeout;
    Some(match sender {
        Sender::Idempotent => idempotent(
            worker,
            Answering {
                response,
                notes,
                waiting: Vec::new(),
            },
            admitted,
            acks,
            deadline,
            request.acks == 0,
        ),
        Sender::Transactional(txn) => {
            let parts = admitted
                .into_iter()
                .map(|(ti, pi, a)| Part {
                    ti,
                    pi,
                    batches: records::action_batches(a.records.clone()).into(),
                    count: a.records.len(),
                    done: 0,
                    in_flight: 0,
                    admitted: a,
                    base_offset: None,
                    first_step: None,
                    step: None,
                })
                .collect();
            Handled::Continue(Box::new(TxnProduce {
                txn,
                response,
                parts,
                notes,
                deadline,
            }))
        }
    })
}

/// A response being put together: the partitions answered so far, the
/// log's notes, and the partitions that wait for pending steps.
struct Answering {
    response: ProduceResponse,
    notes: Vec<String>,
    waiting: Vec<(usize, usize, Vec<usize>)>,
}

/// What the sequence check says of an exact retry (E7): the log line and
/// the caption of its `note` step.
fn retry_said(a: &Admitted, offset: i64) -> Caption {
    let last = a
        .base_sequence
        .wrapping_add(a.records.len().max(1) as i32 - 1);
    Caption::Bilingual {
        en: format!(
            "{}: retry of producer {} seq {}..{last} answered with the original offset {offset} (duplicate, nothing appended)",
            a.tp, a.producer_id, a.base_sequence
        ),
        zh: format!(
            "{}：producer {} 的重试（序号 {}..{last}）以原 offset {offset} 回答（重复，未追加）",
            a.tp, a.producer_id, a.base_sequence
        ),
    }
}

/// The checks of the edge, before anything is appended.
fn admit(
    worker: &mut dyn Broker,
    broker: u32,
    topic: &str,
    data: &PartitionProduceData,
    sender: &Sender,
    version: i16,
) -> Result<Admitted, Refused> {
    let tp = topic_partition(topic, data.index).ok_or_else(|| {
        (
            code::UNKNOWN_TOPIC_OR_PARTITION,
            format!("no partition {} of {topic}", data.index),
        )
    })?;
    worker.read(|s| {
        leader_check(s, &tp, broker)
            .map_err(|c| (c, format!("{tp}: broker {broker} cannot take it")))
    })?;
    let empty = bytes::Bytes::new();
    let batches = records::decode_producer_batches(data.records.as_ref().unwrap_or(&empty))
        .map_err(|r| (r.code, r.message))?;
    let compacted = worker.compacted(topic);
    let all = batches.iter().flat_map(|b| &b.records);
    records::check_records(all, RealTime::unix_ms(), compacted, &tp.to_string())
        .map_err(|r| (r.code, r.message))?;
    let first = &batches[0];
    let (producer_id, epoch, base_sequence) =
        (first.producer_id, first.producer_epoch, first.base_sequence);
    let mut next = base_sequence;
    let mut records = Vec::new();
    for b in &batches {
        if b.base_sequence != next {
            return Err((
                code::OUT_OF_ORDER_SEQUENCE_NUMBER,
                format!(
                    "the batches of one request skip from sequence {next} to {}",
                    b.base_sequence
                ),
            ));
        }
        if b.transactional != matches!(sender, Sender::Transactional(_)) {
            return Err((
                code::INVALID_RECORD,
                "transactional batches need the request's transactional id, and only they".into(),
            ));
        }
        next = next.wrapping_add(b.records.len() as i32);
        records.extend(b.records.iter().cloned());
    }
    let sequences = match sender {
        // The engine's producer state judges them (E7).
        Sender::Idempotent => None,
        Sender::Transactional(txn) => {
            txn_client::check_producer(
                worker,
                txn,
                producer_id,
                epoch,
                code::INVALID_PRODUCER_EPOCH,
            )?;
            if version >= IMPLICIT_ADD_VERSION {
                add_implicitly(worker, txn, &tp)?;
            }
            let p = &worker.producers().transactional[txn];
            // Kafka's verification (KIP-890 part 1): the coordinator
            // answers TRANSACTION_ABORTABLE for a partition not in the
            // transaction (`handleVerifyPartitionsInTransaction`), which a
            // client before v11 gets as INVALID_TXN_STATE.
            let not_added = if version >= ABORTABLE_VERSION {
                code::TRANSACTION_ABORTABLE
            } else {
                code::INVALID_TXN_STATE
            };
            let open = p
                .open
                .as_ref()
                .filter(|o| o.partitions.contains(&tp))
                .ok_or_else(|| {
                    (
                        not_added,
                        format!("{tp} was not added to {txn:?}'s transaction (AddPartitionsToTxn)"),
                    )
                })?;
            if open.recalled {
                // The server restarted inside this transaction and lost
                // the client's sequences: a batch retried across the
                // restart would be appended twice. The client aborts
                // (abortable for it) and runs the transaction again.
                // TRANSACTION_ABORTABLE to a client that knows it (KIP-890;
                // `by_version` answers INVALID_TXN_STATE below v11).
                let abortable = if version >= ABORTABLE_VERSION {
                    code::TRANSACTION_ABORTABLE
                } else {
                    code::INVALID_TXN_STATE
                };
                return Err((
                    abortable,
                    format!(
                        "the server restarted during {txn:?}'s transaction: abort it and run it again"
                    ),
                ));
            }
            let fences = txn_client::fences(worker);
            let sequences = p.sequences.get(&tp).cloned().unwrap_or_default();
            txn_client::still_open(worker, txn, open).map_err(|m| {
                let kafka = if fences {
                    code::INVALID_PRODUCER_EPOCH
                } else {
                    code::INVALID_TXN_STATE
                };
                (kafka, m)
            })?;
            Some(sequences)
        }
    };
    let count = records.len() as i32;
    let verdict = sequences.map_or(SequenceVerdict::Next, |s| {
        s.check(epoch, base_sequence, count)
    });
    let duplicate = match verdict {
        SequenceVerdict::Next => None,
        SequenceVerdict::Duplicate(offset) => Some(offset),
        SequenceVerdict::OutOfOrder { expected } => {
            return Err((
                code::OUT_OF_ORDER_SEQUENCE_NUMBER,
                format!(
                    "{tp}: producer {producer_id} sent sequence {base_sequence}, expected {expected}"
                ),
            ));
        }
    };
    Ok(Admitted {
        tp,
        records,
        producer_id,
        epoch,
        base_sequence,
        duplicate,
        codec: records::compression_note(data.records.as_ref().unwrap_or(&empty)),
    })
}

/// The first Produce version that adds its partitions to the transaction
/// itself (KIP-890, transaction version 2): Kafka's
/// `produceRequestVersionToTransactionSupportedOperation` (above 11:
/// ADD_PARTITION).
pub const IMPLICIT_ADD_VERSION: i16 = 12;

/// The first Produce version whose client handles TRANSACTION_ABORTABLE
/// (above 10: GENERIC_ERROR_SUPPORTED).
const ABORTABLE_VERSION: i16 = 11;

/// Produce v12: `tp` joins the client's transaction, opened if it has none
/// ([`txn_client::open_implicitly`]).
fn add_implicitly(worker: &mut dyn Broker, txn: &str, tp: &TopicPartition) -> Result<(), Refused> {
    txn_client::open_implicitly(worker, txn)?;
    if let Some(open) = worker
        .producers_mut()
        .transactional
        .get_mut(txn)
        .and_then(|p| p.open.as_mut())
    {
        open.partitions.insert(tp.clone());
    }
    Ok(())
}

/// Notes a transactional batch's sequences for retries (see the
/// module's note).
fn remember(worker: &mut dyn Broker, txn: &str, a: &Admitted, base_offset: i64) {
    if let Some(p) = worker.producers_mut().transactional.get_mut(txn) {
        p.sequences.entry(a.tp.clone()).or_default().record(
            a.epoch,
            a.base_sequence,
            a.records.len() as i32,
            base_offset,
        );
    }
}

/// The client's identity of the part of a batch after its first `sent`
/// records (a batch split past one action's caps): sequences count on,
/// wrapping past `i32::MAX` to 0 as Kafka's do.
fn wire_after(a: &Admitted, sent: usize) -> WireIdentity {
    let sequence = (i64::from(a.base_sequence) + sent as i64) % (i64::from(i32::MAX) + 1);
    WireIdentity {
        producer_id: a.producer_id,
        epoch: a.epoch,
        base_sequence: sequence as i32,
    }
}

/// Where the batch of a `produce` or `send` step landed, as the engine
/// answered: its first offset (for an exact retry, the original's) and
/// whether it was one.
fn landed(worker: &dyn Broker, step: usize) -> Option<(i64, bool)> {
    if let Some(result) = worker.appended(step) {
        return result.offsets.map(|(first, _)| (first, result.duplicate));
    }
    worker.lands_at(step).map(|first| (first, false))
}

/// A produce error in Kafka's words: an older epoch on Produce is
/// INVALID_PRODUCER_EPOCH, as Kafka's producer state answers it.
fn produce_code(e: i16) -> i16 {
    if e == code::PRODUCER_FENCED {
        code::INVALID_PRODUCER_EPOCH
    } else {
        e
    }
}

/// The idempotent producer's records as `produce` actions carrying its
/// identity, judged by the engine (E7).
fn idempotent(
    worker: &mut dyn Broker,
    answering: Answering,
    admitted: Vec<(usize, usize, Admitted)>,
    acks: AckMode,
    deadline: Instant,
    quiet: bool,
) -> Handled {
    let Answering {
        mut response,
        mut notes,
        mut waiting,
    } = answering;
    for (ti, pi, a) in admitted {
        let (leo_before, start) = worker.log_ends(&a.tp);
        let mut pending = Vec::new();
        let mut failed = None;
        let mut appended = 0;
        let mut first: Option<(i64, bool)> = None;
        for batch in records::action_batches(a.records.clone()) {
            let n = batch.len();
            let (key, value, records) = records::payload_fields(batch);
            let action = Action::Produce {
                topic: a.tp.topic.clone(),
                partition: Some(a.tp.partition),
                key,
                value,
                records,
                acks: Some(acks),
                producer: None,
                wire: Some(wire_after(&a, appended)),
            };
            let (step, end) = steps::apply(worker, &action);
            match end {
                StepEnd::Pending => pending.push(step),
                StepEnd::Done => {}
                StepEnd::Failed((e, m)) => {
                    failed = Some((
                        produce_code(e),
                        format!(
                            "{m} ({appended} of {} record(s) appended before it)",
                            a.records.len()
                        ),
                    ));
                    break;
                }
            }
            if first.is_none() {
                // A pending retry lands where its original did, below
                // the log's end.
                first = landed(worker, step).map(|(at, dup)| (at, dup || at < leo_before));
            }
            appended += n;
        }
        let pr = &mut response.responses[ti].partition_responses[pi];
        match failed {
            Some((e, m)) => {
                notes.push(format!("{}: {}: {m}", a.tp, name_of(e)));
                pr.error_code = e;
                pr.error_message = Some(StrBytes::from_string(m));
            }
            None => {
                let (base, duplicate) = first.unwrap_or((leo_before, false));
                if duplicate && !pending.is_empty() {
                    notes.push(format!(
                        "{}; its original is still waiting for the followers, and so is this answer",
                        retry_said(&a, base).text("en")
                    ));
                } else if duplicate {
                    notes.push(retry_said(&a, base).text("en").to_string());
                } else {
                    notes.push(format!(
                        "{} offset {base} ({} record(s) of producer {} epoch {}, sequence {}{}{})",
                        a.tp,
                        a.records.len(),
                        a.producer_id,
                        a.epoch,
                        a.base_sequence,
                        a.codec,
                        if pending.is_empty() { "" } else { ", pending" }
                    ));
                }
                pr.base_offset = base;
                pr.log_start_offset = start;
                pr.log_append_time_ms = if duplicate {
                    super::log_append_time_of(worker, &a.tp, base)
                } else {
                    super::log_append_time(worker, &a.tp.topic)
                };
                if !pending.is_empty() {
                    waiting.push((ti, pi, pending));
                }
            }
        }
    }
    let outcome = format!("idempotent acks={} {}", acks.name(), notes.join(", "));
    if quiet {
        return Handled::Now(Answer {
            body: None,
            outcome: format!("{outcome}; no response (acks=0)"),
            empty_fetch: false,
            close: false,
        });
    }
    if waiting.is_empty() {
        return Handled::Now(Answer::now(ResponseKind::Produce(response), outcome));
    }
    Handled::Wait(WaitingProduce {
        response,
        parts: waiting,
        deadline,
        outcome,
    })
}

/// One partition of a transactional produce, sent a batch at a time (one
/// `send` of all its records, unless they pass one action's caps).
#[derive(Debug)]
struct Part {
    ti: usize,
    pi: usize,
    admitted: Admitted,
    batches: VecDeque<Vec<IncomingRecord>>,
    count: usize,
    /// Records of the sends that completed.
    done: usize,
    /// Records of the send in flight.
    in_flight: usize,
    base_offset: Option<i64>,
    /// The step of its first `send`, whose answer gives the base offset.
    first_step: Option<usize>,
    /// The step of the `send` in flight.
    step: Option<usize>,
}

/// A transactional produce: its records as `send` actions, one at a time.
#[derive(Debug)]
struct TxnProduce {
    txn: String,
    response: ProduceResponse,
    parts: VecDeque<Part>,
    notes: Vec<String>,
    deadline: Instant,
}

impl TxnProduce {
    fn answer(&mut self, extra: &str) -> Answer {
        let outcome = format!(
            "transactional {:?} {}{extra}",
            self.txn,
            self.notes.join(", ")
        );
        Answer::now(
            ResponseKind::Produce(std::mem::take(&mut self.response)),
            outcome,
        )
    }

    fn fail(&mut self, (e, m): Refused) {
        let part = self.parts.pop_front().expect("a part in progress");
        let sent = part.done;
        let m = format!(
            "{m} ({sent} of {} record(s) appended before it)",
            part.count
        );
        self.notes
            .push(format!("{}: {}: {m}", part.admitted.tp, name_of(e)));
        let pr = &mut self.response.responses[part.ti].partition_responses[part.pi];
        pr.error_code = e;
        pr.base_offset = -1;
        pr.error_message = Some(StrBytes::from_string(m));
    }
}

impl Continue for TxnProduce {
    fn poll(&mut self, worker: &mut dyn Broker) -> Option<Answer> {
        loop {
            let Some(part) = self.parts.front_mut() else {
                return Some(self.answer(""));
            };
            if let Some(step) = part.step {
                match steps::end_of(worker, step) {
                    StepEnd::Pending => return None,
                    StepEnd::Done => {
                        part.step = None;
                        part.done += part.in_flight;
                    }
                    StepEnd::Failed((e, m)) => {
                        part.step = None;
                        self.fail((produce_code(e), m));
                        continue;
                    }
                }
            }
            if part.batches.is_empty() {
                let part = self.parts.pop_front().expect("the front part");
                let base = part
                    .first_step
                    .and_then(|step| landed(worker, step))
                    .map(|(first, _)| first)
                    .or(part.base_offset)
                    .unwrap_or(-1);
                let (_, start) = worker.log_ends(&part.admitted.tp);
                self.notes.push(format!(
                    "{} offset {base} ({} record(s), sequence {}{})",
                    part.admitted.tp, part.count, part.admitted.base_sequence, part.admitted.codec
                ));
                let appended_at = super::log_append_time(worker, &part.admitted.tp.topic);
                let pr = &mut self.response.responses[part.ti].partition_responses[part.pi];
                pr.base_offset = base;
                pr.log_start_offset = start;
                pr.log_append_time_ms = appended_at;
                continue;
            }
            // Each send appends when applied: never behind another action
            // of the same transaction.
            if steps::txn_busy(worker, &self.txn) {
                return None;
            }
            let batch = part.batches.pop_front().expect("not empty");
            part.in_flight = batch.len();
            let tp = part.admitted.tp.clone();
            let (offset, _) = worker.log_ends(&tp);
            let (key, value, records) = records::payload_fields(batch);
            let action = Action::Send {
                txn: self.txn.clone(),
                topic: tp.topic.clone(),
                partition: Some(tp.partition),
                key,
                value,
                records,
                wire: None,
            };
            let (step, end) = steps::apply(worker, &action);
            let part = self.parts.front_mut().expect("the front part");
            match end {
                StepEnd::Failed((e, m)) => {
                    self.fail((produce_code(e), m));
                    continue;
                }
                StepEnd::Pending => part.step = Some(step),
                StepEnd::Done => part.done += part.in_flight,
            }
            if part.base_offset.is_none() {
                part.base_offset = Some(offset);
                part.first_step = Some(step);
                let txn = self.txn.clone();
                remember(worker, &txn, &part.admitted, offset);
            }
        }
    }

    fn deadline(&self) -> Instant {
        self.deadline
    }

    fn timed_out(mut self: Box<Self>, _worker: &mut dyn Broker) -> Answer {
        while let Some(part) = self.parts.pop_front() {
            let sent = part.done;
            let pr = &mut self.response.responses[part.ti].partition_responses[part.pi];
            pr.error_code = code::REQUEST_TIMED_OUT;
            pr.base_offset = -1;
            pr.error_message = Some(StrBytes::from_string(format!(
                "{sent} of {} record(s) sent before the request's timeout; the rest were not",
                part.count
            )));
        }
        self.answer("; REQUEST_TIMED_OUT")
    }
}
