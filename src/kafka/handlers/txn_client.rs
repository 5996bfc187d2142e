//! What every transactional request checks first: that the client's producer
//! id is the one InitProducerId gave its transactional id, that its epoch is
//! current (under `--rules kafka` only: the book does not fence, E14), and
//! that the transaction it works on is open in the engine, opening it with a
//! `begin` action when the client starts a new one (Kafka opens a transaction
//! with its first AddPartitionsToTxn or AddOffsetsToTxn; the client's
//! begin_transaction() sends nothing).

use crate::kafka::broker::{Broker, TransactionState};
use crate::kafka::errors::code;
use crate::kafka::producers::{Ended, OpenTxn};
use crate::kafka::steps::{self, Refused, StepEnd};
use crate::session::Action;

/// Whether the cluster runs the kafka rules' zombie fencing (E14).
pub fn fences(worker: &dyn Broker) -> bool {
    worker.config().rules.fence_zombies
}

/// Fills the table's entry of `txn` after a restart emptied it, from
/// what outlived the process: the producer id and epoch InitProducerId
/// gave it, kept in the server's file ([`crate::kafka::producer_ids`]);
/// its
/// transaction as still open if the engine has not completed it, with the
/// partitions and groups the engine knows; and how its last one ended,
/// so that a client's EndTxn retried across the restart is answered as
/// the transaction really ended. Nothing if the id is unknown.
pub fn recall(worker: &mut dyn Broker, txn: &str) {
    if worker.producers().transactional.contains_key(txn) {
        return;
    }
    let latest = worker.latest_instance(txn);
    let instance = latest.and_then(|i| worker.instance(i));
    // The identity InitProducerId gave the client, as the server's file
    // kept it; under the kafka rules a directory older than that record
    // has the engine's latest (which may be a later epoch than the
    // client's: the engine takes one at each `begin`).
    let kept = worker
        .producer_ids()
        .ok()
        .and_then(|ids| ids.transactional(txn));
    let identity = kept.or_else(|| {
        fences(worker)
            .then_some(instance.as_ref())
            .flatten()
            .and_then(|d| d.producer)
            .and_then(|(id, epoch)| Some((id, i16::try_from(epoch).ok()?)))
    });
    let Some(identity) = identity else {
        return;
    };
    // Open to the client while it can still be ended by it: ONGOING, or
    // decided with its markers not all written (the book's recovery does
    // not resend them; the client's retried EndTxn does).
    let open = match (&instance, latest) {
        (Some(d), Some(index)) if !d.state.is_complete() => Some(OpenTxn {
            instance: index,
            partitions: d.partitions.iter().cloned().collect(),
            groups: d.staged_offsets.keys().cloned().collect(),
            recalled: d.state == TransactionState::Ongoing,
        }),
        _ => None,
    };
    worker
        .producers_mut()
        .init_transactional(txn, "", identity, open);
    let ended = instance
        .filter(|d| d.state.is_complete())
        .and_then(|d| ended_as(d.state));
    if let Some(p) = worker.producers_mut().transactional.get_mut(txn) {
        p.last_ended = ended;
    }
}

/// A coordinator API's answer to an engine error: a write that failed
/// for want of room (the journal, the producer identities) is
/// NOT_COORDINATOR, which clients retry, as Kafka's transaction state
/// manager answers a failed append to its transaction log.
pub fn coordinator_code((e, m): Refused) -> Refused {
    if e == code::KAFKA_STORAGE_ERROR {
        (code::NOT_COORDINATOR, m)
    } else {
        (e, m)
    }
}

/// The state of `txn`'s latest engine instance when its outcome is
/// decided but not complete (PREPARE written, markers or COMPLETE not
/// yet): the server is completing it, and a new transaction of the id
/// waits, CONCURRENT_TRANSACTIONS, as Kafka's coordinator answers while it
/// writes an id's markers.
pub fn completing(worker: &dyn Broker, txn: &str) -> Option<TransactionState> {
    let latest = worker.latest_instance(txn)?;
    let state = worker.txn_state(latest)?;
    (state != TransactionState::Ongoing && !state.is_complete()).then_some(state)
}

/// How a transaction in `state` ended, or will once its markers are
/// written: its decision is durable from PREPARE on (E9).
pub fn ended_as(state: TransactionState) -> Option<Ended> {
    match state {
        TransactionState::Ongoing => None,
        TransactionState::PrepareCommit | TransactionState::CompleteCommit => {
            Some(Ended::Committed)
        }
        TransactionState::PrepareAbort | TransactionState::CompleteAbort => Some(Ended::Aborted),
    }
}

