//! Chapter 8's hands-on experiment, "observe the visibility boundary": a
//! transactional write is visible to read_uncommitted before its marker,
//! hidden from read_committed until the COMMIT marker, and an aborted write
//! stays in the log but is filtered out.
//!
//! Run: `cargo run --example ch08_visibility`

use minikafka::engine::{
    BrokerCluster, IsolationLevel, ManualClock, MiniKafkaConfig, TopicPartition,
};

fn values(records: &[minikafka::engine::core::record::ConsumerRecord]) -> Vec<String> {
    records
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let cluster = BrokerCluster::open(MiniKafkaConfig::new(dir.path()), ManualClock::new())?;
    cluster.create_topic("out", 1, 1)?;
    let tp = TopicPartition::new("out", 0);
    let read = |isolation| cluster.fetch(&tp, 0, 10, isolation).map(|r| values(&r));

    let tx = cluster.transactions().begin("tx-1").await?;
    tx.send("out", b"pending".to_vec()).await?;
    println!(
        "before marker, read_uncommitted: {:?}",
        read(IsolationLevel::ReadUncommitted)?
    );
    println!(
        "before marker, read_committed: {:?}",
        read(IsolationLevel::ReadCommitted)?
    );
    tx.commit().await?;
    println!(
        "after commit marker: {:?}",
        read(IsolationLevel::ReadCommitted)?
    );

    let tx2 = cluster.transactions().begin("tx-2").await?;
    tx2.send("out", b"discard-me".to_vec()).await?;
    tx2.abort().await?;
    println!(
        "after abort marker: {:?}",
        read(IsolationLevel::ReadCommitted)?
    );
    Ok(())
}
