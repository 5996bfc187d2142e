//! The built-in demo cluster that plain `mk-tui` starts on: three brokers, a
//! replicated topic with data on every partition, a keyed topic, a named
//! idempotent producer, a committed offset, and a stopped broker that has
//! fallen out of the ISR, so that every pane has something to show.
//!
//! The scenario is deterministic: a [`ManualClock`] and a fixed action order.

use std::fmt::Write;
use std::path::Path;

use crate::engine::{
    AckMode, BrokerCluster, IsolationLevel, ManualClock, MiniKafkaConfig, RecordBatch, Result,
    TopicPartition,
};

/// Broker ids of the demo cluster.
pub const DEMO_BROKERS: [u32; 3] = [1, 2, 3];

/// Opens the demo cluster in `data_dir` and plays its scenario.
pub async fn open_demo(data_dir: &Path, clock: ManualClock) -> Result<BrokerCluster> {
    let config = MiniKafkaConfig::new(data_dir)
        .with_brokers(DEMO_BROKERS)
        .with_min_insync_replicas(2);
    let cluster = BrokerCluster::open(config, clock.clone())?;
    if !cluster.topics().is_empty() {
        return Ok(cluster); // a persistent directory: show it as recovered
    }
    cluster.create_topic("orders", 3, 3)?;
    cluster.create_topic("payments", 2, 2)?;

    for (i, value) in ["order-1", "order-2", "order-3", "order-4"]
        .iter()
        .enumerate()
    {
        let tp = TopicPartition::new("orders", (i % 3) as u32);
        cluster
            .append_batch(&tp, RecordBatch::of_values([*value]), AckMode::Leader)
            .await?;
    }
    cluster.replicate_all_once()?;

    let mut producer = cluster.producer("checkout")?.with_acks(AckMode::All);
    let mut acks = Vec::new();
    for (key, value) in [
        ("alice", "paid 10"),
        ("bob", "paid 25"),
        ("carol", "paid 7"),
    ] {
        acks.push(producer.send("payments", None, Some(key.as_bytes()), value)?);
    }
    cluster.replicate_all_once()?;
    for (_, ack) in acks {
        ack.await?;
    }
    cluster
        .offsets()
        .commit("billing", &TopicPartition::new("payments", 0), 1)?;

    // A committed transaction that moved input progress, an aborted one, and
    // one left open, so that the LSO stands below the HW on orders-1.
    let transactions = cluster.transactions();
    let done = transactions.begin("tx-ship").await?;
    let sent = done.send_record("orders", Some(1), None, "shipped-1");
    let (orders_1, _) = drive(&cluster, sent).await?;
    done.send_offsets("shipping", [(TopicPartition::new("payments", 0), 2)])
        .await?;
    drive(&cluster, done.commit()).await?;
    let undone = transactions.begin("tx-cancel").await?;
    drive(
        &cluster,
        undone.send_record("orders", Some(1), None, "cancelled"),
    )
    .await?;
    drive(&cluster, undone.abort()).await?;
    let open = transactions.begin("tx-open").await?;
    drive(
        &cluster,
        open.send_record("orders", Some(1), None, "in-flight"),
    )
    .await?;
    cluster
        .append_batch(
            &orders_1,
            RecordBatch::of_values(["order-6"]),
            AckMode::Leader,
        )
        .await?;

    // Broker 3 stops; the partitions it led fail over to the next replica,
    // and after the lag time it leaves every ISR.
    cluster.stop_broker(3)?;
    for tp in cluster.topic_partitions() {
        let set = cluster.replica_set(&tp)?;
        if set.leader() == 3 {
            let next = set.isr().into_iter().find(|&b| b != 3);
            if let Some(broker) = next {
                cluster.promote(&tp, broker)?;
            }
        }
    }
    clock.advance(cluster.config().replica_lag_time_ms + 1);
    cluster
        .append_batch(
            &TopicPartition::new("orders", 0),
            RecordBatch::of_values(["order-5"]),
            AckMode::Leader,
        )
        .await?;
    cluster.replicate_all_once()?;
    Ok(cluster)
}

/// Runs `fut` to completion, replicating between polls: transactional writes
/// and markers wait for acks=all.
async fn drive<T>(
    cluster: &BrokerCluster,
    fut: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let mut fut = std::pin::pin!(fut);
    loop {
        tokio::select! {
            biased;
            result = &mut fut => return result,
            () = tokio::task::yield_now() => {
                cluster.replicate_all_once()?;
            }
        }
    }
}

/// A plain-text description of the cluster's state, partition by partition.
pub fn describe(cluster: &BrokerCluster) -> Result<String> {
    let mut out = String::new();
    let now = cluster.now_ms();
    let _ = writeln!(out, "clock: {now} ms");
    for tp in cluster.topic_partitions() {
        let set = cluster.replica_set(&tp)?;
        let isr: Vec<String> = set.isr().iter().map(u32::to_string).collect();
        let _ = writeln!(
            out,
            "{tp}: leader {} (epoch {}), ISR [{}], HW {}, LSO {}",
            set.leader(),
            set.leader_epoch(),
            isr.join(","),
            set.high_watermark(),
            cluster.last_stable_offset(&tp)?
        );
        for r in set.replicas() {
            let _ = writeln!(
                out,
                "  broker {}{}: LEO {}, lag {} offsets / {} ms{}{}",
                r.broker,
                if r.is_leader { " (leader)" } else { "" },
                r.log_end_offset,
                r.lag,
                r.ms_since_fetch,
                if r.in_sync {
                    ", in sync"
                } else {
                    ", out of sync"
                },
                if r.stopped { ", stopped" } else { "" },
            );
        }
        for (label, isolation) in [
            ("read_uncommitted", IsolationLevel::ReadUncommitted),
            ("read_committed", IsolationLevel::ReadCommitted),
        ] {
            match cluster.fetch(&tp, 0, 1000, isolation) {
                Ok(records) => {
                    let values: Vec<String> = records
                        .into_iter()
                        .map(|r| {
                            String::from_utf8_lossy(r.value.as_deref().unwrap_or_default())
                                .into_owned()
                        })
                        .collect();
                    let _ = writeln!(out, "  {label}: {values:?}");
                }
                Err(e) => {
                    let _ = writeln!(out, "  {label}: unavailable ({e})");
                }
            }
        }
    }
    for tx in cluster.transactions().all() {
        let parts: Vec<String> = tx
            .first_offsets
            .iter()
            .map(|(tp, o)| format!("{tp}@{o}"))
            .collect();
        let _ = writeln!(
            out,
            "transaction {}: {} [{}]",
            tx.id,
            tx.state,
            parts.join(", ")
        );
    }
    for (group, offsets) in cluster.offsets().all() {
        for (tp, offset) in offsets {
            let _ = writeln!(out, "group {group}: {tp} committed at {offset}");
        }
    }
    Ok(out)
}
