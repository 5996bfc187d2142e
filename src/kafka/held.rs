//! Answers held until the journal is durable: how `mk-tui serve` shares
//! one journal `fdatasync` between the requests its driver thread handled
//! together (docs/engine-decisions.md, "Journal group commit";
//! docs/kafka-differences.md, "The journal's group commit").
//!
//! Under the kafka rules' group commit the driver thread handles a round of
//! requests (the one that woke it and every one already waiting, then the
//! timers) with the engine's journal syncs deferred
//! ([`BrokerCluster::defer_journal_syncs`]): a journaling step writes its
//! frames and returns. Every answer produced meanwhile is held here, not
//! sent. At the end of the round one [`BrokerCluster::sync_journal`] makes
//! every frame written durable, and only then are the held answers sent,
//! in the order they were produced. So no client is told anything before
//! the frames it rests on are durable, and N clients pay one sync per
//! round, not one per frame.
//!
//! If that sync fails, the engine cuts the journal back to what was durable
//! and takes it offline; the held answers of requests that journal (the
//! transactional ones, see [`rests_on_journal`]) are turned into the error
//! the handlers give a failed journal write: NOT_COORDINATOR, which Kafka
//! clients retry, as Kafka's coordinators answer a failed append to their
//! log; KAFKA_STORAGE_ERROR for a transactional Produce, as a broker
//! answers a produce to an offline log directory. The other answers are
//! sent as they were.
//!
//! Under the book's rules (E9: each frame written and fsynced before the
//! state changes) nothing is held and nothing changes.
//!
//! [`BrokerCluster::defer_journal_syncs`]: crate::engine::BrokerCluster::defer_journal_syncs
//! [`BrokerCluster::sync_journal`]: crate::engine::BrokerCluster::sync_journal

use kafka_protocol::messages::{ProducerId, RequestKind, ResponseKind};
use kafka_protocol::protocol::StrBytes;
use tokio::sync::oneshot;

use crate::engine::BrokerCluster;
use crate::kafka::broker::Answer;
use crate::kafka::errors::code;

/// Whom to answer, and whether the answer may rest on journal frames.
#[derive(Debug)]
pub struct Reply {
    tx: oneshot::Sender<Answer>,
    journaled: bool,
}

impl Reply {
    /// The reply to `body`'s request.
    pub fn to(tx: oneshot::Sender<Answer>, body: &RequestKind) -> Self {
        Self {
            tx,
            journaled: rests_on_journal(body),
        }
    }

    /// Whether the connection stopped waiting for the answer.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// Whether a request's answer may rest on journal frames it wrote: the
/// requests whose handling applies `begin`, `send`, `send_offsets`,
/// `commit` or `abort` (a transactional id's InitProducerId,
/// AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn and a
/// transactional Produce).
pub fn rests_on_journal(body: &RequestKind) -> bool {
    let id = match body {
        RequestKind::InitProducerId(r) => r.transactional_id.as_ref(),
        RequestKind::Produce(r) => r.transactional_id.as_ref(),
        RequestKind::AddPartitionsToTxn(_)
        | RequestKind::AddOffsetsToTxn(_)
        | RequestKind::TxnOffsetCommit(_)
        | RequestKind::EndTxn(_) => return true,
        _ => None,
    };
    id.is_some_and(|t| !t.0.is_empty())
}

/// The answers of one round, and the rounds' syncs.
#[derive(Debug, Default)]
pub struct Held {
    /// A round is on and the journal is group-committed: answers wait.
    holding: bool,
    answers: Vec<(Reply, Answer)>,
    /// Rounds that ended with a sync, for the log line at stop.
    pub synced_rounds: u64,
}

impl Held {
    /// Starts a round: the journal's syncs are deferred and answers held,
    /// if the journal is group-committed (the kafka rules).
    pub fn begin(&mut self, cluster: &BrokerCluster) {
        self.holding = cluster.journal_group_committed();
        if self.holding {
            cluster.defer_journal_syncs(true);
        }
    }

    /// Sends `answer` now, or at the end of the round.
    pub fn send(&mut self, reply: Reply, answer: Answer) {
        if self.holding {
            self.answers.push((reply, answer));
        } else {
            let _ = reply.tx.send(answer);
        }
    }

