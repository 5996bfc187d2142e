//! Replication vocabulary (the book's `model.py`): acks, isolation levels,
//! append results; the future an append returns, and what `read_committed`
//! asks of the transactions.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::oneshot;

use crate::engine::core::batch::RecordBatch;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::error::{MiniKafkaError, Result};

/// How many acknowledgements an append waits for (E5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum AckMode {
    /// `acks=0`: append and return no offsets.
    None,
    /// `acks=1`: complete on the leader's append.
    #[default]
    Leader,
    /// `acks=all`: complete when the ISR captured at append time has the batch.
    All,
}

impl AckMode {
    /// "0", "1" or "all", as in recordings.
    pub fn name(self) -> &'static str {
        match self {
            AckMode::None => "0",
            AckMode::Leader => "1",
            AckMode::All => "all",
        }
    }
}

impl std::str::FromStr for AckMode {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s {
            "0" => Ok(AckMode::None),
            "1" => Ok(AckMode::Leader),
            "all" | "-1" => Ok(AckMode::All),
            other => Err(format!(
                "unknown acks {other:?}: expected \"0\", \"1\" or \"all\""
            )),
        }
    }
}

/// What a consumer may read (E4, E11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IsolationLevel {
    /// Up to the high watermark.
    #[default]
    ReadUncommitted,
    /// Up to the last stable offset, without control or uncommitted
    /// transactional batches.
    ReadCommitted,
}

/// The answer to an append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendResult {
    /// First and last offset of the batch; `None` for `acks=0`.
    pub offsets: Option<(i64, i64)>,
    /// True when an idempotent retry was answered with the original offsets.
    pub duplicate: bool,
}

impl AppendResult {
    /// The base offset, if the acks mode returns one.
    pub fn base_offset(&self) -> Option<i64> {
        self.offsets.map(|(b, _)| b)
    }

    /// The last offset, if the acks mode returns one.
    pub fn last_offset(&self) -> Option<i64> {
        self.offsets.map(|(_, l)| l)
    }
}

/// The future an append returns (E5). It is ready at once for `acks=0/1` and
/// for errors found before the append; for `acks=all` it stays pending until
/// replication satisfies it, the ISR drops below the minimum, a promotion
/// fences it, or a crash drops it.
#[must_use = "an append's outcome is only known by awaiting its future"]
#[derive(Debug)]
pub struct AppendFuture {
    state: AppendState,
}

#[derive(Debug)]
enum AppendState {
    Ready(Option<Result<AppendResult>>),
    Waiting(oneshot::Receiver<Result<AppendResult>>),
}

impl AppendFuture {
    /// A future already holding its outcome.
    pub fn ready(result: Result<AppendResult>) -> Self {
        Self {
            state: AppendState::Ready(Some(result)),
        }
    }

    /// A future completed later through the sender.
    pub fn waiting(receiver: oneshot::Receiver<Result<AppendResult>>) -> Self {
        Self {
            state: AppendState::Waiting(receiver),
        }
    }

    /// The outcome if it is known now, without waiting.
    pub fn try_take(&mut self) -> Option<Result<AppendResult>> {
        match &mut self.state {
            AppendState::Ready(result) => result.take(),
            AppendState::Waiting(rx) => match rx.try_recv() {
                Ok(result) => Some(result),
                Err(oneshot::error::TryRecvError::Empty) => None,
                Err(oneshot::error::TryRecvError::Closed) => Some(Err(MiniKafkaError::Crashed)),
            },
        }
    }
}

impl Future for AppendFuture {
    type Output = Result<AppendResult>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.state {
            AppendState::Ready(result) => {
                Poll::Ready(result.take().expect("AppendFuture polled after completion"))
            }
            AppendState::Waiting(rx) => Pin::new(rx)
                .poll(cx)
                .map(|r| r.unwrap_or(Err(MiniKafkaError::Crashed))),
        }
    }
}

/// Which batches `read_committed` may return. The transaction layer (E11)
/// implements it; without transactions the LSO is the HW and no transactional
/// batch counts as committed.
pub trait TransactionVisibility {
    /// The last stable offset of `tp`, given its high watermark.
    fn last_stable_offset(&self, tp: &TopicPartition, high_watermark: i64) -> i64;
    /// Whether a transactional data batch on `tp` belongs to a committed
    /// transaction.
    fn is_committed(&self, tp: &TopicPartition, batch: &RecordBatch) -> bool;
}

/// Visibility when no transaction manager is present.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTransactions;

impl TransactionVisibility for NoTransactions {
    fn last_stable_offset(&self, _tp: &TopicPartition, high_watermark: i64) -> i64 {
        high_watermark
    }

    fn is_committed(&self, _tp: &TopicPartition, _batch: &RecordBatch) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acks_names_parse_both_ways() {
        for mode in [AckMode::None, AckMode::Leader, AckMode::All] {
            assert_eq!(mode.name().parse::<AckMode>().unwrap(), mode);
        }
        assert!("2".parse::<AckMode>().unwrap_err().contains("\"all\""));
    }

    #[tokio::test]
    async fn append_future_reports_a_dropped_sender_as_crashed() {
        let (tx, rx) = oneshot::channel();
        let mut fut = AppendFuture::waiting(rx);
        assert!(fut.try_take().is_none());
        drop(tx);
        assert!(matches!(fut.await, Err(MiniKafkaError::Crashed)));
    }
}
