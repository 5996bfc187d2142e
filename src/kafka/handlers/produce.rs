//! Produce (versions 3-9): acks 0, 1 and -1 (all).
//!
//! A partition's records become one `produce` action carrying them all
//! (`records`), with its partition and acks: one engine batch, as Kafka
//! keeps a client's batch, so the records take consecutive offsets and the
//! response's base offset is the first one's. Only a batch past the caps of
//! one action (Kafka's `message.max.bytes`) is split into several actions
//! (docs/kafka-protocol.md). Refusals a broker
//! gives before appending are found first, from the cluster as it is:
//! UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER (this broker is not
//! the leader, or the leader is stopped), NOT_ENOUGH_REPLICAS (acks=all
//! with the ISR below `min.insync.replicas`), INVALID_REQUIRED_ACKS, and
//! what the record decoder refuses.
//!
//! An acks=all partition whose appends are pending is answered when the
//! driver reports them done (see `worker`). acks=0 gets no response, as in
//! Kafka.

use std::time::Duration;

use kafka_protocol::messages::produce_request::PartitionProduceData;
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{ProduceRequest, ProduceResponse, ResponseKind};
use kafka_protocol::protocol::StrBytes;

use super::{leader_check, topic_partition};
use crate::kafka::broker::{Answer, Broker, Handled, MiniKafkaError, WaitingProduce};
use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, code_of, name_of};
use crate::kafka::records::{self, IncomingRecord};
use crate::session::{Action, Outcome};

/// The longest a produce waits for acks=all, whatever the client asks.
const MAX_TIMEOUT: Duration = Duration::from_secs(300);

pub fn handle(
    worker: &mut dyn Broker,
    broker: u32,
    request: ProduceRequest,
    version: i16,
) -> Handled {
    // Idempotent and transactional producers' batches (issue 14 items 1-2).
    if let Some(handled) = super::producer_produce::handle(worker, broker, &request, version) {
        return handled;
    }
    let acks = match request.acks {
        0 => Some("0"),
        1 => Some("1"),
        -1 => Some("all"),
        _ => None,
    };
    let mut response = ProduceResponse::default();
    let mut parts = Vec::new();
    let mut notes = Vec::new();
    for (ti, topic) in request.topic_data.iter().enumerate() {
        let name = topic.name.0.to_string();
        let mut tr = TopicProduceResponse::default().with_name(topic.name.clone());
        for (pi, data) in topic.partition_data.iter().enumerate() {
            let result = match acks {
                Some(acks) => partition(worker, broker, &name, data, acks),
                None => Err((
                    code::INVALID_REQUIRED_ACKS,
                    format!("acks={}: expected 0, 1 or -1", request.acks),
                )),
            };
            let mut pr = PartitionProduceResponse::default()
                .with_index(data.index)
                .with_log_append_time_ms(-1);
            match result {
                Ok(done) => {
                    pr = pr
                        .with_base_offset(done.base_offset)
                        .with_log_start_offset(done.log_start_offset)
                        .with_log_append_time_ms(super::log_append_time(worker, &name));
                    let state = if done.pending.is_empty() {
                        ""
                    } else {
                        ", pending"
                    };
                    let empty = bytes::Bytes::new();
                    let codec = records::compression_note(data.records.as_ref().unwrap_or(&empty));
                    notes.push(format!(
                        "{name}-{} offset {} ({} record(s){codec}{state})",
                        data.index, done.base_offset, done.count
                    ));
                    if !done.pending.is_empty() {
                        parts.push((ti, pi, done.pending));
                    }
                }
                Err((error, message)) => {
                    notes.push(format!(
                        "{name}-{}: {}: {message}",
                        data.index,
                        name_of(error)
                    ));
                    pr = pr
                        .with_error_code(error)
                        .with_base_offset(-1)
                        .with_error_message(Some(StrBytes::from_string(message)));
                }
            }
            tr.partition_responses.push(pr);
        }
        response.responses.push(tr);
    }
    let outcome = format!("acks={} {}", acks.unwrap_or("?"), notes.join(", "));
    if request.acks == 0 {
        return Handled::Now(Answer {
            body: None,
            outcome: format!("{outcome}; no response (acks=0)"),
            empty_fetch: false,
            close: false,
        });
    }
    if parts.is_empty() {
        return Handled::Now(Answer::now(ResponseKind::Produce(response), outcome));
    }
    let timeout = Duration::from_millis(request.timeout_ms.max(0) as u64).min(MAX_TIMEOUT);
    Handled::Wait(WaitingProduce {
        response,
        parts,
        deadline: RealTime::now() + timeout,
        outcome,
    })
}

