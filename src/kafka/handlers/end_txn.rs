//! EndTxn (versions 0-5): the client's commit_transaction() or
//! abort_transaction() as a `commit` or `abort` action (E10): PREPARE in
//! the journal, a marker on each partition written with acks=all, the
//! staged offsets published or discarded, COMPLETE. The answer waits for
//! the whole of it (the markers wait for replication), as Kafka answers
//! EndTxn once the PREPARE is durable and completes the markers after; a
//! client sees the same order either way, since it cannot start its next
//! transaction before the answer.
//!
//! An EndTxn with no transaction open is answered NONE if it repeats the
//! way the last one ended (a retry whose answer was lost, across a restart
//! too: [`txn_client::recall`]), else INVALID_TXN_STATE. A transaction
//! whose outcome was decided meanwhile (its PREPARE written: a commit
//! completed by recovery, or one whose markers could not be written) is
//! answered as it really ends: NONE for the same verb, INVALID_TXN_STATE
//! for the other, as Kafka's coordinator answers. A commit whose PREPARE
//! was written but whose markers failed (a full disk) is answered NONE:
//! decided, it is completed by the server when the markers can be written,
//! as Kafka's coordinator retries them. One the cluster aborted
//! (timeout, abort from the dashboard, crash) cannot be committed:
//! PRODUCER_FENCED under the kafka rules (Kafka fences a timed-out
//! producer), INVALID_TXN_STATE under the book's; aborting it is NONE.
//!
//! Version 5 is transaction version 2's (KIP-890): its answer carries the
//! producer id and the epoch the client goes on with, the one the end
//! bumped to under `--transaction-version 2` (the engine's
//! `next_producer_epoch`), as Kafka's coordinator answers it
//! (`TransactionCoordinator.handleEndTransaction`: with TV2 "the epoch is
//! bumped on every EndTxn" and the response returns the new one). The
//! server's table takes that epoch, so the client's next Produce v12 is
//! checked against it and a request of the old epoch is fenced. Versions
//! 0-4 answer no epoch: the client keeps its own (version 1).

use std::collections::BTreeSet;
use std::time::Duration;

use kafka_protocol::messages::{EndTxnRequest, EndTxnResponse, ProducerId, ResponseKind};

use super::txn_client::{self, fences};
use crate::engine::TopicPartition;
use crate::kafka::broker::{Answer, Broker, Continue, Handled};
use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, name_of};
use crate::kafka::producers::Ended;
use crate::kafka::steps::{self, AfterStep, Refused, StepEnd};
use crate::session::Action;

/// How long a commit may wait for its markers' replication.
const MAX_WAIT: Duration = Duration::from_secs(300);

pub fn handle(worker: &mut dyn Broker, request: &EndTxnRequest, version: i16) -> Handled {
    let handled = end(worker, request);
    if version < BUMPED_EPOCH_VERSION {
        return handled;
    }
    let txn = request.transactional_id.0.to_string();
    match handled {
        Handled::Now(answer) => Handled::Now(with_epoch(worker, &txn, answer)),
        Handled::Continue(after) => Handled::Continue(Box::new(Then { inner: after, txn })),
        other => other,
    }
}

/// The first EndTxn version that answers the producer's epoch
/// (`EndTxnRequest.LAST_STABLE_VERSION_BEFORE_TRANSACTION_V2` + 1).
pub const BUMPED_EPOCH_VERSION: i16 = 5;

/// A pending EndTxn v5: answered as the inner one, with the epoch.
#[derive(Debug)]
struct Then {
    inner: Box<dyn Continue>,
    txn: String,
}

impl Continue for Then {
    fn poll(&mut self, worker: &mut dyn Broker) -> Option<Answer> {
        let answer = self.inner.poll(worker)?;
        Some(with_epoch(worker, &self.txn, answer))
    }

    fn deadline(&self) -> std::time::Instant {
        self.inner.deadline()
    }

    fn timed_out(self: Box<Self>, worker: &mut dyn Broker) -> Answer {
        let txn = self.txn.clone();
        let answer = self.inner.timed_out(worker);
        with_epoch(worker, &txn, answer)
    }
}

