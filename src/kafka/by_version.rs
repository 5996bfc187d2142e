//! Error codes as the client's API version knows them: Kafka answers an old
//! version with the older code its clients handle, not with a code added
//! later. The handlers choose the code for the newest version; [`downgrade`]
//! rewrites a response for the version it is sent at, once, for every API
//! (whatever path the error took: a check of the request, an engine error of
//! an applied action, a timeout).
//!
//! Kafka's rules, read from its sources (docs/kafka-protocol.md, "Error
//! codes by API version"):
//! - PRODUCER_FENCED (90, KIP-588) to INVALID_PRODUCER_EPOCH (47) on
//!   InitProducerId below v4, AddPartitionsToTxn, AddOffsetsToTxn and
//!   EndTxn below v2 (`KafkaApis`: "older clients could not understand
//!   the new PRODUCER_FENCED error code").
//! - PRODUCER_FENCED to INVALID_PRODUCER_EPOCH on Produce and
//!   TxnOffsetCommit at every version: a stale epoch is found by the log
//!   (`ProducerAppendInfo`), which answers INVALID_PRODUCER_EPOCH since
//!   Kafka 2.7, and the transaction verification does the same
//!   (`AddPartitionsToTxnManager`: "producers expect to handle
//!   INVALID_PRODUCER_EPOCH").
//! - COORDINATOR_LOAD_IN_PROGRESS (14) to COORDINATOR_NOT_AVAILABLE (15)
//!   on TxnOffsetCommit below v2 (KAFKA-7296).
//! - TRANSACTION_ABORTABLE (120, KIP-890) exists for Produce v11+,
//!   TxnOffsetCommit v4+ (`AddPartitionsToTxnManager`'s
//!   GENERIC_ERROR_SUPPORTED), EndTxn and AddOffsetsToTxn v4,
//!   AddPartitionsToTxn and InitProducerId v5; answered to an older version it becomes
//!   INVALID_TXN_STATE, as Kafka's verification does for Produce v10 and
//!   below ("For backward compatibility with clients").

use kafka_protocol::messages::ResponseKind;

use crate::kafka::errors::{code, name_of};

const COORDINATOR_LOAD_IN_PROGRESS: i16 = 14;
const TRANSACTION_ABORTABLE: i16 = code::TRANSACTION_ABORTABLE;

/// The code a client of `api_version` gets for `error` in `response`'s
/// API: `error` itself unless Kafka downgrades it there.
fn for_version(response: &ResponseKind, version: i16, error: i16) -> i16 {
    use ResponseKind as R;
    match (response, error) {
        (R::InitProducerId(_), code::PRODUCER_FENCED) if version < 4 => {
            code::INVALID_PRODUCER_EPOCH
        }
        (
            R::AddPartitionsToTxn(_) | R::AddOffsetsToTxn(_) | R::EndTxn(_),
            code::PRODUCER_FENCED,
        ) if version < 2 => code::INVALID_PRODUCER_EPOCH,
        (R::Produce(_) | R::TxnOffsetCommit(_), code::PRODUCER_FENCED) => {
            code::INVALID_PRODUCER_EPOCH
        }
        (R::TxnOffsetCommit(_), COORDINATOR_LOAD_IN_PROGRESS) if version < 2 => {
            code::COORDINATOR_NOT_AVAILABLE
        }
        (R::Produce(_), TRANSACTION_ABORTABLE) if version <= 10 => code::INVALID_TXN_STATE,
        // `txnOffsetCommitRequestVersionToTransactionSupportedOperation`:
        // above 3, GENERIC_ERROR_SUPPORTED.
        (R::TxnOffsetCommit(_), TRANSACTION_ABORTABLE) if version <= 3 => code::INVALID_TXN_STATE,
        // KIP-890's versions that add the code: EndTxn v4, AddOffsetsToTxn
        // v4, AddPartitionsToTxn v5, InitProducerId v5.
        (R::EndTxn(_) | R::AddOffsetsToTxn(_), TRANSACTION_ABORTABLE) if version < 4 => {
            code::INVALID_TXN_STATE
        }
        (R::AddPartitionsToTxn(_) | R::InitProducerId(_), TRANSACTION_ABORTABLE) if version < 5 => {
            code::INVALID_TXN_STATE
        }
        _ => error,
    }
}

