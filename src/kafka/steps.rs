//! Applying an action for a request and learning how it ended, now or at
//! a later step (transactional requests). A `begin`, `send` or
//! `commit` may stay pending in the driver (waiting for acks=all, or
//! behind an earlier action of the same transaction, SPEC §4); its request
//! is answered when the driver reports the step finished, with the Kafka
//! code of the engine's error if it failed.

use std::time::Instant;

use crate::kafka::broker::{Answer, Broker, Continue};
use crate::kafka::errors::{code, code_of, code_of_name};
use crate::session::{Action, Outcome};

/// A Kafka error code and the message a response carries.
pub type Refused = (i16, String);

/// How an applied action's step stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepEnd {
    Pending,
    Done,
    Failed(Refused),
}

/// Applies `action`; returns its step and how it stands.
pub fn apply(worker: &mut dyn Broker, action: &Action) -> (usize, StepEnd) {
    let outcome = worker.apply(action);
    let step = worker.last_step();
    let end = match outcome {
        Outcome::Ok | Outcome::Recovered(_) => StepEnd::Done,
        Outcome::Pending => StepEnd::Pending,
        Outcome::Error(e) => {
            let kafka = e.engine().map_or(code::INVALID_REQUEST, code_of);
            StepEnd::Failed((kafka, e.to_string()))
        }
    };
    (step, end)
}

/// How the action of `step` stands now: still pending, done, or failed
/// with the error the driver recorded for it.
pub fn end_of(worker: &dyn Broker, step: usize) -> StepEnd {
    if worker.pending().iter().any(|p| p.action_step == step) {
        return StepEnd::Pending;
    }
    match worker.step_error(step) {
        Some((kind, message)) => StepEnd::Failed((code_of_name(kind), message)),
        None => StepEnd::Done,
    }
}

/// Whether an action of transaction `txn` is still pending in the driver.
pub fn txn_busy(worker: &dyn Broker, txn: &str) -> bool {
    worker
        .pending()
        .iter()
        .any(|p| p.txn.as_deref() == Some(txn))
}

/// What a request does once its step has ended.
pub type Finish = Box<dyn FnOnce(&mut dyn Broker, Result<(), Refused>) -> Answer + Send>;

/// A request answered when one applied action's step ends (or at the
/// deadline, with REQUEST_TIMED_OUT).
pub struct AfterStep {
    step: usize,
    deadline: Instant,
    finish: Option<Finish>,
}

impl std::fmt::Debug for AfterStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfterStep")
            .field("step", &self.step)
            .finish_non_exhaustive()
    }
}

impl AfterStep {
    pub fn new(step: usize, deadline: Instant, finish: Finish) -> Box<Self> {
        Box::new(Self {
            step,
            deadline,
            finish: Some(finish),
        })
    }
}

impl Continue for AfterStep {
    fn poll(&mut self, worker: &mut dyn Broker) -> Option<Answer> {
        let result = match end_of(worker, self.step) {
            StepEnd::Pending => return None,
            StepEnd::Done => Ok(()),
            StepEnd::Failed(e) => Err(e),
        };
        let finish = self.finish.take()?;
        Some(finish(worker, result))
    }

    fn deadline(&self) -> Instant {
        self.deadline
    }

    fn timed_out(mut self: Box<Self>, worker: &mut dyn Broker) -> Answer {
        let finish = self.finish.take().expect("finished only once");
        finish(
            worker,
            Err((
                code::REQUEST_TIMED_OUT,
                format!(
                    "step {} is still pending in the cluster (waiting for replication?)",
                    self.step
                ),
            )),
        )
    }
}