/// An EndTxn v5 answer: NONE carries the producer id and the epoch the
/// client goes on with (bumped by the end under transaction version 2,
/// taken by the server's table and its file); an error carries -1 and -1,
/// as Kafka's does.
fn with_epoch(worker: &mut dyn Broker, txn: &str, mut answer: Answer) -> Answer {
    let Some(ResponseKind::EndTxn(r)) = answer.body.as_mut() else {
        return answer;
    };
    let identity = worker
        .producers()
        .transactional
        .get(txn)
        .map(|p| (p.producer_id, p.epoch));
    let ok = r.error_code == code::NONE;
    let Some((id, epoch)) = identity.filter(|_| ok) else {
        r.producer_id = ProducerId(-1);
        r.producer_epoch = -1;
        return answer;
    };
    let bumped = worker
        .latest_instance(txn)
        .and_then(|i| worker.instance(i))
        .filter(|d| d.producer.is_some_and(|(pid, _)| pid == id))
        .and_then(|d| d.next_producer_epoch)
        .and_then(|e| i16::try_from(e).ok())
        .filter(|e| *e > epoch);
    let epoch = match bumped {
        Some(next) => {
            let kept = worker
                .producer_ids()
                .and_then(|ids| ids.set_transactional(txn, (id, next)));
            if let Err(why) = kept {
                r.error_code = code::COORDINATOR_NOT_AVAILABLE;
                r.producer_id = ProducerId(-1);
                r.producer_epoch = -1;
                answer.outcome =
                    format!("{}; the bumped epoch was not kept: {why}", answer.outcome);
                return answer;
            }
            if let Some(p) = worker.producers_mut().transactional.get_mut(txn) {
                p.epoch = next;
                p.sequences.clear();
            }
            answer.outcome = format!("{}; epoch bumped to {next}", answer.outcome);
            next
        }
        None => epoch,
    };
    r.producer_id = ProducerId(id);
    r.producer_epoch = epoch;
    answer
}