/// Checks a request's producer id and epoch against what InitProducerId
/// gave `txn`. `stale` is the code for an old epoch: PRODUCER_FENCED on
/// the coordinator's APIs, INVALID_PRODUCER_EPOCH on Produce and
/// TxnOffsetCommit, as Kafka answers.
pub fn check_producer(
    worker: &mut dyn Broker,
    txn: &str,
    producer_id: i64,
    epoch: i16,
    stale: i16,
) -> Result<(), Refused> {
    recall(worker, txn);
    let Some(p) = worker.producers().transactional.get(txn) else {
        return Err((
            code::INVALID_PRODUCER_ID_MAPPING,
            format!("transactional id {txn:?} has no producer id: call InitProducerId first"),
        ));
    };
    if p.producer_id != producer_id {
        return Err((
            code::INVALID_PRODUCER_ID_MAPPING,
            format!(
                "producer id {producer_id} is not {txn:?}'s (it is {})",
                p.producer_id
            ),
        ));
    }
    if fences(worker) && epoch != p.epoch {
        let why = if epoch < p.epoch {
            "a newer producer with the same transactional id fenced it"
        } else {
            "an epoch this server never gave"
        };
        return Err((
            stale,
            format!(
                "{txn:?} producer epoch {epoch} is not the current {}: {why}",
                p.epoch
            ),
        ));
    }
    Ok(())
}

/// How the client's transaction stands after [`ensure_open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// Open in the engine (now or already).
    Open,
    /// Its `begin` waits in the driver (behind another action of the same
    /// transactional id); [`finish_begin`] records it once done.
    Pending(usize),
}

/// Whether the engine instance the client holds is still its open one:
/// the id's latest instance, ONGOING. `Err` says what ended it.
pub fn still_open(worker: &dyn Broker, txn: &str, open: &OpenTxn) -> Result<(), String> {
    let latest = worker.latest_instance(txn);
    let state = worker.txn_state(open.instance);
    match (latest, state) {
        (Some(l), Some(TransactionState::Ongoing)) if l == open.instance => Ok(()),
        (Some(l), _) if l != open.instance => Err(format!(
            "another begin of {txn:?} replaced the transaction this producer had open"
        )),
        (_, Some(state)) => Err(format!(
            "the cluster ended {txn:?}'s transaction ({state}) without this producer's EndTxn \
             (a transaction timeout, an abort from the dashboard, a crash)"
        )),
        _ => Err(format!("{txn:?}'s transaction is gone (a crash?)")),
    }
}

/// Makes sure the client of `txn` has a transaction open in the engine:
/// the one it holds if the cluster has not ended it, else a new one
/// through a `begin` action. A transaction the client had put partitions
/// or offsets in and that the cluster ended meanwhile is not replaced
/// silently: PRODUCER_FENCED, as Kafka fences a producer whose
/// transaction timed out.
pub fn ensure_open(worker: &mut dyn Broker, txn: &str) -> Result<Opened, Refused> {
    let held = worker
        .producers()
        .transactional
        .get(txn)
        .and_then(|p| p.open.clone());
    if let Some(open) = held {
        match still_open(worker, txn, &open) {
            Ok(()) => return Ok(Opened::Open),
            Err(why) => {
                if let Some(p) = worker.producers_mut().transactional.get_mut(txn) {
                    p.open = None;
                }
                if open.used() {
                    return Err((code::PRODUCER_FENCED, why));
                }
            }
        }
    }
    if let Some(state) = completing(worker, txn) {
        return Err((
            code::CONCURRENT_TRANSACTIONS,
            format!("{txn:?}'s previous transaction is {state}: its end is still being written"),
        ));
    }
    let (step, end) = steps::apply(
        worker,
        &Action::Begin {
            txn: txn.into(),
            init: false,
        },
    );
    match end {
        StepEnd::Done => {
            finish_begin(worker, txn);
            Ok(Opened::Open)
        }
        StepEnd::Pending => Ok(Opened::Pending(step)),
        StepEnd::Failed(e) => Err(coordinator_code(e)),
    }
}

/// Records the engine instance a finished `begin` opened as the client's.
pub fn finish_begin(worker: &mut dyn Broker, txn: &str) {
    let latest = worker.latest_instance(txn);
    if let (Some(index), Some(p)) = (latest, worker.producers_mut().transactional.get_mut(txn)) {
        p.open = Some(OpenTxn::new(index));
    }
}

/// Transaction version 2's implicit add (KIP-890: Produce v12 and
/// TxnOffsetCommit v5 add their partition or group themselves, as the
/// broker's `AddPartitionsToTxnManager` asks the coordinator to add rather
/// than only verify): opens the client's transaction with a `begin` if it
/// has none open, so a version 2 client, which sends no AddPartitionsToTxn
/// nor AddOffsetsToTxn, starts its transaction with its first write.
/// While earlier work of the id is still in the driver (its last end being
/// written), CONCURRENT_TRANSACTIONS, which the client retries, as Kafka's
/// `ReplicaManager` answers a version 2 producer then (it converts that
/// error to NOT_ENOUGH_REPLICAS only for older versions).
pub fn open_implicitly(worker: &mut dyn Broker, txn: &str) -> Result<(), Refused> {
    let held = worker
        .producers()
        .transactional
        .get(txn)
        .and_then(|p| p.open.clone());
    if let Some(open) = &held
        && still_open(worker, txn, open).is_ok()
    {
        return Ok(());
    }
    let busy = || {
        (
            code::CONCURRENT_TRANSACTIONS,
            format!("{txn:?}'s previous work is still being written"),
        )
    };
    if steps::txn_busy(worker, txn) {
        return Err(busy());
    }
    if let Some(p) = worker.producers_mut().transactional.get_mut(txn) {
        p.attempting = true;
    }
    match ensure_open(worker, txn)? {
        Opened::Open => Ok(()),
        Opened::Pending(_) => Err(busy()),
    }
}