    /// Ends the round: syncs every journal frame written, then sends the
    /// held answers; if the sync failed, those resting on the journal as
    /// the error a failed journal write gets. Returns the failure, for the
    /// log.
    pub fn end(&mut self, cluster: &BrokerCluster) -> Option<String> {
        cluster.defer_journal_syncs(false);
        self.holding = false;
        let failed = match cluster.sync_journal() {
            Ok(synced) => {
                self.synced_rounds += u64::from(synced);
                None
            }
            Err(e) => Some(e.to_string()),
        };
        for (reply, mut answer) in std::mem::take(&mut self.answers) {
            if let Some(why) = &failed
                && reply.journaled
            {
                fail(&mut answer, why);
            }
            let _ = reply.tx.send(answer);
        }
        failed
    }
}

/// Turns a success that rested on lost journal frames into the error a
/// failed journal write gets from the handlers (errors stay as they are).
fn fail(answer: &mut Answer, why: &str) {
    const COORDINATOR: i16 = code::NOT_COORDINATOR;
    let mut failed = false;
    let mut set = |error: &mut i16, to: i16| {
        if *error == code::NONE {
            *error = to;
            failed = true;
        }
    };
    match &mut answer.body {
        Some(ResponseKind::InitProducerId(r)) => {
            set(&mut r.error_code, COORDINATOR);
            if r.error_code == COORDINATOR {
                r.producer_id = ProducerId(-1);
                r.producer_epoch = -1;
            }
        }
        Some(ResponseKind::AddPartitionsToTxn(r)) => {
            let topics = r.results_by_topic_v3_and_below.iter_mut().chain(
                r.results_by_transaction
                    .iter_mut()
                    .flat_map(|t| &mut t.topic_results),
            );
            for p in topics.flat_map(|t| &mut t.results_by_partition) {
                set(&mut p.partition_error_code, COORDINATOR);
            }
        }
        Some(ResponseKind::AddOffsetsToTxn(r)) => set(&mut r.error_code, COORDINATOR),
        Some(ResponseKind::EndTxn(r)) => set(&mut r.error_code, COORDINATOR),
        Some(ResponseKind::TxnOffsetCommit(r)) => {
            for p in r.topics.iter_mut().flat_map(|t| &mut t.partitions) {
                set(&mut p.error_code, COORDINATOR);
            }
        }
        Some(ResponseKind::Produce(r)) => {
            for p in r
                .responses
                .iter_mut()
                .flat_map(|t| &mut t.partition_responses)
            {
                if p.error_code == code::NONE {
                    p.base_offset = -1;
                    p.error_message = Some(StrBytes::from_string(why.to_string()));
                }
                set(&mut p.error_code, code::KAFKA_STORAGE_ERROR);
            }
        }
        _ => {}
    }
    if failed {
        answer.outcome = format!(
            "{}; not sent: the journal's sync failed ({why})",
            answer.outcome
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::{EndTxnResponse, FetchResponse};

    fn answer(kind: ResponseKind) -> Answer {
        Answer::now(kind, "ok")
    }

    #[test]
    fn a_failed_sync_turns_a_journaled_success_into_not_coordinator_and_keeps_errors() {
        let mut ok = answer(ResponseKind::EndTxn(EndTxnResponse::default()));
        fail(&mut ok, "disk");
        let Some(ResponseKind::EndTxn(r)) = &ok.body else {
            panic!()
        };
        assert_eq!(r.error_code, code::NOT_COORDINATOR);
        assert!(
            ok.outcome.contains("journal's sync failed"),
            "{}",
            ok.outcome
        );

        let mut refused = answer(ResponseKind::EndTxn(
            EndTxnResponse::default().with_error_code(code::INVALID_TXN_STATE),
        ));
        fail(&mut refused, "disk");
        let Some(ResponseKind::EndTxn(r)) = &refused.body else {
            panic!()
        };
        assert_eq!(r.error_code, code::INVALID_TXN_STATE);
        assert_eq!(refused.outcome, "ok");

        let mut fetch = answer(ResponseKind::Fetch(FetchResponse::default()));
        fail(&mut fetch, "disk");
        assert_eq!(fetch.outcome, "ok", "nothing to fail in a fetch");
    }

    #[test]
    fn answers_wait_for_the_end_of_a_round_only_while_holding() {
        let mut held = Held::default();
        let (tx, mut rx) = oneshot::channel();
        held.holding = true;
        held.send(
            Reply {
                tx,
                journaled: true,
            },
            answer(ResponseKind::EndTxn(EndTxnResponse::default())),
        );
        assert!(rx.try_recv().is_err(), "held");
        held.holding = false;
        let (tx2, mut rx2) = oneshot::channel();
        held.send(
            Reply {
                tx: tx2,
                journaled: false,
            },
            answer(ResponseKind::Fetch(FetchResponse::default())),
        );
        assert!(rx2.try_recv().is_ok(), "not holding: sent at once");
        let answers = std::mem::take(&mut held.answers);
        assert_eq!(answers.len(), 1);
    }
}
