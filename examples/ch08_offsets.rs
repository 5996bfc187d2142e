//! Chapter 8's exercise: `send_offsets` only stages consumer progress; the
//! committed offset is none before `commit` and 7 after it.
//!
//! Run: `cargo run --example ch08_offsets`

use minikafka::engine::{BrokerCluster, ManualClock, MiniKafkaConfig, TopicPartition};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let cluster = BrokerCluster::open(MiniKafkaConfig::new(dir.path()), ManualClock::new())?;
    cluster.create_topic("in", 1, 1)?;
    cluster.create_topic("out", 1, 1)?;
    let input_tp = TopicPartition::new("in", 0);

    let tx = cluster.transactions().begin("tx-1").await?;
    tx.send("out", b"processed".to_vec()).await?;
    tx.send_offsets("workers", [(input_tp.clone(), 7)]).await?;
    let committed = || match cluster.offsets().get("workers", &input_tp) {
        Some(offset) => offset.to_string(),
        None => "None".to_string(),
    };
    println!("committed offset before commit: {}", committed());
    tx.commit().await?;
    println!("committed offset after commit: {}", committed());
    Ok(())
}