/// What one partition's appends did.
struct Appended {
    base_offset: i64,
    log_start_offset: i64,
    count: usize,
    /// The steps of appends still waiting for acks=all.
    pending: Vec<usize>,
}

fn partition(
    worker: &mut dyn Broker,
    broker: u32,
    topic: &str,
    data: &PartitionProduceData,
    acks: &str,
) -> Result<Appended, (i16, String)> {
    let tp = topic_partition(topic, data.index).ok_or_else(|| {
        (
            code::UNKNOWN_TOPIC_OR_PARTITION,
            format!("no partition {} of {topic}", data.index),
        )
    })?;
    let (base_offset, log_start_offset) = worker.read(|s| {
        leader_check(s, &tp, broker)
            .map_err(|c| (c, format!("{tp}: broker {broker} cannot take it")))?;
        let set = s.partition(&tp).map_err(|e| (code_of(&e), e.to_string()))?;
        // The topic's own min.insync.replicas, else the cluster's.
        let min_isr = set.min_insync_replicas();
        if acks == "all" && set.isr().len() < min_isr {
            let e = MiniKafkaError::NotEnoughReplicas {
                tp: tp.to_string(),
                isr: set.isr().len(),
                min: min_isr,
            };
            return Err((code_of(&e), e.to_string()));
        }
        let log = &set.leader().log;
        Ok((log.leo(), log.log_start_offset()))
    })?;
    let empty = bytes::Bytes::new();
    let incoming = records::decode_produce(data.records.as_ref().unwrap_or(&empty))
        .map_err(|r| (r.code, r.message))?;
    let compacted = worker.compacted(topic);
    records::check_records(&incoming, RealTime::unix_ms(), compacted, &tp.to_string())
        .map_err(|r| (r.code, r.message))?;
    let count = incoming.len();
    let mut pending = Vec::new();
    let mut appended = 0;
    for batch in records::action_batches(incoming) {
        let n = batch.len();
        let action = produce_action(topic, tp.partition, batch, acks);
        match worker.apply(&action) {
            Outcome::Error(e) => {
                return Err((
                    e.engine().map_or(code::UNKNOWN_SERVER_ERROR, code_of),
                    format!("{e} ({appended} of {count} record(s) appended before it)"),
                ));
            }
            Outcome::Pending => pending.push(worker.last_step()),
            _ => {}
        }
        appended += n;
    }
    Ok(Appended {
        base_offset,
        log_start_offset,
        count,
        pending,
    })
}

/// The `produce` action of one batch of records.
fn produce_action(topic: &str, partition: u32, batch: Vec<IncomingRecord>, acks: &str) -> Action {
    let (key, value, records) = records::payload_fields(batch);
    Action::Produce {
        topic: topic.to_string(),
        partition: Some(partition),
        key,
        value,
        records,
        acks: Some(acks.parse().expect("0, 1 or all")),
        producer: None,
        wire: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_becomes_the_produce_action_of_a_recording() {
        let record = IncomingRecord::new(Some("k".into()), "v");
        let action = produce_action("t", 2, vec![record], "all");
        assert_eq!(
            serde_json::to_value(&action).unwrap(),
            serde_json::json!({"produce":{"topic":"t","partition":2,"key":"k","value":"v","acks":"all"}})
        );
    }

    #[test]
    fn a_batch_becomes_one_produce_action_with_its_records() {
        let batch = vec![
            IncomingRecord::new(Some("k".into()), "a"),
            IncomingRecord::new(None, "b"),
        ];
        let action = produce_action("t", 0, batch, "1");
        assert_eq!(
            serde_json::to_value(&action).unwrap(),
            serde_json::json!({"produce":{"topic":"t","partition":0,
                "records":[{"key":"k","value":"a"},{"value":"b"}],"acks":"1"}})
        );
        let back = Action::from_json(&serde_json::to_value(&action).unwrap()).unwrap();
        assert_eq!(back, action, "it reads back as it was written");
    }
}
