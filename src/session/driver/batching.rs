//! The producer's accumulator in the [`Driver`] (E17): `accumulate` puts a
//! record into a named producer's batch for its partition, `flush` sends
//! every batch, and an `advance_clock` sends the batches whose linger has
//! run out (the book's `run_due_flushes`, run when the clock moves, since
//! the engine clock moves only then). Each batch sent is an append like a
//! `produce`'s, pending until its acks come. The accumulator is the
//! producer's, in the driver's memory: a crash drops what waits in it, as
//! the book's `cluster.crash()` crashes its producers.

use super::{Driver, OpEnd, PendingOp};
use crate::engine::Clock;
use crate::engine::producer::SentBatch;
use crate::engine::replication::model::AppendFuture;
use crate::engine::{AckMode, MiniKafkaError, TopicPartition};
use crate::session::outcome::ActionError;
use crate::session::said::Said;

/// What an accumulating step sent, and its sentence.
pub(super) struct Batched {
    pub ops: Vec<PendingOp>,
    pub told: Said,
}

/// The settings an `accumulate` gives (each `None`: as the producer has it).
pub(super) struct Batching {
    pub acks: Option<AckMode>,
    pub batch_size: Option<u64>,
    pub linger_ms: Option<u64>,
    pub max_buffer_bytes: Option<u64>,
}

impl Driver {
    /// The named producer, made on its first use (`produce`'s and
    /// `accumulate`'s).
    pub(super) fn producer_named(
        &mut self,
        name: &str,
    ) -> Result<&mut crate::engine::producer::Producer, ActionError> {
        if !self.producers.contains_key(name) {
            let p = self.cluster.producer(name)?;
            self.producers.insert(name.to_string(), p);
        }
        Ok(self.producers.get_mut(name).expect("inserted above"))
    }

