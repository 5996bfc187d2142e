//! The book's leader-failure lab (SPEC E6): an `acks=1` write acknowledged by
//! the leader alone is lost when a follower that never fetched it is promoted
//! and the old leader rejoins and truncates its divergent tail.
//!
//! Run: `cargo run --example leader_failure`

use minikafka::engine::{
    AckMode, BrokerCluster, IsolationLevel, ManualClock, MiniKafkaConfig, RecordBatch,
    TopicPartition,
};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let config = MiniKafkaConfig::new(dir.path()).with_brokers([1, 2]);
    let cluster = BrokerCluster::open(config, ManualClock::new())?;
    cluster.create_topic("lab", 1, 2)?;
    let tp = TopicPartition::new("lab", 0);

    // The leader (broker 1) appends and acknowledges on its own.
    let ack = cluster
        .append_batch(
            &tp,
            RecordBatch::of_values(["acked-by-leader-only"]),
            AckMode::Leader,
        )
        .await?;
    println!("acknowledged offset: {}", ack.base_offset().unwrap_or(-1));
    // The follower has not fetched, so the HW has not moved.
    println!(
        "consumer-visible end (HW): {}",
        cluster.replica_set(&tp)?.high_watermark()
    );

    // The leader fails before the follower fetches; the follower is promoted.
    cluster.stop_broker(1)?;
    cluster.promote(&tp, 2)?;
    // The old leader comes back as a follower and truncates its divergent tail.
    cluster.start_broker(1)?;
    cluster.replicate_all_once()?;

    let records = cluster.fetch(&tp, 0, 100, IsolationLevel::ReadUncommitted)?;
    println!("records after failover: {}", records.len());
    Ok(())
}