fn end(worker: &mut dyn Broker, request: &EndTxnRequest) -> Handled {
    let txn = request.transactional_id.0.to_string();
    let wanted = if request.committed {
        Ended::Committed
    } else {
        Ended::Aborted
    };
    let verb = if request.committed { "commit" } else { "abort" };
    let answer = move |result: Result<(), Refused>, outcome: String| {
        let error = result.err().map_or(code::NONE, |(e, _)| e);
        Answer::now(
            ResponseKind::EndTxn(EndTxnResponse::default().with_error_code(error)),
            outcome,
        )
    };
    let refused =
        move |txn: &str, (e, m): &Refused| format!("{verb} {txn:?}: {}: {m}", name_of(*e));
    if let Err(e) = txn_client::check_producer(
        worker,
        &txn,
        request.producer_id.0,
        request.producer_epoch,
        code::PRODUCER_FENCED,
    ) {
        let outcome = refused(&txn, &e);
        return Handled::Now(answer(Err(e), outcome));
    }
    let producer = &worker.producers().transactional[&txn];
    let (open, last, attempting) = (
        producer.open.clone(),
        producer.last_ended,
        producer.attempting,
    );
    let Some(open) = open else {
        if let Some(state) = txn_client::completing(worker, &txn) {
            let e = (
                code::CONCURRENT_TRANSACTIONS,
                format!(
                    "{txn:?}'s previous transaction is {state}: its end is still being written"
                ),
            );
            let outcome = refused(&txn, &e);
            return Handled::Now(answer(Err(e), outcome));
        }
        if attempting && wanted == Ended::Aborted {
            end_locally(worker, &txn, wanted);
            return Handled::Now(answer(
                Ok(()),
                format!("{verb} {txn:?}: nothing to abort (the transaction was never opened)"),
            ));
        }
        return Handled::Now(if last == Some(wanted) {
            answer(Ok(()), format!("{verb} {txn:?}: already done (a retry)"))
        } else {
            let e = (
                code::INVALID_TXN_STATE,
                format!("{txn:?} has no transaction open"),
            );
            let outcome = refused(&txn, &e);
            answer(Err(e), outcome)
        });
    };
    let decided = worker
        .txn_state(open.instance)
        .and_then(|state| txn_client::ended_as(state).map(|e| (e, state)));
    // Resuming a commit (or abort) whose PREPARE holds and whose markers
    // could not all be written (a full disk) is the action itself again.
    let resumes = decided.is_some_and(|(e, state)| e == wanted && !state.is_complete());
    if let (false, Err(why)) = (resumes, txn_client::still_open(worker, &txn, &open)) {
        // Decided already (a commit completed by recovery, one whose
        // PREPARE holds): answered as it really ends, as Kafka's
        // coordinator answers an EndTxn of a transaction in PREPARE_* or
        // COMPLETE_*. An abort the cluster made (a timeout, the
        // dashboard, a fencing) is left to the rules below.
        if let Some((ended, state)) =
            decided.filter(|(e, _)| *e == Ended::Committed || wanted == Ended::Aborted)
        {
            end_locally(worker, &txn, ended);
            return Handled::Now(if ended == wanted {
                answer(Ok(()), format!("{verb} {txn:?}: already {state}: {why}"))
            } else {
                let e = (
                    code::INVALID_TXN_STATE,
                    format!("{txn:?}'s transaction is {state}, decided before this {verb}"),
                );
                let outcome = refused(&txn, &e);
                answer(Err(e), outcome)
            });
        }
        end_locally(worker, &txn, wanted);
        return Handled::Now(if wanted == Ended::Aborted {
            answer(Ok(()), format!("{verb} {txn:?}: already ended: {why}"))
        } else {
            let kafka = if fences(worker) {
                code::PRODUCER_FENCED
            } else {
                code::INVALID_TXN_STATE
            };
            let e = (kafka, why);
            let outcome = refused(&txn, &e);
            answer(Err(e), outcome)
        });
    }
    let action = if request.committed {
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
    let (step, end) = steps::apply(worker, &action);
    let added = open.partitions.clone();
    let instance = open.instance;
    let finish = move |worker: &mut dyn Broker, result: Result<(), Refused>| {
        // Failed after its PREPARE was written (a marker on a full disk):
        // the outcome is decided, and the server completes it once the
        // markers can be written (`Worker::complete_decided`), as Kafka's
        // coordinator answers EndTxn once the PREPARE is durable and
        // retries the markers itself.
        let decided = result.is_err()
            && worker.txn_state(instance).and_then(txn_client::ended_as) == Some(wanted);
        let outcome = match &result {
            Ok(()) => format!(
                "{verb} {txn:?}: done ({})",
                marked(worker, instance, &added)
            ),
            Err((_, m)) if decided => format!(
                "{verb} {txn:?}: decided (its PREPARE is written); the rest failed ({m}) and the server completes it when it can"
            ),
            Err(e) => refused(&txn, e),
        };
        let result = if decided {
            Ok(())
        } else {
            result.map_err(txn_client::coordinator_code)
        };
        if result.is_ok() {
            end_locally(worker, &txn, wanted);
        }
        answer(result, outcome)
    };
    match end {
        StepEnd::Pending => Handled::Continue(AfterStep::new(
            step,
            RealTime::now() + MAX_WAIT,
            Box::new(finish),
        )),
        StepEnd::Done => Handled::Now(finish(worker, Ok(()))),
        StepEnd::Failed(e) => Handled::Now(finish(worker, Err(e))),
    }
}

/// The client's transaction is over: nothing open, its end remembered.
/// What the log line says was marked: the partitions the transaction
/// wrote to. A partition added (AddPartitionsToTxn) but never written is
/// named apart: it gets no marker, where Kafka's coordinator marks every
/// partition added, since the engine learns of a partition at its first
/// write (E10, as the book; docs/kafka-differences.md, "A partition added
/// but never written").
fn marked(worker: &dyn Broker, instance: usize, added: &BTreeSet<TopicPartition>) -> String {
    let written = worker
        .instance(instance)
        .map(|d| d.partitions)
        .unwrap_or_default();
    let unwritten = added.iter().filter(|tp| !written.contains(tp)).count();
    let mut text = format!("{} partition(s) marked", written.len());
    if unwritten > 0 {
        text += &format!("; {unwritten} added but never written, so not marked");
    }
    text
}

fn end_locally(worker: &mut dyn Broker, txn: &str, ended: Ended) {
    if let Some(p) = worker.producers_mut().transactional.get_mut(txn) {
        p.open = None;
        p.last_ended = Some(ended);
        p.attempting = false;
    }
}