    /// `accumulate`: the record waits in `name`'s batch for its partition;
    /// a batch it fills is sent at once.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_accumulate(
        &mut self,
        name: &str,
        topic: &str,
        partition: Option<u32>,
        key: Option<&str>,
        value: &str,
        settings: Batching,
    ) -> Result<Batched, ActionError> {
        let now = self.clock.now_ms();
        let producer = self.producer_named(name)?;
        let acc = producer.accumulator();
        let (batch_size, linger_ms, max_buffer_bytes) = (
            settings.batch_size.unwrap_or(acc.batch_size),
            settings.linger_ms.unwrap_or(acc.linger_ms),
            settings.max_buffer_bytes.unwrap_or(acc.max_buffer_bytes),
        );
        if (batch_size, linger_ms, max_buffer_bytes)
            != (acc.batch_size, acc.linger_ms, acc.max_buffer_bytes)
        {
            producer.set_batching(batch_size, linger_ms, max_buffer_bytes)?;
        }
        if let Some(acks) = settings.acks {
            producer.set_acks(acks);
        }
        let (tp, sent) = producer.accumulate(
            topic,
            partition,
            key.map(str::as_bytes),
            Some(value.as_bytes().to_vec()),
            now,
        )?;
        let told = match &sent {
            Some(batch) => full_said(name, batch, batch_size),
            None => self.waiting_said(name, &tp),
        };
        let ops = sent
            .into_iter()
            .map(|b| self.sent_op("accumulate", b))
            .collect();
        Ok(Batched { ops, told })
    }

    /// `flush`: every batch waiting in `name`'s accumulator is sent now.
    pub(super) fn run_flush(&mut self, name: &str) -> Result<Batched, ActionError> {
        let producer = self.producers.get_mut(name).ok_or_else(|| {
            ActionError::from(MiniKafkaError::InvalidConfig(format!(
                "unknown producer {name:?}: accumulate with it first"
            )))
        })?;
        let sent = producer.flush();
        let told = sent_said(name, &sent, "flushed", "刷出");
        let ops = sent.into_iter().map(|b| self.sent_op("flush", b)).collect();
        Ok(Batched { ops, told })
    }

    /// After the clock moved: every producer's batches whose linger ran out
    /// are sent, producers in name order (the book's `run_due_flushes`).
    pub(super) fn run_lingers(&mut self) -> Option<Batched> {
        let now = self.clock.now_ms();
        let mut sent = Vec::new();
        for (name, producer) in &mut self.producers {
            for batch in producer.run_due_flushes(now) {
                sent.push((name.clone(), batch));
            }
        }
        if sent.is_empty() {
            return None;
        }
        let mut told = Vec::new();
        let mut ops = Vec::new();
        for (name, batch) in sent {
            told.push(sent_said(
                &name,
                std::slice::from_ref(&batch),
                "linger ran out, sent",
                "攒批到期，发送",
            ));
            ops.push(self.sent_op("linger", batch));
        }
        Some(Batched {
            ops,
            told: Said::join(&told, "; ", "；"),
        })
    }

    /// A crash dropped the process: what waited in every accumulator is
    /// gone (the book's `Producer.crash`).
    pub(super) fn drop_accumulated_if_crashed(&mut self, generation_before: u64) {
        if self.cluster.generation() != generation_before {
            for producer in self.producers.values_mut() {
                producer.drop_accumulated();
            }
        }
    }

    /// A sent batch as a pending operation of this step; one the cluster
    /// refused fails with its error when the step settles (its records are
    /// lost together, as the book fails every future of the batch).
    fn sent_op(&mut self, kind: &'static str, batch: SentBatch) -> PendingOp {
        let future = batch.append.unwrap_or_else(|e| AppendFuture::ready(Err(e)));
        // Where it landed: the last `records` offsets of the leader's log.
        let offset = self.cluster.with_state(|s| {
            s.partition(&batch.tp)
                .map_or(-1, |set| set.leader().leo() - batch.records as i64)
        });
        let task = self
            .tasks
            .spawn(async move { future.await.map(OpEnd::Appended) });
        PendingOp {
            step: self.step,
            kind,
            txn: None,
            cut: None,
            appended: Some((batch.tp, offset)),
            task,
        }
    }

    /// "p: out-0 holds 2 records, 80/16384 bytes, linger until 10 ms".
    fn waiting_said(&self, name: &str, tp: &TopicPartition) -> Said {
        let acc = self.producers[name].accumulator();
        let Some(part) = acc
            .pending_partitions()
            .into_iter()
            .find(|p| p.topic_partition == *tp)
        else {
            return Said::new(
                format!("{name}: {tp} waits"),
                format!("{name}：{tp} 等待中"),
            );
        };
        let (n, bytes, size) = (part.records.len(), part.bytes, acc.batch_size);
        let until = part.first_enqueue_ms.saturating_add(acc.linger_ms);
        Said::new(
            format!(
                "{name}: {tp} holds {n} record(s), {bytes}/{size} bytes, linger until {until} ms"
            ),
            format!("{name}：{tp} 攒了 {n} 条记录，{bytes}/{size} 字节，攒批至 {until} ms"),
        )
    }
}

/// "p: out-0's batch is full (2 records, 80/68 bytes), sent".
fn full_said(name: &str, batch: &SentBatch, batch_size: u64) -> Said {
    let (tp, n) = (&batch.tp, batch.records);
    Said::new(
        format!("{name}: {tp}'s batch is full ({n} record(s), batch_size {batch_size}), sent"),
        format!("{name}：{tp} 的批次已满（{n} 条记录，batch_size {batch_size}），发送"),
    )
}

/// "p: flushed out-0 (2 records), out-1 (1 record)".
fn sent_said(name: &str, sent: &[SentBatch], en: &str, zh: &str) -> Said {
    if sent.is_empty() {
        return Said::new(
            format!("{name}: nothing waits"),
            format!("{name}：没有等待的记录"),
        );
    }
    let list: Vec<String> = sent
        .iter()
        .map(|b| format!("{} ({} record(s))", b.tp, b.records))
        .collect();
    let list_zh: Vec<String> = sent
        .iter()
        .map(|b| format!("{}（{} 条记录）", b.tp, b.records))
        .collect();
    Said::new(
        format!("{name}: {en} {}", list.join(", ")),
        format!("{name}：{zh} {}", list_zh.join("，")),
    )
}