/// Rewrites the error codes of `response`, answered at `version`, as
/// Kafka answers that version. Returns each change, `(from, to)`, for the
/// request log.
pub fn downgrade(response: &mut ResponseKind, version: i16) -> Vec<(i16, i16)> {
    let mut codes = error_codes(response);
    let mut changed = Vec::new();
    for c in &mut codes {
        let to = for_version(response, version, *c);
        if to != *c {
            changed.push((*c, to));
            *c = to;
        }
    }
    if !changed.is_empty() {
        set_error_codes(response, &codes);
        changed.dedup();
    }
    changed
}

/// The request log's note of what [`downgrade`] changed: nothing, or
/// ` (PRODUCER_FENCED answered as INVALID_PRODUCER_EPOCH at this version)`.
pub fn said(changed: &[(i16, i16)]) -> String {
    if changed.is_empty() {
        return String::new();
    }
    let each: Vec<String> = changed
        .iter()
        .map(|(from, to)| format!("{} answered as {}", name_of(*from), name_of(*to)))
        .collect();
    format!(" ({} at this version, as Kafka does)", each.join(", "))
}

/// The error codes of the responses whose codes depend on the version, in
/// a fixed order ([`set_error_codes`] writes them back in the same order).
fn error_codes(response: &ResponseKind) -> Vec<i16> {
    use ResponseKind as R;
    match response {
        R::InitProducerId(r) => vec![r.error_code],
        R::AddOffsetsToTxn(r) => vec![r.error_code],
        R::EndTxn(r) => vec![r.error_code],
        R::AddPartitionsToTxn(r) => r
            .results_by_topic_v3_and_below
            .iter()
            .chain(
                r.results_by_transaction
                    .iter()
                    .flat_map(|t| &t.topic_results),
            )
            .flat_map(|t| t.results_by_partition.iter())
            .map(|p| p.partition_error_code)
            .collect(),
        R::TxnOffsetCommit(r) => r
            .topics
            .iter()
            .flat_map(|t| t.partitions.iter())
            .map(|p| p.error_code)
            .collect(),
        R::Produce(r) => r
            .responses
            .iter()
            .flat_map(|t| t.partition_responses.iter())
            .map(|p| p.error_code)
            .collect(),
        _ => Vec::new(),
    }
}

