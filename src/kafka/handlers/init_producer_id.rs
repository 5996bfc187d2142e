//! InitProducerId (versions 0-4): a producer id and epoch for an
//! idempotent or a transactional producer (E7, E10, E14).
//!
//! - Idempotent (no transactional id): a new id, from 1000, never one
//!   given before ([`crate::kafka::producer_ids`]), as Kafka's coordinator
//!   answers (a client that names its id and epoch, KIP-360, gets a new
//!   id too). Nothing changes in the engine until the producer's first
//!   batch, a `produce` carrying its identity.
//! - Transactional, `--rules kafka`: a `begin` action. The engine gives
//!   the transactional id its next producer epoch and, if a transaction of
//!   the id is still open (a zombie's), completes and fences it, as
//!   Kafka's coordinator does on InitProducerId. The response carries the
//!   engine's producer id and epoch, so the client's batches carry the
//!   ones the dashboard shows.
//! - Transactional, the book's rules: the book gives transactions no
//!   producer id and does not fence, so the server gives the id (the same
//!   one at the next epoch for a known transactional id), and an id whose
//!   transaction is still open in the engine is answered
//!   CONCURRENT_TRANSACTIONS (the book refuses `begin` of an active id;
//!   the client retries until the transaction ends, or the lecturer aborts
//!   it).
//!
//! The request's `transaction_timeout_ms` is not used: the engine's
//! `transaction_timeout_ms` (kafka rules) is the cluster's.

use std::time::Duration;

use kafka_protocol::messages::{
    InitProducerIdRequest, InitProducerIdResponse, ProducerId, ResponseKind,
};

use super::txn_client::fences;
use crate::kafka::broker::{Answer, Broker, Handled};
use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, name_of};
use crate::kafka::producers::OpenTxn;
use crate::kafka::steps::{self, AfterStep, Refused, StepEnd};
use crate::session::Action;

/// How long a `begin` may wait behind a zombie's pending work.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// Kafka's default `transaction.max.timeout.ms`: the longest
/// `transaction.timeout.ms` a transactional producer may ask for.
pub const MAX_TRANSACTION_TIMEOUT_MS: i32 = 900_000;

pub fn handle(
    worker: &mut dyn Broker,
    client_id: &str,
    request: &InitProducerIdRequest,
    version: i16,
) -> Handled {
    let txn = request.transactional_id.as_ref().map(|t| t.0.to_string());
    if txn.as_deref() == Some("") {
        // Kafka's coordinator: an empty id is neither idempotent (null)
        // nor a transactional id.
        return Handled::Now(answer(
            Err((code::INVALID_REQUEST, String::new())),
            "INVALID_REQUEST: an empty transactional id (null asks for an idempotent producer)",
        ));
    }
    let Some(txn) = txn else {
        return Handled::Now(match worker.init_idempotent() {
            Ok((id, epoch)) => answer(
                Ok((id, epoch)),
                format!("idempotent producer id {id} epoch {epoch}"),
            ),
            Err(why) => not_allocated(why.to_string()),
        });
    };
    // Kafka's coordinator refuses a timeout it could not keep before
    // anything else; the engine's own (60 s) is used whatever is asked
    // (docs/kafka-differences.md, "transaction.timeout.ms").
    let timeout = request.transaction_timeout_ms;
    if !(1..=MAX_TRANSACTION_TIMEOUT_MS).contains(&timeout) {
        return Handled::Now(answer(
            Err((code::INVALID_TRANSACTION_TIMEOUT, String::new())),
            format!(
                "transactional id {txn:?}: INVALID_TRANSACTION_TIMEOUT: {timeout} ms; \
                 give 1 to {MAX_TRANSACTION_TIMEOUT_MS} (Kafka's transaction.max.timeout.ms)"
            ),
        ));
    }
    // After a restart: what the journal or the server's file kept of it.
    super::txn_client::recall(worker, &txn);
    if !fences(worker) {
        return Handled::Now(book_rules(worker, client_id, &txn));
    }
    if version >= 3
        && let Err(e) = expected_is_current(worker, &txn, request)
    {
        let outcome = format!("transactional id {txn:?}: {}: {}", name_of(e.0), e.1);
        return Handled::Now(answer(Err(e), outcome));
    }
    // A new producer: a new epoch under either transaction version. The
    // log line says what it fenced only when there was an older epoch.
    let before = worker
        .producers()
        .transactional
        .get(&txn)
        .map(|p| (p.producer_id, p.epoch));
    let begin = Action::Begin {
        txn: txn.clone(),
        init: true,
    };
    let (step, end) = steps::apply(worker, &begin);
    let client = client_id.to_string();
    let finish = move |worker: &mut dyn Broker, result: Result<(), Refused>| {
        let result = result
            .map_err(super::txn_client::coordinator_code)
            .and_then(|()| kafka_identity(worker, &txn, &client));
        let outcome = match &result {
            Ok((id, epoch)) => match before {
                Some((old_id, old_epoch)) => format!(
                    "transactional id {txn:?}: producer id {id} epoch {epoch} (producer id {old_id} epoch {old_epoch} fenced; a transaction it left open is ended)"
                ),
                None => format!("transactional id {txn:?}: producer id {id} epoch {epoch} (new)"),
            },
            Err((e, m)) => format!("transactional id {txn:?}: {}: {m}", name_of(*e)),
        };
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

/// KIP-360 (v3+): a producer that names the id and epoch it holds gets the
/// next epoch only if they are still the transactional id's; one that a
/// newer producer fenced is PRODUCER_FENCED, as Kafka's coordinator
/// answers, instead of fencing the newer one in turn. (Kafka also accepts
/// a retry of a bump whose answer was lost, by the epoch before it; this
/// server keeps no previous epoch and answers it PRODUCER_FENCED.)
fn expected_is_current(
    worker: &dyn Broker,
    txn: &str,
    request: &InitProducerIdRequest,
) -> Result<(), Refused> {
    let (id, epoch) = (request.producer_id.0, request.producer_epoch);
    let Some(p) = worker.producers().transactional.get(txn) else {
        return Ok(());
    };
    if id < 0 || (id == p.producer_id && epoch == p.epoch) {
        return Ok(());
    }
    Err((
        code::PRODUCER_FENCED,
        format!(
            "the producer names id {id} epoch {epoch}; {txn:?} is now id {} epoch {}",
            p.producer_id, p.epoch
        ),
    ))
}

/// After the kafka rules' `begin`: the engine's producer id and epoch of
/// `txn`, registered as the client's, with the begun transaction open.
fn kafka_identity(worker: &mut dyn Broker, txn: &str, client: &str) -> Result<(i64, i16), Refused> {
    let index = worker.latest_instance(txn);
    let producer = index.and_then(|i| worker.instance(i)?.producer);
    let (Some(index), Some((id, epoch))) = (index, producer) else {
        return Err((
            code::UNKNOWN_SERVER_ERROR,
            format!("the engine's begin of {txn:?} gave it no producer id"),
        ));
    };
    let epoch = i16::try_from(epoch).map_err(|_| {
        (
            code::UNKNOWN_SERVER_ERROR,
            format!("{txn:?}'s producer epoch {epoch} does not fit Kafka's 16 bits"),
        )
    })?;
    // The identity the client holds from now on, for after a restart:
    // the engine takes the next epoch at each `begin`, the client keeps
    // this one (transaction version 1).
    worker
        .producer_ids()
        .and_then(|ids| ids.set_transactional(txn, (id, epoch)))
        .map_err(|why| (code::COORDINATOR_NOT_AVAILABLE, why.to_string()))?;
    worker
        .producers_mut()
        .init_transactional(txn, client, (id, epoch), Some(OpenTxn::new(index)));
    Ok((id, epoch))
}

/// The book's rules: the server's own id; an open transaction of the id
/// is not fenced but waited for.
fn book_rules(worker: &mut dyn Broker, client: &str, txn: &str) -> Answer {
    let unstable = worker
        .latest_instance(txn)
        .and_then(|i| worker.txn_state(i))
        .filter(|state| state.is_unstable());
    if let Some(state) = unstable {
        return answer(
            Err((code::CONCURRENT_TRANSACTIONS, String::new())),
            format!(
                "transactional id {txn:?}: CONCURRENT_TRANSACTIONS: its transaction is {state} and the book's rules neither fence it nor time it out: the producer that began it must end it (else open the data directory in the dashboard, mk-tui --data-dir DIR, and press a; or serve with --rules kafka)"
            ),
        );
    }
    let identity = match worker.next_transactional_identity(txn) {
        Ok(identity) => identity,
        Err(why) => return not_allocated(why.to_string()),
    };
    worker
        .producers_mut()
        .init_transactional(txn, client, identity, None);
    answer(
        Ok(identity),
        format!(
            "transactional id {txn:?}: producer id {} epoch {} (the server's; the book's transactions have none)",
            identity.0, identity.1
        ),
    )
}

/// No id could be given durably (the data directory cannot be written):
/// COORDINATOR_NOT_AVAILABLE, which a client retries, rather than an id a
/// restart could give again.
fn not_allocated(why: String) -> Answer {
    answer(
        Err((code::COORDINATOR_NOT_AVAILABLE, why.clone())),
        format!("COORDINATOR_NOT_AVAILABLE: no producer id given: {why}"),
    )
}

fn answer(result: Result<(i64, i16), Refused>, outcome: impl Into<String>) -> Answer {
    let response = match result {
        Ok((id, epoch)) => InitProducerIdResponse::default()
            .with_producer_id(ProducerId(id))
            .with_producer_epoch(epoch),
        Err((e, _)) => InitProducerIdResponse::default()
            .with_error_code(e)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1),
    };
    Answer::now(ResponseKind::InitProducerId(response), outcome)
}