fn set_error_codes(response: &mut ResponseKind, codes: &[i16]) {
    use ResponseKind as R;
    let mut codes = codes.iter().copied();
    let mut next = |c: &mut i16| {
        if let Some(n) = codes.next() {
            *c = n;
        }
    };
    match response {
        R::InitProducerId(r) => next(&mut r.error_code),
        R::AddOffsetsToTxn(r) => next(&mut r.error_code),
        R::EndTxn(r) => next(&mut r.error_code),
        R::AddPartitionsToTxn(r) => r
            .results_by_topic_v3_and_below
            .iter_mut()
            .chain(
                r.results_by_transaction
                    .iter_mut()
                    .flat_map(|t| t.topic_results.iter_mut()),
            )
            .flat_map(|t| t.results_by_partition.iter_mut())
            .for_each(|p| next(&mut p.partition_error_code)),
        R::TxnOffsetCommit(r) => r
            .topics
            .iter_mut()
            .flat_map(|t| t.partitions.iter_mut())
            .for_each(|p| next(&mut p.error_code)),
        R::Produce(r) => r
            .responses
            .iter_mut()
            .flat_map(|t| t.partition_responses.iter_mut())
            .for_each(|p| next(&mut p.error_code)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use kafka_protocol::messages::add_partitions_to_txn_response::{
        AddPartitionsToTxnPartitionResult, AddPartitionsToTxnTopicResult,
    };
    use kafka_protocol::messages::produce_response::{
        PartitionProduceResponse, TopicProduceResponse,
    };
    use kafka_protocol::messages::{
        AddOffsetsToTxnResponse, AddPartitionsToTxnResponse, EndTxnResponse,
        InitProducerIdResponse, ProduceResponse,
    };

    use super::*;

    fn end_txn(error: i16) -> ResponseKind {
        ResponseKind::EndTxn(EndTxnResponse::default().with_error_code(error))
    }

    fn code_of(r: &ResponseKind) -> Vec<i16> {
        error_codes(r)
    }

    #[test]
    fn producer_fenced_is_invalid_producer_epoch_below_the_version_that_knows_it() {
        // (response, the first version that knows PRODUCER_FENCED)
        type Make = fn(i16) -> ResponseKind;
        let cases: Vec<(Make, i16)> = vec![
            (end_txn, 2),
            (
                |e| {
                    ResponseKind::AddOffsetsToTxn(
                        AddOffsetsToTxnResponse::default().with_error_code(e),
                    )
                },
                2,
            ),
            (
                |e| {
                    ResponseKind::InitProducerId(
                        InitProducerIdResponse::default().with_error_code(e),
                    )
                },
                4,
            ),
        ];
        for (make, knows) in cases {
            for version in 0..=4 {
                let mut r = make(code::PRODUCER_FENCED);
                let changed = downgrade(&mut r, version);
                let expected = if version < knows {
                    code::INVALID_PRODUCER_EPOCH
                } else {
                    code::PRODUCER_FENCED
                };
                assert_eq!(code_of(&r), [expected], "{r:?} v{version}");
                assert_eq!(changed.is_empty(), version >= knows, "v{version}");
            }
        }
    }

    #[test]
    fn every_partition_of_add_partitions_and_produce_is_rewritten() {
        let partitions = |codes: &[i16]| {
            codes
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    AddPartitionsToTxnPartitionResult::default()
                        .with_partition_index(i as i32)
                        .with_partition_error_code(*c)
                })
                .collect()
        };
        let mut r = ResponseKind::AddPartitionsToTxn(
            AddPartitionsToTxnResponse::default().with_results_by_topic_v3_and_below(vec![
                AddPartitionsToTxnTopicResult::default().with_results_by_partition(partitions(&[
                    code::PRODUCER_FENCED,
                    code::PRODUCER_FENCED,
                ])),
            ]),
        );
        assert_eq!(downgrade(&mut r.clone(), 2), []);
        assert_eq!(
            downgrade(&mut r, 1),
            [(code::PRODUCER_FENCED, code::INVALID_PRODUCER_EPOCH)]
        );
        assert_eq!(code_of(&r), [47, 47]);

        // Produce: at every version, and only the fenced partition.
        let mut p = ResponseKind::Produce(ProduceResponse::default().with_responses(vec![
            TopicProduceResponse::default().with_partition_responses(vec![
                PartitionProduceResponse::default().with_error_code(code::NONE),
                PartitionProduceResponse::default().with_error_code(code::PRODUCER_FENCED),
                PartitionProduceResponse::default().with_error_code(code::NOT_LEADER_OR_FOLLOWER),
            ]),
        ]));
        downgrade(&mut p, 9);
        assert_eq!(code_of(&p), [0, 47, 6]);
    }

    #[test]
    fn other_codes_and_apis_are_left_as_they_are() {
        let mut r = end_txn(code::INVALID_TXN_STATE);
        assert_eq!(downgrade(&mut r, 0), []);
        assert_eq!(code_of(&r), [code::INVALID_TXN_STATE]);
        let mut r = end_txn(TRANSACTION_ABORTABLE);
        downgrade(&mut r, 3);
        assert_eq!(code_of(&r), [code::INVALID_TXN_STATE]);
    }
}
